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
  ``finish_reason`` wrongly, so neither is trusted. A server that refuses tools is asked
  by ``response_format`` json_schema, or else by JSON in the prompt
  (``LLM_STRUCTURED_MODE``; :class:`OpenAICompatibleProvider`); reasoning is removed.
- ``offline``: no network; the caller's offline answer is returned as is.
- ``auto`` (default): ``anthropic`` when ``ANTHROPIC_API_KEY`` is set, else ``offline``.

Every model call is recorded (stage, model, tokens in/out, latency) on the job-bound
:class:`JobLLM`, which the stage runner folds into the envelope's usage. A job's token
budget (``RESEARCH_MAX_TOKENS_PER_JOB``) is a reservation made before each call (its
estimated input plus its ``max_tokens``); a call that does not fit is shortened or
answered by the offline engine and the envelope is noted, so scoring stops researching
and synthesis reports the result as partial. The spend of every attempt is kept in a
ledger (the ``research_usage`` bucket) so a redelivered stage counts what a crashed
attempt spent. A structured answer that fails validation is re-asked once. Each call is
priced (:mod:`shared.llm.pricing`, ``LLM_PRICES``) and the job's cost limit (its
request's ``max_cost_usd``, else ``RESEARCH_MAX_COST_USD``) is reserved the same way as
the token budget; council members and a separate verifier share the stage's reservation
(:meth:`JobLLM.on`).

Degrade, don't fail: a provider that is unavailable (:class:`LLMUnavailable`: 429,
5xx, 529 overloaded, a connection error or a timeout) has already been retried
``LLM_MAX_RETRIES`` times with back-off by the SDK, so a stage's binding
(``degrade=True``, which the stage runner sets) does not raise it for JetStream to
redeliver: it answers that call with the caller's offline answer at once and every later
call of the job too, and the envelope records since when (``degraded``), so later stages
and iterations never wait on the provider again and the report says what was done
offline. Redelivering would only wait through the same retries again, and in the end
fail the job and lose its research. An invalid answer and an auth or configuration
error are not unavailability: they raise as before. A tool's binding (``degrade=False``)
and a council member's or a separate verifier's copy of a binding (another engine)
raise :class:`LLMUnavailable` as before; their callers report it.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from shared.platform import metrics
from shared.llm.budget import (
    REQUEST_OVERHEAD_TOKENS,
    JobBudget,
    SpendLedger,
    _Reservation,
    estimate_tokens,
)
from shared.llm.context import ContextWindow
from shared.llm.limits import Slots, call_limits
from shared.llm.pricing import LOCAL_PRICE, Price, PriceTable, served_locally
from shared.llm.providers import (
    AnthropicProvider,
    LLMContextExceeded,
    LLMInvalidOutput,
    LLMUnavailable,
    OpenAICompatibleProvider,
    Provider,
    RawAnswer,
    Turn,
)
from shared.research.envelope import Degraded, JobEnvelope, Usage
from shared.platform.errors import ConfigurationError

__all__ = [
    "ROLE_SETTINGS",
    "JobLLM",
    "LLMCall",
    "LLMEngine",
    "engine_limits",
    "make_engine",
    "make_provider",
    "parse_model",
]

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

# -- the engine and its per-job binding ------------------------------------------


@dataclass
class LLMCall:
    stage: str
    model: str
    input_tokens: int
    output_tokens: int
    latency_s: float
    ok: bool = True
    charged: int = 0
    """Tokens counted against the budget for a call that failed: its input estimate,
    since the provider may have billed the input before the error or timeout."""
    cost_usd: float = 0.0
    """What the call cost at the configured prices (a failed call: its charged input);
    0 for an unpriced model."""
    priced: bool = True  # False: no price is configured for ``model`` (its cost is not known)

    @property
    def budget_tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.charged


