"""The model providers behind :mod:`shared.llm.engine`: the Anthropic SDK and any
OpenAI-compatible server. Claude is asked for a structured answer by a forced tool
call; an OpenAI-compatible server by the best of three *structured modes* it supports
(a forced tool call, ``response_format`` json_schema, or JSON asked for in the system
prompt and parsed leniently), falling back from one to the next the first time the
server refuses one (:class:`OpenAICompatibleProvider`). Reasoning a model writes
(``<think>`` blocks, ``reasoning_content``) never reaches a caller.

A vendor's errors are translated here, where it is called, into the project's own
(:class:`LLMAuthError`, :class:`LLMUnavailable`, :class:`LLMError`), by their SDK types,
never by their text.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from shared.platform.dates import retry_after_s
from shared.platform.errors import PermanentError, TransientError

DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-5-5"

log = logging.getLogger(__name__)

StructuredMode = Literal["tools", "json_schema", "prompt"]
STRUCTURED_MODES: tuple[StructuredMode, ...] = ("tools", "json_schema", "prompt")
"""The OpenAI-compatible provider's ways of asking for a structured answer, best first."""


# -- errors --------------------------------------------------------------------


class LLMError(PermanentError):
    """A call the provider refused for a reason retrying cannot fix (400, 403...)."""


class LLMAuthError(LLMError):
    """The provider rejected the credentials; the message names the setting to fix."""


class LLMUnavailable(TransientError):
    """Rate limited, overloaded, failing, unreachable or too slow, after the client's own
    retries. A job's binding to its own engine does not raise it: it answers offline
    from then on (:mod:`shared.llm.engine`, "degrade, don't fail"); a tool's does."""


class LLMInvalidOutput(Exception):
    """The model answered, but not with what was asked (junk, truncated, wrong shape).
    Callers fall back to their offline answer."""


class LLMContextExceeded(LLMInvalidOutput, LLMError):
    """A prompt too long for the model's context window: refused before it was sent (its
    estimate leaves no room for the answer) or by the server (a 400 naming the context
    length). Never a truncated prompt: a caller that batches splits the batch and asks
    again; any other falls back to its offline answer, as for an unusable answer (it is
    one, and a permanent :class:`LLMError` too: the same prompt would be refused again)."""

    def __init__(self, message: str, *, window: int | None = None, estimate: int | None = None) -> None:
        super().__init__(message)
        self.window = window
        self.estimate = estimate


# -- providers -----------------------------------------------------------------


@dataclass
class RawAnswer:
    """What a provider returns: the structured input or text, and what it cost."""

    data: Any
    input_tokens: int
    output_tokens: int
    model: str
    truncated: bool = False
    earlier: list[RawAnswer] = field(default_factory=list)
    """Answers to this call's earlier requests that were billed but not used: a reply
    that refused a structured mode before the call was made again in the next one.
    Their tokens are the job's too (the engine records each as a call)."""


Turn = tuple[str, str]  # (role, text): "assistant" or "user"


class Provider(Protocol):
    name: str
    model: str

    async def structured(self, schema: dict[str, Any], *, system: str, prompt: str, tool_name: str,
                         tool_description: str, max_tokens: int, followup: list[Turn] | None = None) -> RawAnswer:
        """``followup``: turns after the user's ``prompt`` (a re-ask after an invalid answer)."""

    async def text(self, *, system: str, prompt: str, max_tokens: int) -> RawAnswer: ...


