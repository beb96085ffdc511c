"""Supervised background loops.

A background task that dies ends silently: asyncio keeps its exception until someone
awaits it, which the gateway did only at shutdown, so one unexpected error (a publish
during a stream-leader election) stopped admission for good. Every loop of the gateway
runs one *pass* at a time under :func:`supervise`: any exception is logged with its
traceback and followed by a capped, growing pause, and the loop goes on. Each loop's
:class:`LoopHealth` is what ``/readyz`` reports.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

__all__ = ["LoopHealth", "Loops", "supervise"]

log = logging.getLogger(__name__)


MAX_BACKOFF_S = 5.0
"""Longest pause after failed passes. Short, because /readyz reports a loop as failing
until its next pass succeeds: after PostgreSQL or NATS returns from an outage of any
length, every loop has passed again (and the gateway is ready) within this long."""


@dataclass
class LoopHealth:
    name: str
    failure_threshold: int = 3  # this many failed passes in a row: not ready
    stale_after_s: float = 60.0  # no finished pass for this long: not ready
    started_at: float = field(default_factory=time.monotonic)
    last_ok: float | None = None
    consecutive_failures: int = 0
    last_error: str | None = None
    running: bool = False
    stopped_by: str | None = None  # set if the task itself ended (it should not)

    def ok(self) -> None:
        self.last_ok = time.monotonic()
        self.consecutive_failures = 0
        self.last_error = None

    def failed(self, exc: BaseException) -> None:
        self.consecutive_failures += 1
        self.last_error = f"{type(exc).__name__}: {exc}"[:500]

    def problem(self) -> str | None:
        """Why this loop is not healthy, or None."""
        if not self.running:
            return f"not running ({self.stopped_by or 'not started'})"
        if self.consecutive_failures >= self.failure_threshold:
            return f"{self.consecutive_failures} passes in a row failed; last: {self.last_error}"
        since = time.monotonic() - (self.last_ok or self.started_at)
        if since > self.stale_after_s:
            return f"no successful pass for {since:.0f}s" + (f"; last: {self.last_error}" if self.last_error else "")
        return None


class Loops:
    """The gateway's loops by name, for ``/readyz``."""

    def __init__(self) -> None:
        self.health: dict[str, LoopHealth] = {}
        self.tasks: list[asyncio.Task[None]] = []

    def start(
        self, name: str, step: Callable[[], Awaitable[object]], *, interval_s: float,
        wake: asyncio.Event | None = None, max_backoff_s: float = MAX_BACKOFF_S, failure_threshold: int = 3,
    ) -> LoopHealth:
        # A pass that waits on its own (a fetch with a timeout) must still count as
        # recent, so staleness is measured against several intervals.
        health = LoopHealth(name, failure_threshold=failure_threshold, stale_after_s=max(60.0, 10 * interval_s + max_backoff_s))
        self.health[name] = health
        self.tasks.append(asyncio.create_task(supervise(health, step, interval_s=interval_s, wake=wake, max_backoff_s=max_backoff_s), name=f"gateway-{name}"))
        return health

    def problems(self) -> dict[str, str]:
        return {name: p for name, h in self.health.items() if (p := h.problem()) is not None}

    async def stop(self) -> None:
        for t in self.tasks:
            t.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


async def supervise(
    health: LoopHealth, step: Callable[[], Awaitable[object]], *, interval_s: float,
    wake: asyncio.Event | None = None, max_backoff_s: float = MAX_BACKOFF_S,
) -> None:
    """Run ``step`` forever: after a pass, wait ``interval_s`` (or until ``wake`` is
    set); after a failed pass, wait min(max_backoff_s, interval_s * 2**failures)."""
    health.running = True
    try:
        while True:
            try:
                await step()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the point: no exception ends the loop
                health.failed(exc)
                delay = min(max_backoff_s, interval_s * 2 ** min(health.consecutive_failures, 16))
                log.error("%s pass failed (%d in a row), next try in %.1fs", health.name, health.consecutive_failures, delay, exc_info=exc)
                await asyncio.sleep(delay)
                continue
            health.ok()
            if wake is None:
                await asyncio.sleep(interval_s)
            else:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), interval_s)
                wake.clear()
    except asyncio.CancelledError:
        health.stopped_by = "cancelled"
        raise
    except BaseException as exc:  # pragma: no cover - e.g. SystemExit inside a pass
        health.stopped_by = f"{type(exc).__name__}: {exc}"
        log.critical("%s loop ended", health.name, exc_info=exc)
        raise
    finally:
        health.running = False