class LLMEngine:
    """One per process: the provider, the cap on calls in flight, the prices, and the
    default limits of a job (tokens; cost in USD, None: no limit)."""

    def __init__(self, provider: Provider | None, *, max_concurrency: int = 4, max_tokens_per_job: int = 200_000,
                 prices: PriceTable | None = None, max_cost_usd: float | None = None, context_tokens: int = 0) -> None:
        self.provider = provider
        self.window = ContextWindow(provider, context_tokens)  # LLM_CONTEXT_TOKENS, else the provider's
        self.max_tokens_per_job = max_tokens_per_job
        self.prices = prices if prices is not None else PriceTable()
        self.max_cost_usd = max_cost_usd
        self._slots = Slots(max_concurrency, provider)  # and the provider's own limit (OPENAI_/ANTHROPIC_MAX_CONCURRENCY)

    def price(self, model: str | None = None) -> Price | None:
        """The price of ``model`` (as a provider reported it), else of this engine's
        configured model; None when neither is priced (or there is no model)."""
        found = self.prices.price(model) if model else None
        if found is None and self.provider is not None:
            found = self.prices.price(self.provider.model)
        return LOCAL_PRICE if found is None and served_locally(self.provider) else found  # a model you run is free

    @property
    def offline(self) -> bool:
        return self.provider is None

    @property
    def label(self) -> str:
        return "offline" if self.provider is None else f"{self.provider.name}:{self.provider.model}"

    def bind(self, stage: str, usage: Usage, *, job_id: str = "", ledger: SpendLedger | None = None,
             degrade: bool = False, degraded: Degraded | None = None, iteration: int = 0,
             max_cost_usd: float | None = None) -> JobLLM:
        """The engine for one job at one stage. With a ``ledger``, call
        :meth:`JobLLM.load` before the first call so earlier attempts' spend counts.
        ``degrade``: answer offline once the provider is unavailable (a stage of a job;
        ``degraded`` is the envelope's record of an earlier stage finding it so).
        ``max_cost_usd``: the job's own cost limit (its request's), else the engine's."""
        llm = JobLLM(self, stage, usage, job_id=job_id, ledger=ledger, degrade=degrade, degraded=degraded,
                     iteration=iteration, max_cost_usd=max_cost_usd if max_cost_usd is not None else self.max_cost_usd)
        if llm.unavailable is not None and not self.offline:
            llm._tell(logging.INFO)  # this stage works offline from its start: said once, with the reason
        return llm