class AnthropicProvider:
    """Claude through the official SDK; structured output by a forced tool call."""

    name = "anthropic"

    def __init__(self, *, api_key: str, model: str, base_url: str | None, timeout_s: float, max_retries: int,
                 max_in_flight: int = 0, context_tokens: int = 0) -> None:
        import anthropic

        self._sdk = anthropic
        self.model = model
        self.base_url = base_url
        self.max_in_flight = max_in_flight  # calls in flight to this server per process (0: no limit of its own)
        self.context_tokens = context_tokens  # ANTHROPIC_CONTEXT_TOKENS (0: LLM_CONTEXT_TOKENS, else Claude's)
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=max_retries,
        )

    async def structured(self, schema: dict[str, Any], *, system: str, prompt: str, tool_name: str,
                         tool_description: str, max_tokens: int, followup: list[Turn] | None = None) -> RawAnswer:
        message = await self._call(
            system=system, prompt=prompt, max_tokens=max_tokens, followup=followup,
            tools=[{"name": tool_name, "description": tool_description, "input_schema": schema}],
            tool_choice={"type": "tool", "name": tool_name},
        )
        blocks = [b for b in message.content if b.type == "tool_use" and b.name == tool_name]
        return RawAnswer(
            data=blocks[0].input if blocks else None,
            input_tokens=message.usage.input_tokens, output_tokens=message.usage.output_tokens,
            model=message.model, truncated=message.stop_reason == "max_tokens",
        )

    async def text(self, *, system: str, prompt: str, max_tokens: int) -> RawAnswer:
        message = await self._call(system=system, prompt=prompt, max_tokens=max_tokens)
        return RawAnswer(
            data=strip_reasoning("".join(b.text for b in message.content if b.type == "text")),
            input_tokens=message.usage.input_tokens, output_tokens=message.usage.output_tokens,
            model=message.model, truncated=message.stop_reason == "max_tokens",
        )

    async def _call(self, *, system: str, prompt: str, max_tokens: int, followup: list[Turn] | None = None,
                    **extra: Any) -> Any:
        sdk = self._sdk
        messages = [{"role": "user", "content": prompt}, *({"role": r, "content": t} for r, t in followup or [])]
        try:
            return await self._client.messages.create(
                model=self.model, max_tokens=max_tokens, system=system, messages=messages, **extra,
            )
        except sdk.APIError as exc:
            raise _translate(sdk, exc, who="Anthropic", key_var="ANTHROPIC_API_KEY",
                             model_hint=f"ANTHROPIC_MODEL ({self.model!r})") from exc


