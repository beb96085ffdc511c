"""The job's deadline as one stage sees it, and the tools its work uses to obey it.

The gateway writes the deadline into the envelope (``deadline_at``, wall-clock UTC)
when the job starts: ``time_budget_s`` of the request, or RESEARCH_JOB_DEADLINE_S.
A stage turns it into an instant of its own monotonic clock once, when it takes the
command, so a wall-clock step while it works (NTP, a VM resumed) neither cuts its
work short nor lets it run on.

What a stage does with it:

- :meth:`Deadline.bounded` awaits one piece of work (a model call, a fan-out of
  searches) until the deadline; when the deadline comes first, the work is cancelled
  and a fallback stands in (the offline plan, the offline report, what finished);
- :meth:`Deadline.until_deadline` does the same for a block of code;
- :meth:`Deadline.cut` records, in one line, what the deadline cut. The runner puts
  those lines and :data:`~shared.research.envelope.DEADLINE_NOTE` into the envelope's notes, and
  synthesis says in the report why it is partial and what was cut.

Cancellation and the deadline do not fight: a cancellation from outside (the job was
cancelled, the process stops) always propagates as ``CancelledError``, also when it
arrives while a deadline fires; only the deadline's own timeout becomes the fallback.

The runner's backstop (:func:`backstop_at`) covers work that does not obey: a stage
still running ``RESEARCH_DEADLINE_GRACE_S`` past the deadline (or past its own start,
when it started after the deadline) is cancelled and the job handed on as it came in.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from shared.research.envelope import DEADLINE_NOTE, JobEnvelope, Usage, utcnow
from shared.llm.engine import JobLLM, LLMEngine
from shared.subjects import Stage

__all__ = [
    "DEADLINE_PREFIX",
    "Deadline",
    "Window",
    "backstop_at",
    "deadline_notes",
    "hand_on_stage",
    "with_cuts",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

DEADLINE_PREFIX = "deadline:"  # the notes saying what the deadline cut start with it

# Where a stage cut by the deadline hands the job: on towards the report, never
# into another research pass.
_HAND_ON: dict[Stage, Stage] = {
    Stage.PLAN: Stage.RETRIEVE,
    Stage.RETRIEVE: Stage.DIGEST,
    Stage.DIGEST: Stage.SCORE,
    Stage.SCORE: Stage.SYNTHESIZE,
}


def hand_on_stage(stage: Stage) -> Stage | None:
    """The stage a job goes to when ``stage`` is cut; None after synthesis (the job
    ends with its report)."""
    return _HAND_ON.get(stage)


@dataclass
class Window:
    """What :meth:`Deadline.until_deadline` yields: whether the deadline cut the block."""

    reached: bool = False


class Deadline:
    """The job's deadline on this process's monotonic clock, and what it cut."""

    def __init__(self, deadline_at: datetime, *, now: datetime | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.at = deadline_at
        self._clock = clock
        self._instant = clock() + (deadline_at - (now or utcnow())).total_seconds()
        self.cuts: list[str] = []

    def remaining(self) -> float:
        """Seconds left (negative once passed)."""
        return self._instant - self._clock()

    @property
    def passed(self) -> bool:
        return self.remaining() <= 0

    @property
    def instant(self) -> float:
        """The deadline on the monotonic clock."""
        return self._instant

    def cut(self, what: str) -> None:
        """Record what the deadline cut (one line, e.g. ``retrieve: 3 of 5 searches``)."""
        line = what if what.startswith(DEADLINE_PREFIX) else f"{DEADLINE_PREFIX} {what}"
        if line not in self.cuts:
            log.warning("job deadline reached: %s", line)
            self.cuts.append(line)

    @contextlib.asynccontextmanager
    async def until_deadline(self, what: str | None = None) -> AsyncIterator[Window]:
        """Run the block until the deadline; when the deadline comes first the block is
        cancelled, ``window.reached`` is True and ``what`` (if given) is recorded."""
        window = Window()
        loop = asyncio.get_running_loop()
        scope = asyncio.timeout_at(loop.time() + self.remaining())
        try:
            async with scope:
                yield window
        except TimeoutError:
            if not scope.expired():
                raise  # a timeout of the work itself, not the deadline's
            window.reached = True
            if what:
                self.cut(what)

    async def bounded(self, work: Awaitable[T], *, default: T | Callable[[], T | Awaitable[T]],
                      cut: str | None = None) -> T:
        """``work``'s result, or, when the deadline comes first, ``default`` (a value, or
        a function called only then, possibly async). Work that cannot start before the
        deadline is not started. ``cut`` is recorded when the default stands in."""
        if self.passed:
            if inspect.iscoroutine(work):
                work.close()  # never awaited: nothing ran
            else:
                asyncio.ensure_future(work).cancel()
            if cut:
                self.cut(cut)
            return await _resolve(default)
        async with self.until_deadline(cut) as window:
            return await work
        assert window.reached
        return await _resolve(default)

    async def model_or_offline(self, llm: JobLLM, work: Callable[[JobLLM], Awaitable[T]], *, cut: str) -> T:
        """``work(llm)`` until the deadline; when the deadline cuts it, ``work`` again
        with the offline engine (no model call: it needs no time of its own). Without a
        model there is nothing slow to cut."""
        if llm.offline:
            return await work(llm)
        return await self.bounded(work(llm), cut=cut, default=lambda: work(LLMEngine(None).bind(llm.stage, Usage())))


async def _resolve(default: T | Callable[[], T | Awaitable[T]]) -> T:
    value = default() if callable(default) else default
    if inspect.isawaitable(value):
        return await value
    return value  # type: ignore[return-value]


def backstop_at(deadline: Deadline, started: float, grace_s: float) -> float:
    """The monotonic instant past which the runner cancels a stage's work: the grace
    after the deadline, or after the stage's start when it started later (a stage that
    begins after the deadline still gets the grace to hand on what it has)."""
    return max(deadline.instant, started) + grace_s


def deadline_notes(notes: list[str], cuts: list[str]) -> list[str]:
    """``notes`` with the deadline note and the cut lines, each once."""
    return list(dict.fromkeys([*notes, DEADLINE_NOTE, *cuts]))


def with_cuts(envelope: JobEnvelope, cuts: list[str]) -> JobEnvelope:
    """The envelope, noted with what the deadline cut (unchanged when nothing was)."""
    if not cuts:
        return envelope
    return envelope.model_copy(update={"notes": deadline_notes(envelope.notes, cuts)})
