"""The LLM layer: one small interface for every stage's model work.

A stage asks for structured output (a pydantic model) or plain text and always passes
the answer of the deterministic offline engine for that call. Which engine answers is
``LLM_PROVIDER``:

- ``anthropic``: the official SDK's async client; structured output by a *forced tool
  call* whose ``input_schema`` is the model's JSON schema. The SDK's own retry loop
  retries 408/409/429/5xx/529 and timeouts, honouring ``retry-after``
  (``LLM_MAX_RETRIES`` times); we never match on error text, only on its typed errors.
- ``openai``: any OpenAI-compatible chat-completions server (vLLM, Ollama, llama.cpp)
  through the openai SDK (same retry machinery). Tool arguments arrive as a JSON
  string; some servers ignore ``tool_choice`` and answer JSON in ``content`` or set
  ``finish_reason`` wrongly, so neither is trusted.
- ``offline``: no network; the caller's offline answer is returned as is.
- ``auto`` (default): ``anthropic`` when ``ANTHROPIC_API_KEY`` is set, else ``offline``.

Every model call is recorded (stage, model, tokens in/out, latency) on the job-bound
:class:`JobLLM`, which the stage runner folds into the envelope's usage. A job's token
budget (``RESEARCH_MAX_TOKENS_PER_JOB``) is checked before each call: once spent, calls
are answered by the offline engine and the envelope is noted, so scoring stops
researching and synthesis reports the result as partial. One call may overshoot the
budget by at most its ``max_tokens`` of output.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from shared.envelope import JobEnvelope, StageUsage, Usage
from shared.errors import ConfigurationError, PermanentError, TransientError

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

BUDGET_NOTE = "token budget exhausted"  # in envelope.notes once a job's budget is spent
DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-5-5"


# -- errors --------------------------------------------------------------------


class LLMError(PermanentError):
    """A call the provider refused for a reason retrying cannot fix (400, 403...)."""


class LLMAuthError(LLMError):
    """The provider rejected the credentials; the message names the setting to fix."""


class LLMUnavailable(TransientError):
    """Rate limited, overloaded, failing or too slow, after the client's own retries."""


class LLMInvalidOutput(Exception):
    """The model answered, but not with what was asked (junk, truncated, wrong shape).
    Callers fall back to their offline answer, as seed 000 does for sub-questions."""


# -- providers -----------------------------------------------------------------


@dataclass
class RawAnswer:
    """What a provider returns: the structured input or text, and what it cost."""

    data: Any
    input_tokens: int
    output_tokens: int
    model: str
    truncated: bool = False