class OpenAICompatibleProvider:
    """An OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, llama.cpp,
    LM Studio). A structured answer is asked for in the first of these modes the server
    supports:

    - ``tools``: a forced function call whose parameters are the schema (JSON answered in
      ``content`` by a server that ignores ``tool_choice`` is accepted too);
    - ``json_schema``: ``response_format: {"type": "json_schema", ...}``, the answer in
      ``content``;
    - ``prompt``: the schema in the system prompt, the answer in ``content``, parsed
      leniently (:func:`parse_json_lenient`); the engine validates it and re-asks once.

    With ``structured_mode="auto"`` the provider starts with ``tools``; the first refusal
    of a mode (an error whose message names it, e.g. Ollama's "does not support tools",
    or a complete reply with neither a tool call nor parseable JSON) moves this provider
    to the next mode for the rest of the process, logged once with the server's message,
    and the refused call is made again in that mode at once. A named mode is used as is.
    Reasoning (``<think>`` blocks in ``content``, ``reasoning_content``) is dropped."""

    name = "openai"

    def __init__(self, *, api_key: str, model: str, base_url: str | None, timeout_s: float, max_retries: int,
                 structured_mode: str = "auto", max_in_flight: int = 0, context_tokens: int = 0) -> None:
        import openai

        if structured_mode != "auto" and structured_mode not in STRUCTURED_MODES:
            raise ValueError(f"structured_mode must be auto or one of {STRUCTURED_MODES}, not {structured_mode!r}")
        self._sdk = openai
        self.model = model
        self.base_url = base_url
        self.max_in_flight = max_in_flight  # calls in flight to this server per process (0: no limit of its own)
        self.context_tokens = context_tokens  # OPENAI_CONTEXT_TOKENS (0: LLM_CONTEXT_TOKENS, else asked)
        self.fixed_mode = structured_mode != "auto"
        self.mode: StructuredMode = "tools" if structured_mode == "auto" else structured_mode  # type: ignore[assignment]
        self._client = openai.AsyncOpenAI(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=max_retries)

    async def structured(self, schema: dict[str, Any], *, system: str, prompt: str, tool_name: str,
                         tool_description: str, max_tokens: int, followup: list[Turn] | None = None) -> RawAnswer:
        earlier: list[RawAnswer] = []
        while True:
            mode = self.mode
            try:
                answer = await self._structured_in(mode, schema, system=system, prompt=prompt, tool_name=tool_name,
                                                   tool_description=tool_description, max_tokens=max_tokens,
                                                   followup=followup)
            except self._sdk.APIStatusError as exc:
                if too_long(exc) or not self._refuses(mode, exc):
                    raise self._translated(exc) from exc
                self._demote(mode, f"{exc.status_code}: {_detail(exc)}")
                continue
            except self._sdk.APIError as exc:
                raise self._translated(exc) from exc
            if answer.data is None and not answer.truncated and self._demote(mode, "a reply with no tool call and no JSON"
                                                                             if mode == "tools" else "a reply with no JSON"):
                earlier.append(answer)
                continue
            answer.earlier = earlier + answer.earlier
            return answer

    async def _structured_in(self, mode: StructuredMode, schema: dict[str, Any], *, system: str, prompt: str,
                             tool_name: str, tool_description: str, max_tokens: int,
                             followup: list[Turn] | None) -> RawAnswer:
        """One request for a structured answer in ``mode``; SDK errors pass through."""
        if mode == "tools":
            extra: dict[str, Any] = {
                "tools": [{"type": "function",
                           "function": {"name": tool_name, "description": tool_description, "parameters": schema}}],
                "tool_choice": {"type": "function", "function": {"name": tool_name}},
            }
        elif mode == "json_schema":
            extra = {"response_format": {"type": "json_schema", "json_schema": {
                "name": tool_name, "description": tool_description, "schema": schema}}}
            system = (f"{system}\n\nAnswer with one JSON object, the input of `{tool_name}` "
                      "(the response format's schema), and nothing else.")
        else:
            extra = {}
            system = f"{system}\n\n{schema_instructions(schema, tool_name=tool_name, description=tool_description)}"
        response = await self._create(system=system, prompt=prompt, max_tokens=max_tokens, followup=followup, **extra)
        choice = response.choices[0] if response.choices else None
        data: Any = None
        if choice is not None:
            calls = [c for c in (choice.message.tool_calls or []) if getattr(c, "function", None)]
            named = [c for c in calls if c.function.name == tool_name] or calls
            if named:
                data = _json_or_none(named[0].function.arguments)
            elif choice.message.content:
                data = parse_json_lenient(choice.message.content)
        return self._answer(response, data, choice)

    def _refuses(self, mode: StructuredMode, exc: Any) -> bool:
        """``exc`` (an error status) is the server refusing ``mode``, by what its message
        names; auth, permission and rate-limit errors never are."""
        if self.fixed_mode or mode == "prompt" or exc.status_code in (401, 403, 429):
            return False
        pattern = _REFUSES_TOOLS if mode == "tools" else _REFUSES_RESPONSE_FORMAT
        return bool(pattern.search(_detail(exc)))

    def _demote(self, mode: StructuredMode, reason: str) -> bool:
        """Move to the mode after ``mode`` (unless a fixed mode, or the last); True when
        the call should be made again. Said once: concurrent calls refused in the same
        mode find the provider already moved on."""
        if self.fixed_mode or mode == "prompt":
            return False
        if self.mode == mode:
            self.mode = STRUCTURED_MODES[STRUCTURED_MODES.index(mode) + 1]
            how = {"json_schema": "response_format json_schema", "prompt": "JSON asked for in the prompt"}[self.mode]
            log.warning("the OpenAI-compatible server at %s (model %s) refused structured output by %s (%s): using %s "
                        "from now on (LLM_STRUCTURED_MODE sets a mode)", self.base_url or "api.openai.com", self.model,
                        "a forced tool call" if mode == "tools" else "response_format json_schema", _one_line(reason),
                        how)
        return True

    async def text(self, *, system: str, prompt: str, max_tokens: int) -> RawAnswer:
        try:
            response = await self._create(system=system, prompt=prompt, max_tokens=max_tokens)
        except self._sdk.APIError as exc:
            raise self._translated(exc) from exc
        choice = response.choices[0] if response.choices else None
        return self._answer(response, strip_reasoning(choice.message.content or "") if choice else "", choice)

    def _answer(self, response: Any, data: Any, choice: Any) -> RawAnswer:
        usage = response.usage
        return RawAnswer(
            data=data,
            input_tokens=(usage.prompt_tokens or 0) if usage else 0,
            output_tokens=(usage.completion_tokens or 0) if usage else 0,
            model=response.model or self.model,
            truncated=bool(choice is not None and choice.finish_reason == "length"),
        )

    async def _create(self, *, system: str, prompt: str, max_tokens: int, followup: list[Turn] | None = None,
                      **extra: Any) -> Any:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt},
                    *({"role": r, "content": t} for r, t in followup or [])]
        return await self._client.chat.completions.create(
            model=self.model, max_tokens=max_tokens, messages=messages, **extra,
        )

    def _translated(self, exc: Exception) -> Exception:
        return _translate(self._sdk, exc, who="the OpenAI-compatible server at OPENAI_BASE_URL", key_var="OPENAI_API_KEY",
                          model_hint=f"OPENAI_MODEL ({self.model!r}) and OPENAI_BASE_URL")