@dataclass
class JobLLM(JobBudget):
    """The engine bound to one job at one stage: holds the job's token budget and
    records every call.

    The budget is a reservation: before a call, its estimated input plus its
    ``max_tokens`` are reserved against what the job has left (atomically across the
    concurrent calls of this stage); a call that does not fit gets a smaller
    ``max_tokens``, or is not made at all (the offline answer, and the envelope notes
    the budget). After the call the reservation is settled with the usage the provider
    reported; a failed or timed-out call keeps its input estimate. So a job exceeds its
    budget only by the error of the input estimate.

    The job's cost limit (``max_cost_usd``, None: none) is reserved the same way, at the
    price of the model the call goes to: the call's estimated input and its output
    allowance priced; a call that does not fit whole gets a smaller ``max_tokens``, or
    is answered offline (the envelope notes :data:`COST_NOTE`). An unpriced model's
    calls cost 0 and only the token budget bounds them.

    A copy on another engine (:meth:`on`: a council member, a separate verifier) shares
    the call list and the reservation, so the job's budget and cost limit hold across
    all of them."""

    engine: LLMEngine
    stage: str
    base_usage: Usage
    calls: list[LLMCall] = field(default_factory=list)
    budget_hit: bool = False
    job_id: str = ""
    ledger: SpendLedger | None = None
    prior_spent: int = 0
    """The job's spend the ledger held when this stage took it: every earlier stage
    and every earlier attempt of this one, failed ones included."""
    degrade: bool = False
    """Answer offline once the provider is unavailable (a stage of a job); False (a
    tool) raises :class:`LLMUnavailable` instead."""
    degraded: Degraded | None = None
    """Since when the job's provider is unavailable: the envelope's record, or the one
    this stage made when a call found it so."""
    iteration: int = 0
    degraded_calls: int = 0  # this stage's calls answered offline because of it
    max_cost_usd: float | None = None
    """The job's cost limit in USD (its request's ``max_cost_usd``, else RESEARCH_MAX_COST_USD); None: none."""
    cost_hit: bool = False  # a call did not fit in the cost limit
    _shared: _Reservation = field(default_factory=_Reservation)
    _home: LLMEngine | None = None  # the job's own engine (a council member's copy calls another)
    _told: bool = False  # the degradation is logged once per stage

    def __post_init__(self) -> None:
        if self._home is None:
            self._home = self.engine

    def on(self, engine: LLMEngine) -> JobLLM:
        """This binding with ``engine`` doing the calls (a council member, a separate
        verifier): the same job, call list, budget, cost limit and reservation, so what
        the copy spends is the job's and concurrent copies cannot overspend it. Fold its
        :attr:`budget_hit` / :attr:`cost_hit` back with :meth:`absorb`."""
        return dataclasses.replace(self, engine=engine, budget_hit=False, cost_hit=False, degraded_calls=0, _told=False)

    def absorb(self, copy: JobLLM) -> None:
        """What a copy made by :meth:`on` found: the budget or the cost limit spent."""
        if copy is self:
            return
        self.budget_hit = self.budget_hit or copy.budget_hit
        self.cost_hit = self.cost_hit or copy.cost_hit

    @property
    def unavailable(self) -> Degraded | None:
        """Since when and why the job's provider is unavailable, when this binding
        answers offline because of it. A copy of the binding on another engine (a
        council member, a separate verifier) is not degraded with the job's provider."""
        return self.degraded if self.degrade and self.engine is self._home else None

    @property
    def offline(self) -> bool:
        """No model is asked: none is configured, or the job's provider is unavailable."""
        return self.engine.offline or self.unavailable is not None

    @property
    def label(self) -> str:
        return self.engine.label

    async def structured(self, schema: type[T], *, system: str, prompt: str, tool_name: str,
                         offline: Callable[[], T], tool_description: str = "", max_tokens: int = 2048) -> T:
        """The model's answer as ``schema``; the offline answer when no model is used,
        the budget has no room for the call, or the provider is unavailable (after the
        SDK's retries; see the module's docstring). An answer that does not validate (or no
        call of the tool) is re-asked once, with what was wrong; a second invalid answer
        raises :class:`LLMInvalidOutput`."""
        provider = self.engine.provider
        if provider is None or self._skips_provider():
            return offline()
        json_schema = schema.model_json_schema()
        description = tool_description or schema.__doc__ or tool_name
        base = estimate_tokens(system, prompt, json.dumps(json_schema), description)
        followup: list[Turn] = []
        problem = ""
        for attempt in (1, 2):
            estimate = base + (estimate_tokens(*(t for _, t in followup)) - REQUEST_OVERHEAD_TOKENS if followup else 0)
            turns = list(followup)

            def go(out: int, turns: list[Turn] = turns) -> Awaitable[RawAnswer]:
                return provider.structured(json_schema, system=system, prompt=prompt, tool_name=tool_name,
                                           tool_description=description, max_tokens=out, followup=turns or None)

            out = await self.engine.window.limit(estimate, max_tokens, stage=self.stage)  # never a cut prompt
            raw = await self._call(go, estimate=estimate, max_tokens=out)
            if raw is None:
                if attempt == 1 or self.unavailable is not None:
                    return offline()
                raise LLMInvalidOutput(f"{problem}; no budget left to ask again")
            cut = " (output truncated at max_tokens)" if raw.truncated else ""
            if raw.data is None:
                problem = f"{raw.model} did not call {tool_name}{cut}"
                summary = f"you did not call the {tool_name} tool"
            else:
                try:
                    return schema.model_validate(raw.data)
                except ValidationError as exc:
                    problem = f"{raw.model} answered {tool_name} with invalid input{cut}: {exc.error_count()} error(s)"
                    summary = _summarize(exc)
            if attempt == 1:
                log.info("%s; asking again once", problem)
                followup = [
                    ("assistant", _previous_answer(tool_name, raw.data)),
                    ("user", f"Your previous answer failed validation: {summary}{cut}. "
                             f"Answer again by calling {tool_name} with input that matches its schema."),
                ]
        raise LLMInvalidOutput(f"{problem} (asked twice)")

    async def text(self, *, system: str, prompt: str, offline: Callable[[], str], max_tokens: int = 2048) -> str:
        provider = self.engine.provider
        if provider is None or self._skips_provider():
            return offline()
        estimate = estimate_tokens(system, prompt)
        raw = await self._call(lambda out: provider.text(system=system, prompt=prompt, max_tokens=out), estimate=estimate,
                               max_tokens=await self.engine.window.limit(estimate, max_tokens, stage=self.stage))
        if raw is None:
            return offline()
        if not isinstance(raw.data, str) or not raw.data.strip():
            raise LLMInvalidOutput(f"{raw.model} returned no text")
        return raw.data

    async def _call(self, go: Callable[[int], Awaitable[RawAnswer]], *, estimate: int, max_tokens: int) -> RawAnswer | None:
        """The provider's answer, or None when the call is not made (no budget for it,
        or the provider unavailable: :attr:`unavailable` says which)."""
        granted = await self._reserve(estimate, max_tokens)
        if granted is None:
            return None
        out, cost = granted
        # The input estimate is in the ledger before the request leaves: if this process
        # dies mid-call, the redelivered attempt still counts what may have been billed.
        await self._record(estimate)
        started = time.monotonic()
        try:
            async with self.engine._slots:
                raw: RawAnswer | None = None
                # Not sent when the provider was found unavailable while this call waited for a slot.
                if not self._skips_provider():
                    started = time.monotonic()
                    raw = await go(out)
        except LLMUnavailable as exc:
            self._failed(estimate, out, cost, started)
            if not self._degrades(exc):
                raise
            return None
        except LLMContextExceeded as exc:  # the server's window is smaller than the one assumed
            self._failed(estimate, out, cost, started)
            self.engine.window.learn(exc.window, estimate)
            raise
        except BaseException:  # a provider error, a timeout, or the stage being cancelled
            self._failed(estimate, out, cost, started)
            raise
        self._release(estimate, out, cost)
        if raw is None:
            await self._record(-estimate)  # never sent
            return None
        latency = time.monotonic() - started
        # Replies the provider got but did not use (a structured mode the server refused,
        # before it asked again in the next) were billed: each counts as a call.
        for r in (*raw.earlier, raw):
            price = self.engine.price(r.model)
            self.calls.append(LLMCall(self.stage, r.model, r.input_tokens, r.output_tokens, latency if r is raw else 0.0,
                                      cost_usd=price.cost(r.input_tokens, r.output_tokens) if price else 0.0,
                                      priced=price is not None))
            metrics.LLM_CALLS.labels(self.stage, r.model, "ok").inc()
            metrics.LLM_TOKENS.labels(self.stage, r.model, "input").inc(r.input_tokens)
            metrics.LLM_TOKENS.labels(self.stage, r.model, "output").inc(r.output_tokens)
        metrics.LLM_LATENCY.labels(self.stage, raw.model).observe(latency)
        await self._record(sum(r.input_tokens + r.output_tokens for r in (*raw.earlier, raw)) - estimate)
        return raw

    def _failed(self, estimate: int, out: int, cost: float, started: float) -> None:
        """A call that raised: its reservation is released and its input estimate stays
        charged (the provider may have billed the input before failing)."""
        self._release(estimate, out, cost)
        latency = time.monotonic() - started
        price = self.engine.price()
        self.calls.append(LLMCall(self.stage, self.label, 0, 0, latency, ok=False, charged=estimate,
                                  cost_usd=price.cost(estimate, 0) if price else 0.0, priced=price is not None))
        metrics.LLM_CALLS.labels(self.stage, self.label, "error").inc()
        metrics.LLM_LATENCY.labels(self.stage, self.label).observe(latency)

    # -- degrade, don't fail -------------------------------------------------------

    def _skips_provider(self) -> bool:
        """The job's provider was found unavailable (by this stage or an earlier one):
        this call is answered offline without waiting on it again."""
        if self.unavailable is None:
            return False
        self.degraded_calls += 1
        metrics.LLM_CALLS.labels(self.stage, self.label, "degraded").inc()
        return True

    def _degrades(self, exc: LLMUnavailable) -> bool:
        """The provider failed a call after the SDK's retries: from now on the job's
        model work is offline (True), unless this binding does not degrade (a tool's,
        or a copy on another engine), whose caller gets the error."""
        if not self.degrade or self.engine is not self._home:
            return False
        if self.degraded is None:
            self.degraded = Degraded(stage=self.stage, iteration=self.iteration, reason=_one_line(str(exc)))
        self.degraded_calls += 1
        metrics.LLM_CALLS.labels(self.stage, self.label, "degraded").inc()
        self._tell()
        return True

    def _tell(self, level: int = logging.WARNING) -> None:
        """Log, once per stage, that its model work is offline and why."""
        if self._told or self.degraded is None:
            return
        self._told = True
        d = self.degraded
        log.log(level, "model provider %s unavailable since the %s stage (iteration %d): %s; the %s stage's model work "
                    "is done by the offline engine", self.label, d.stage, d.iteration, d.reason, self.stage)

    # -- folding into the envelope ------------------------------------------------

    def with_degraded(self, envelope: JobEnvelope) -> JobEnvelope:
        """``envelope`` recording since when the job's provider is unavailable, when it
        is and the envelope does not say so yet (the first record stands)."""
        if self.unavailable is None or envelope.degraded is not None:
            return envelope
        return envelope.model_copy(update={"degraded": self.unavailable})


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _summarize(exc: ValidationError, limit: int = 5) -> str:
    """The first few validation errors as ``field: problem``, for the re-ask."""
    parts = []
    for e in exc.errors()[:limit]:
        loc = ".".join(str(p) for p in e.get("loc", ())) or "(top level)"
        parts.append(f"{loc}: {e.get('msg', 'invalid')}")
    more = exc.error_count() - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def _previous_answer(tool_name: str, data: Any, limit: int = 4_000) -> str:
    """The invalid answer as the assistant turn of the re-ask (cut: a truncated answer
    may be long, and what was wrong is said in the next turn)."""
    if data is None:
        return f"(I answered without calling {tool_name}.)"
    shown = json.dumps(data, ensure_ascii=False, default=str)
    if len(shown) > limit:
        shown = shown[:limit] + " ..."
    return f"I called {tool_name} with: {shown}"


