"""A job's model budget at one stage: what it may spend, what it has spent, and what it
reserves before each call.

:class:`JobBudget` is the accounting half of :class:`shared.llm.engine.JobLLM` (which
asks the provider and inherits this): the token budget (``RESEARCH_MAX_TOKENS_PER_JOB``)
and the cost limit (``max_cost_usd``) as reservations made before a call and settled
after it, the spend ledger that carries a crashed attempt's spend to the next, and the
usage and notes a stage folds into the envelope. Kept apart so that the rules of money
read on their own, without the provider calls around them.
"""

from __future__ import annotations

import asyncio
import logging
import math
from dataclasses import dataclass, field
from typing import Any, Protocol

from shared.platform import metrics
from shared.research.envelope import JobEnvelope, StageUsage, Usage

__all__ = ["BUDGET_NOTE", "COST_NOTE", "MIN_OUTPUT_TOKENS", "REQUEST_OVERHEAD_TOKENS", "JobBudget", "SpendLedger",
           "estimate_tokens"]

log = logging.getLogger("shared.llm.engine")  # one logger for the layer: operators filter on it

BUDGET_NOTE = "token budget exhausted"  # in envelope.notes once a job's budget is spent
COST_NOTE = "cost limit reached"  # in envelope.notes once a job's max_cost_usd has no room for a call


# -- the token budget -------------------------------------------------------------

# A call's input is estimated before it is sent, from its characters. Claude and GPT
# tokenizers give about 3.5-4 characters a token on English prose and fewer on JSON
# schemas; 3.5 with a 15% margin errs high, which is the safe side for a bound (asking
# the provider to count costs a round trip per call).
CHARS_PER_TOKEN = 3.5
ESTIMATE_MARGIN = 1.15
REQUEST_OVERHEAD_TOKENS = 32  # role markers, tool framing
MIN_OUTPUT_TOKENS = 256  # below this a structured answer would be cut off: skip the call


def estimate_tokens(*texts: str) -> int:
    """Input tokens a request made of ``texts`` is likely to be billed, erring high."""
    chars = sum(len(t) for t in texts)
    return math.ceil(chars / CHARS_PER_TOKEN * ESTIMATE_MARGIN) + REQUEST_OVERHEAD_TOKENS


class SpendLedger(Protocol):
    """Where a job's spend outlives a stage attempt (a key-value bucket in production):
    every attempt adds to it, and a redelivered stage reads it, so tokens a crashed
    attempt spent still count against the budget."""

    async def spent(self, job_id: str) -> int: ...

    async def add(self, job_id: str, tokens: int) -> None: ...