# An error message that names what a mode needs: the server does not do it.
_REFUSES_TOOLS = re.compile(r"\btools?\b|tool[ _-]?(choice|call|use)|function[ _-]?call", re.I)
_REFUSES_RESPONSE_FORMAT = re.compile(r"response[ _-]?format|json[ _-]?schema|structured[ _-]?output|"
                                      r"guided[ _-]?(json|decoding)|grammar", re.I)


def schema_instructions(schema: dict[str, Any], *, tool_name: str, description: str) -> str:
    """The prompt mode's addition to the system prompt: answer one JSON object matching
    ``schema``, which is given in a ``<json_schema>`` block."""
    return (f"You have no tools. Answer with one JSON object and nothing else: the input of `{tool_name}` "
            f"({_one_line(description, 200)}), matching the JSON schema below. Where you are asked to call "
            f"`{tool_name}`, answer with that JSON object instead.\n"
            f"<json_schema name=\"{tool_name}\">\n{json.dumps(schema, separators=(',', ':'))}\n</json_schema>")


def _translate(sdk: Any, exc: Exception, *, who: str, key_var: str, model_hint: str) -> Exception:
    """Our error for one of the SDK's typed errors (both SDKs share the class names).
    Rate limits, server errors, 529, connection errors and timeouts reach here only once
    the SDK's own retries are spent: they are :class:`LLMUnavailable`, on which a job's
    model work goes on offline; other 4xx are permanent."""
    detail = _detail(exc)
    if isinstance(exc, sdk.AuthenticationError):
        return LLMAuthError(f"{who} rejected the API key (401): check {key_var} ({detail})")
    if isinstance(exc, sdk.PermissionDeniedError):
        return LLMError(f"{who} refused the request (403): the API key lacks permission ({detail})")
    if isinstance(exc, sdk.NotFoundError):
        return LLMError(f"{who} has no such model or endpoint (404): check {model_hint} ({detail})")
    if isinstance(exc, sdk.BadRequestError):
        if too_long(exc):
            return LLMContextExceeded(f"{who} refused the prompt as longer than its context window (400): {detail}",
                                      window=_server_window(exc))
        return LLMError(f"{who} rejected the request (400): {detail}")
    if isinstance(exc, sdk.APITimeoutError):
        return LLMUnavailable(f"{who} did not answer within its time limit (LLM_TIMEOUT_S, or OPENAI_TIMEOUT_S / "
                              "ANTHROPIC_TIMEOUT_S), after retries")
    if isinstance(exc, sdk.APIConnectionError):
        return LLMUnavailable(f"cannot reach {who}: {exc}")
    if isinstance(exc, sdk.APIStatusError):
        if exc.status_code == 413:  # Claude's request_too_large: the request is more than the API takes
            return LLMContextExceeded(f"{who} refused the request as too large (413): {detail}")
        if exc.status_code == 429 or exc.status_code >= 500:
            return LLMUnavailable(f"{who} is unavailable ({exc.status_code}) after retries: {detail}",
                                  retry_after_s=_retry_after(exc))
        return LLMError(f"{who} rejected the request ({exc.status_code}): {detail}")
    return LLMError(f"{who}: {type(exc).__name__}: {detail}")