class Provider(Protocol):
    name: str
    model: str

    async def structured(self, schema: dict[str, Any], *, system: str, prompt: str, tool_name: str,
                         tool_description: str, max_tokens: int) -> RawAnswer: ...

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
                         tool_description: str, max_tokens: int) -> RawAnswer:
        message = await self._call(
            system=system, prompt=prompt, max_tokens=max_tokens,
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

    async def _call(self, *, system: str, prompt: str, max_tokens: int, **extra: Any) -> Any:
        sdk = self._sdk
        try:
            return await self._client.messages.create(
                model=self.model, max_tokens=max_tokens, system=system,
                messages=[{"role": "user", "content": prompt}], **extra,
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
                         tool_description: str, max_tokens: int) -> RawAnswer:
        response = await self._call(
            system=system, prompt=prompt, max_tokens=max_tokens,
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

    async def _call(self, *, system: str, prompt: str, max_tokens: int, **extra: Any) -> Any:
        sdk = self._sdk
        try:
            return await self._client.chat.completions.create(
                model=self.model, max_tokens=max_tokens,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": prompt}], **extra,
            )
        except sdk.APIError as exc:
            raise _translate(sdk, exc, who="the OpenAI-compatible server at OPENAI_BASE_URL", key_var="OPENAI_API_KEY",
                             model_hint=f"OPENAI_MODEL ({self.model!r}) and OPENAI_BASE_URL") from exc


def _translate(sdk: Any, exc: Exception, *, who: str, key_var: str, model_hint: str) -> Exception:
    """Our error for one of the SDK's typed errors (both SDKs share the class names).
    Rate limits, server errors, 529 and timeouts reach here only once the SDK's own
    retries are spent, so they are transient for the stage runner; other 4xx are not."""
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
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


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


# -- the engine and its per-job binding ------------------------------------------


@dataclass
class LLMCall:
    stage: str
    model: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    ok: bool = True


class LLMEngine:
    """One per process: the provider, and the cap on calls in flight."""

    def __init__(self, provider: Provider | None, *, max_concurrency: int = 4, max_tokens_per_job: int = 200_000) -> None:
        self.provider = provider
        self.max_tokens_per_job = max_tokens_per_job
        self._slots = asyncio.Semaphore(max_concurrency)

    @property
    def offline(self) -> bool:
        return self.provider is None

    @property
    def label(self) -> str:
        return "offline" if self.provider is None else f"{self.provider.name}:{self.provider.model}"

    def bind(self, stage: str, usage: Usage) -> JobLLM:
        return JobLLM(self, stage, usage)


@dataclass
class JobLLM:
    """The engine bound to one job at one stage: counts tokens against the job's
    budget and records every call."""

    engine: LLMEngine
    stage: str
    base_usage: Usage
    calls: list[LLMCall] = field(default_factory=list)
    budget_hit: bool = False

    @property
    def offline(self) -> bool:
        return self.engine.offline

    @property
    def label(self) -> str:
        return self.engine.label

    def tokens_used(self) -> int:
        job = self.base_usage.input_tokens + self.base_usage.output_tokens
        return job + sum(c.input_tokens + c.output_tokens for c in self.calls)

    @property
    def budget_spent(self) -> bool:
        """The job has used RESEARCH_MAX_TOKENS_PER_JOB tokens (or more)."""
        return self.tokens_used() >= self.engine.max_tokens_per_job

    def _budget_left(self) -> bool:
        if self.budget_spent:
            if not self.budget_hit:
                log.warning("token budget of %d spent: %s stage answers offline", self.engine.max_tokens_per_job, self.stage)
            self.budget_hit = True
            return False
        return True

    async def structured(self, schema: type[T], *, system: str, prompt: str, tool_name: str,
                         offline: Callable[[], T], tool_description: str = "", max_tokens: int = 2048) -> T:
        """The model's answer as ``schema``; the offline answer when no model is used.
        Raises :class:`LLMInvalidOutput` when the model's answer does not validate."""
        provider = self.engine.provider
        if provider is None or not self._budget_left():
            return offline()
        raw = await self._call(lambda: provider.structured(
            schema.model_json_schema(), system=system, prompt=prompt, tool_name=tool_name,
            tool_description=tool_description or schema.__doc__ or tool_name, max_tokens=max_tokens,
        ))
        if raw.data is None:
            raise LLMInvalidOutput(f"{raw.model} did not call {tool_name}")
        try:
            return schema.model_validate(raw.data)
        except ValidationError as exc:
            cut = " (output truncated at max_tokens)" if raw.truncated else ""
            raise LLMInvalidOutput(f"{raw.model} answered {tool_name} with invalid input{cut}: {exc.error_count()} error(s)") from exc

    async def text(self, *, system: str, prompt: str, offline: Callable[[], str], max_tokens: int = 2048) -> str:
        provider = self.engine.provider
        if provider is None or not self._budget_left():
            return offline()
        raw = await self._call(lambda: provider.text(system=system, prompt=prompt, max_tokens=max_tokens))
        if not isinstance(raw.data, str) or not raw.data.strip():
            raise LLMInvalidOutput(f"{raw.model} returned no text")
        return raw.data

    async def _call(self, go: Callable[[], Any]) -> RawAnswer:
        async with self.engine._slots:
            started = time.monotonic()
            try:
                raw: RawAnswer = await go()
            except Exception:
                self.calls.append(LLMCall(self.stage, self.label, 0, 0, time.monotonic() - started, ok=False))
                raise
        self.calls.append(LLMCall(self.stage, raw.model, raw.input_tokens, raw.output_tokens, time.monotonic() - started))
        return raw

    # -- folding into the envelope ------------------------------------------------

    def usage(self) -> Usage:
        """The job's usage: what it had before this stage plus this stage's calls."""
        by_stage = {k: v.model_copy() for k, v in self.base_usage.by_stage.items()}
        if self.calls:
            mine = by_stage.setdefault(self.stage, StageUsage())
            for c in self.calls:
                mine.input_tokens += c.input_tokens
                mine.output_tokens += c.output_tokens
                mine.calls += 1
                mine.latency_s = round(mine.latency_s + c.latency_s, 3)
                if c.model not in mine.models:
                    mine.models.append(c.model)
        return Usage(by_stage=by_stage)

    def apply(self, envelope: JobEnvelope) -> JobEnvelope:
        """``envelope`` with this stage's usage (idempotent) and the budget note."""
        notes = envelope.notes
        if self.budget_hit and BUDGET_NOTE not in notes:
            notes = [*notes, BUDGET_NOTE]
        return envelope.model_copy(update={"usage": self.usage(), "notes": notes})


def make_engine(settings: Any) -> LLMEngine:
    """The engine ``LLM_PROVIDER`` names (``settings`` is a StageSettings)."""
    choice = settings.llm_provider
    key = settings.anthropic_api_key.get_secret_value() if settings.anthropic_api_key else ""
    if choice == "auto":
        choice = "anthropic" if key else "offline"
    provider: Provider | None
    if choice == "anthropic":
        if not key:
            raise ConfigurationError("LLM_PROVIDER=anthropic needs ANTHROPIC_API_KEY")
        provider = AnthropicProvider(
            api_key=key, model=settings.anthropic_model, base_url=settings.anthropic_base_url,
            timeout_s=settings.llm_timeout_s, max_retries=settings.llm_max_retries,
        )
    elif choice == "openai":
        if not settings.openai_model:
            raise ConfigurationError("LLM_PROVIDER=openai needs OPENAI_MODEL (the model name the server serves)")
        provider = OpenAICompatibleProvider(
            api_key=settings.openai_api_key.get_secret_value() if settings.openai_api_key else "unused",
            model=settings.openai_model, base_url=settings.openai_base_url,
            timeout_s=settings.llm_timeout_s, max_retries=settings.llm_max_retries,
        )
    else:
        provider = None
    return LLMEngine(provider, max_concurrency=settings.llm_max_concurrency,
                     max_tokens_per_job=settings.research_max_tokens_per_job)
