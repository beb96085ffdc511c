"""The model providers behind :mod:`shared.llm.engine`: the Anthropic SDK and any
OpenAI-compatible server, each asked for a structured answer by a forced tool call.

A vendor's errors are translated here, where it is called, into the project's own
(:class:`LLMAuthError`, :class:`LLMUnavailable`, :class:`LLMError`), by their SDK types,
never by their text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol

from shared.platform.dates import retry_after_s
from shared.platform.errors import PermanentError, TransientError

DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-5-5"


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


# -- providers -----------------------------------------------------------------


@dataclass
class RawAnswer:
    """What a provider returns: the structured input or text, and what it cost."""

    data: Any
    input_tokens: int
    output_tokens: int
    model: str
    truncated: bool = False


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

    def __init__(self, *, api_key: str, model: str, base_url: str | None, timeout_s: float, max_retries: int) -> None:
        import anthropic

        self._sdk = anthropic
        self.model = model
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
            data="".join(b.text for b in message.content if b.type == "text"),
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
    """An OpenAI-compatible chat-completions server; structured output by a forced
    function call, with JSON in ``content`` accepted from servers that ignore tools."""

    name = "openai"

    def __init__(self, *, api_key: str, model: str, base_url: str | None, timeout_s: float, max_retries: int) -> None:
        import openai

        self._sdk = openai
        self.model = model
        self._client = openai.AsyncOpenAI(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=max_retries)

    async def structured(self, schema: dict[str, Any], *, system: str, prompt: str, tool_name: str,
                         tool_description: str, max_tokens: int, followup: list[Turn] | None = None) -> RawAnswer:
        response = await self._call(
            system=system, prompt=prompt, max_tokens=max_tokens, followup=followup,
            tools=[{"type": "function", "function": {"name": tool_name, "description": tool_description, "parameters": schema}}],
            tool_choice={"type": "function", "function": {"name": tool_name}},
        )
        choice = response.choices[0] if response.choices else None
        data: Any = None
        if choice is not None:
            calls = [c for c in (choice.message.tool_calls or []) if getattr(c, "function", None)]
            named = [c for c in calls if c.function.name == tool_name] or calls
            if named:
                data = _json_or_none(named[0].function.arguments)
            elif choice.message.content:
                data = _json_or_none(_strip_fence(choice.message.content))
        return self._answer(response, data, choice)

    async def text(self, *, system: str, prompt: str, max_tokens: int) -> RawAnswer:
        response = await self._call(system=system, prompt=prompt, max_tokens=max_tokens)
        choice = response.choices[0] if response.choices else None
        return self._answer(response, (choice.message.content or "") if choice else "", choice)

    def _answer(self, response: Any, data: Any, choice: Any) -> RawAnswer:
        usage = response.usage
        return RawAnswer(
            data=data,
            input_tokens=(usage.prompt_tokens or 0) if usage else 0,
            output_tokens=(usage.completion_tokens or 0) if usage else 0,
            model=response.model or self.model,
            truncated=bool(choice is not None and choice.finish_reason == "length"),
        )

    async def _call(self, *, system: str, prompt: str, max_tokens: int, followup: list[Turn] | None = None,
                    **extra: Any) -> Any:
        sdk = self._sdk
        messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt},
                    *({"role": r, "content": t} for r, t in followup or [])]
        try:
            return await self._client.chat.completions.create(
                model=self.model, max_tokens=max_tokens, messages=messages, **extra,
            )
        except sdk.APIError as exc:
            raise _translate(sdk, exc, who="the OpenAI-compatible server at OPENAI_BASE_URL", key_var="OPENAI_API_KEY",
                             model_hint=f"OPENAI_MODEL ({self.model!r}) and OPENAI_BASE_URL") from exc


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
        return LLMError(f"{who} rejected the request (400): {detail}")
    if isinstance(exc, sdk.APITimeoutError):
        return LLMUnavailable(f"{who} did not answer within LLM_TIMEOUT_S, after retries")
    if isinstance(exc, sdk.APIConnectionError):
        return LLMUnavailable(f"cannot reach {who}: {exc}")
    if isinstance(exc, sdk.APIStatusError):
        if exc.status_code == 429 or exc.status_code >= 500:
            return LLMUnavailable(f"{who} is unavailable ({exc.status_code}) after retries: {detail}",
                                  retry_after_s=_retry_after(exc))
        return LLMError(f"{who} rejected the request ({exc.status_code}): {detail}")
    return LLMError(f"{who}: {type(exc).__name__}: {detail}")


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


def _strip_fence(text: str) -> str:
    text = text.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    return text