# Servers say "too long for the context" in no common typed way: OpenAI sends the code
# context_length_exceeded, llama.cpp the type exceed_context_size_error, vLLM and Claude
# only a message ("maximum context length is 4096 tokens", "prompt is too long"). The
# code and type are read first; the message is the last resort, as for tool refusals.
_TOO_LONG_CODES = {"context_length_exceeded", "exceed_context_size_error", "string_above_max_length"}
_TOO_LONG = re.compile(r"context[ _-]?(length|window|size)|maximum context|prompt is too long|too many tokens|"
                       r"exceeds? the (available )?context", re.I)


def too_long(exc: Any) -> bool:
    """``exc`` (a 400 from the SDK) is the server refusing a prompt longer than its window."""
    body = getattr(exc, "body", None)
    err = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(err, dict) and (err.get("code") in _TOO_LONG_CODES or err.get("type") in _TOO_LONG_CODES):
        return True
    return getattr(exc, "status_code", None) in (400, 413) and bool(_TOO_LONG.search(_detail(exc)))


_WINDOW_SAID = re.compile(r"maximum context length is (\d+)|> (\d+) maximum|context (?:size|window) of (\d+)", re.I)


def _server_window(exc: Any) -> int | None:
    """The window a refusal for length names: llama.cpp's ``n_ctx``, or the number in
    vLLM's and OpenAI's "maximum context length is N" or Claude's "> N maximum"."""
    body = getattr(exc, "body", None)
    err = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(err, dict) and isinstance(err.get("n_ctx"), int):
        return int(err["n_ctx"])
    found = _WINDOW_SAID.search(_detail(exc))
    return int(next(g for g in found.groups() if g)) if found else None


def _detail(exc: Any) -> str:
    """The provider's own error message from its typed error body, if it sent one."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return err["message"]
    return type(exc).__name__


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    return retry_after_s(response.headers.get("retry-after")) if response is not None else None


def _json_or_none(text: str | None) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


# -- reasoning and lenient JSON ----------------------------------------------------

_THINK_BLOCK = re.compile(r"<(think|thinking)>.*?</\1>", re.S | re.I)
_THINK_OPEN = re.compile(r"\s*<(think|thinking)>", re.I)
_THINK_CLOSE = re.compile(r"</(think|thinking)>", re.I)
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\n(.*?)```", re.S)


def strip_reasoning(text: str) -> str:
    """``text`` without the reasoning a model wrote into it: every ``<think>…</think>``
    (or ``<thinking>``) block; a leading block left open (the reply was cut while
    thinking: nothing after it is an answer); and everything up to a stray closing tag
    (chat templates that open the block in the prompt, as DeepSeek-R1's do)."""
    text = _THINK_BLOCK.sub("", text)
    if _THINK_OPEN.match(text):
        return ""
    closing = list(_THINK_CLOSE.finditer(text))
    if closing:
        text = text[closing[-1].end():]
    return text.strip()


def parse_json_lenient(text: str | None) -> Any:
    """The JSON value a model answered in ``text``, or None: reasoning stripped, then the
    whole text, else a fenced block (```json first), else the first balanced JSON object
    in the text that parses (prose before and after it is ignored)."""
    if not text:
        return None
    text = strip_reasoning(text)
    whole = _json_or_none(text)
    if whole is not None:
        return whole
    fences = sorted(_FENCE.finditer(text), key=lambda m: m.group(1).lower() != "json")
    for m in fences:
        value = _json_or_none(m.group(2).strip())
        if value is not None:
            return value
    return _first_object(text)


def _first_object(text: str) -> Any:
    """The first ``{…}`` in ``text`` whose braces balance (outside strings) and that
    parses as JSON, or None."""
    start = text.find("{")
    while start != -1:
        depth, in_string, escaped = 0, False, False
        for i in range(start, len(text)):
            ch = text[i]
            if in_string:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    value = _json_or_none(text[start:i + 1])
                    if value is not None:
                        return value
                    break
        start = text.find("{", start + 1)
    return None