# The model each stage's work uses, when set (``provider:model``); else the default
# provider's model. Scoring's claims and the entailment judge are separate roles.
ROLE_SETTINGS = {"plan": "llm_model_plan", "digest": "llm_model_digest", "claims": "llm_model_claims",
                 "verify": "llm_model_verify", "write": "llm_model_write"}


def parse_model(spec: str, setting: str) -> tuple[str, str]:
    """``provider:model`` -> (provider, model); provider anthropic or openai."""
    kind, sep, model = spec.strip().partition(":")
    if not sep or not model.strip() or kind.strip() not in ("anthropic", "openai"):
        raise ConfigurationError(f"{setting}: {spec!r} is not provider:model with provider anthropic or openai")
    return kind.strip(), model.strip()


def make_provider(kind: str, model: str, settings: Any) -> Provider:
    """``kind``'s SDK serving ``model``, with that provider's key, base URL, timeout,
    retry and structured-output settings."""
    if kind == "anthropic":
        key = settings.anthropic_api_key.get_secret_value() if settings.anthropic_api_key else ""
        if not key:
            raise ConfigurationError(f"anthropic:{model} needs ANTHROPIC_API_KEY")
        return AnthropicProvider(api_key=key, model=model, base_url=settings.anthropic_base_url,
                                 max_retries=settings.llm_max_retries, **call_limits("anthropic", settings))
    return OpenAICompatibleProvider(
        api_key=settings.openai_api_key.get_secret_value() if settings.openai_api_key else "unused",
        model=model, base_url=settings.openai_base_url,
        max_retries=settings.llm_max_retries, **call_limits("openai", settings),
        structured_mode=getattr(settings, "llm_structured_mode", "auto"),
    )