@dataclass
class _Reservation:
    """What is reserved and not yet settled for one job at one stage: shared by the
    stage's binding and its copies on other engines (council members, a separate
    verifier; :meth:`JobLLM.on`), so their concurrent calls reserve from one budget."""

    tokens: int = 0
    cost_usd: float = 0.0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class JobBudget:
    """The accounting of a job's binding (see the module doc); :class:`JobLLM` holds the
    fields it reads (``engine``, ``calls``, ``base_usage``, ``ledger``, the limits)."""

    # Declared by JobLLM's dataclass fields; named here for readers and type checkers.
    engine: Any
    stage: str
    base_usage: Usage
    calls: list[Any]
    budget_hit: bool
    job_id: str
    ledger: SpendLedger | None
    prior_spent: int
    max_cost_usd: float | None
    cost_hit: bool
    degraded: Any
    degraded_calls: int
    _shared: _Reservation

    @property
    def _reserved(self) -> int:
        """Tokens reserved by calls in flight (of this binding and its copies)."""
        return self._shared.tokens

    @property
    def _lock(self) -> asyncio.Lock:
        return self._shared.lock

    async def load(self) -> None:
        """Read the job's spend from the ledger. A ledger that cannot be read leaves
        the envelope's count (which misses only crashed attempts), and says so."""
        if self.ledger is None or not self.job_id:
            return
        try:
            self.prior_spent = await self.ledger.spent(self.job_id)
        except Exception as exc:  # noqa: BLE001 - any ledger failure degrades to the envelope's count
            log.warning("token ledger unreadable (%s: %s): the budget counts the envelope's usage only",
                        type(exc).__name__, exc)

    def tokens_used(self) -> int:
        """Tokens the job has spent: before this stage (the ledger's count, or the
        envelope's when that is larger) plus this stage's calls."""
        before = max(self.prior_spent, self.base_usage.input_tokens + self.base_usage.output_tokens)
        return before + sum(c.budget_tokens for c in self.calls)

    def tokens_left(self) -> int:
        home = self._home or self.engine  # the job's budget, whichever engine a copy calls
        return home.max_tokens_per_job - self.tokens_used() - self._reserved

    def cost_used(self) -> float:
        """USD the job has spent at the configured prices: the envelope's count before
        this stage, plus what the ledger holds beyond it (a crashed attempt's tokens,
        priced high: at the job model's output price), plus this stage's calls."""
        before = self.base_usage.cost_usd
        extra = self.prior_spent - (self.base_usage.input_tokens + self.base_usage.output_tokens)
        price = (self._home or self.engine).price()
        if extra > 0 and price is not None:
            before += price.cost(0, extra)
        return before + sum(c.cost_usd for c in self.calls)

    def cost_left(self) -> float | None:
        """USD left under the job's cost limit (None: no limit), reservations deducted."""
        if self.max_cost_usd is None:
            return None
        return self.max_cost_usd - self.cost_used() - self._shared.cost_usd

    @property
    def tokens_spent(self) -> bool:
        """The job's RESEARCH_MAX_TOKENS_PER_JOB has no room left for another call."""
        return self.tokens_left() < MIN_OUTPUT_TOKENS + REQUEST_OVERHEAD_TOKENS

    @property
    def cost_spent(self) -> bool:
        """The job's cost limit has no room left for another call of the job's own model."""
        left = self.cost_left()
        price = (self._home or self.engine).price()
        return left is not None and price is not None and not price.free and \
            left < price.cost(REQUEST_OVERHEAD_TOKENS, MIN_OUTPUT_TOKENS)

    @property
    def budget_spent(self) -> bool:
        """The token budget or the cost limit has no room left for another call."""
        return self.tokens_spent or self.cost_spent

    def limit_notes(self) -> list[str]:
        """The envelope notes for the limits a call of this stage did not fit in."""
        return [n for n, hit in ((BUDGET_NOTE, self.budget_hit), (COST_NOTE, self.cost_hit)) if hit]

    def spent_notes(self) -> list[str]:
        """The envelope notes for the limits hit or with no room left for another call."""
        return [n for n, hit in ((BUDGET_NOTE, self.budget_hit or self.tokens_spent),
                                 (COST_NOTE, self.cost_hit or self.cost_spent)) if hit]

    async def _reserve(self, estimate: int, max_tokens: int) -> tuple[int, float] | None:
        """Reserve ``estimate`` + output tokens, and their cost; the output allowance
        granted (at most ``max_tokens``) and the cost reserved, or None when the token
        budget or the cost limit has no room for this call."""
        async with self._lock:
            left = self.tokens_left()
            floor = min(max_tokens, MIN_OUTPUT_TOKENS)
            if left < estimate + floor:
                if not self.budget_hit:
                    log.warning("token budget of %d: %d left, a %s call needs about %d: answering offline",
                                (self._home or self.engine).max_tokens_per_job, max(left, 0), self.stage,
                                estimate + floor)
                self.budget_hit = True
                metrics.BUDGET_SKIPS.labels(self.stage).inc()
                return None
            out = min(max_tokens, left - estimate)
            cost = 0.0
            cost_left = self.cost_left()
            price = self.engine.price()
            if cost_left is not None and price is not None and not price.free:
                if cost_left < price.cost(estimate, floor):
                    if not self.cost_hit:
                        log.warning("cost limit of $%.4f: $%.4f left, a %s call to %s needs about $%.4f: answering "
                                    "offline", self.max_cost_usd, max(cost_left, 0.0), self.stage, self.label,
                                    price.cost(estimate, floor))
                    self.cost_hit = True
                    metrics.BUDGET_SKIPS.labels(self.stage).inc()
                    return None
                if price.output_per_mtok > 0:
                    affordable = (cost_left - price.cost(estimate, 0)) * 1_000_000 / price.output_per_mtok
                    out = min(out, max(floor, math.floor(affordable)))
                cost = price.cost(estimate, out)
            self._shared.tokens += estimate + out
            self._shared.cost_usd += cost
            return out, cost

    def _release(self, estimate: int, out: int, cost: float) -> None:
        self._shared.tokens -= estimate + out
        self._shared.cost_usd -= cost

    async def _record(self, tokens: int) -> None:
        if self.ledger is None or not self.job_id or not tokens:
            return
        try:
            await self.ledger.add(self.job_id, tokens)
        except Exception as exc:  # noqa: BLE001 - the envelope still counts this stage's calls
            log.warning("token ledger not updated (%s: %s): a redelivery of this stage would not count %+d tokens",
                        type(exc).__name__, exc, tokens)

    def usage(self) -> Usage:
        """The job's usage: what it had before this stage plus this stage's calls
        (the tokens providers reported; failed calls count as calls only)."""
        by_stage = {k: v.model_copy() for k, v in self.base_usage.by_stage.items()}
        if self.calls or self.degraded_calls:
            mine = by_stage.setdefault(self.stage, StageUsage())
            mine.degraded_calls += self.degraded_calls
            for c in self.calls:
                mine.input_tokens += c.input_tokens
                mine.output_tokens += c.output_tokens
                mine.calls += 1
                mine.latency_s = round(mine.latency_s + c.latency_s, 3)
                mine.cost_usd = round(mine.cost_usd + c.cost_usd, 6)
                if c.model not in mine.models:
                    mine.models.append(c.model)
                if not c.priced and c.ok and c.model not in mine.unpriced_models:
                    mine.unpriced_models.append(c.model)
        return Usage(by_stage=by_stage)

    def apply(self, envelope: JobEnvelope) -> JobEnvelope:
        """``envelope`` with this stage's usage (idempotent), the budget note, and since
        when the provider is unavailable (so later stages do not wait on it)."""
        notes = envelope.notes
        for note in self.limit_notes():
            if note not in notes:
                notes = [*notes, note]
        return self.with_degraded(envelope).model_copy(update={"usage": self.usage(), "notes": notes})