def engine_limits(settings: Any) -> dict[str, Any]:
    """An engine's keyword arguments from ``settings``: calls in flight, the job's token
    budget and default cost limit, and the price table (``LLM_PRICES`` over the defaults)."""
    return {"max_concurrency": settings.llm_max_concurrency, "max_tokens_per_job": settings.research_max_tokens_per_job,
            "prices": PriceTable.from_settings(settings), "max_cost_usd": getattr(settings, "research_max_cost_usd", None),
            "context_tokens": getattr(settings, "llm_context_tokens", 0)}


def make_engine(settings: Any, role: str | None = None) -> LLMEngine:
    """The engine for ``role`` (a key of ROLE_SETTINGS): its ``LLM_MODEL_<ROLE>`` when
    set, else the one ``LLM_PROVIDER`` names (``settings`` is a StageSettings)."""
    spec = (getattr(settings, ROLE_SETTINGS[role], "") or "").strip() if role else ""
    if spec:
        kind, model = parse_model(spec, ROLE_SETTINGS[role].upper())
        return LLMEngine(make_provider(kind, model, settings), **engine_limits(settings))
    choice = settings.llm_provider
    key = settings.anthropic_api_key.get_secret_value() if settings.anthropic_api_key else ""
    if choice == "auto":
        choice = "anthropic" if key else "offline"
    provider: Provider | None
    if choice == "anthropic":
        if not key:
            raise ConfigurationError("LLM_PROVIDER=anthropic needs ANTHROPIC_API_KEY")
        provider = make_provider("anthropic", settings.anthropic_model, settings)
    elif choice == "openai":
        if not settings.openai_model:
            raise ConfigurationError("LLM_PROVIDER=openai needs OPENAI_MODEL (the model name the server serves)")
        provider = make_provider("openai", settings.openai_model, settings)
    else:
        provider = None
    return LLMEngine(provider, **engine_limits(settings))
