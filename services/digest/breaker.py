"""The digest circuit breaker: stop starting digests when most recent ones fail.

A sliding window of the last ``window`` outcomes; the breaker opens when failures are
*more than* ``threshold`` of them with at least ``min_samples`` recorded. While open,
new digests are skipped (cached digests are still served, by the caller); it closes
again ``reset_after_s`` after opening, or when :meth:`reset` is called at the start of
each research iteration. Not thread-safe; one per event loop.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable


class CircuitBreaker:
    def __init__(
        self,
        *,
        window: int = 10,
        threshold: float = 0.7,
        min_samples: int = 5,
        reset_after_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not 0 < min_samples <= window:
            raise ValueError("need 0 < min_samples <= window")
        self.threshold = threshold
        self.min_samples = min_samples
        self.reset_after_s = reset_after_s
        self._clock = clock
        self._outcomes: deque[bool] = deque(maxlen=window)
        self._opened_at: float | None = None

    @property
    def samples(self) -> int:
        return len(self._outcomes)

    @property
    def failures(self) -> int:
        return sum(1 for ok in self._outcomes if not ok)

    @property
    def failure_ratio(self) -> float:
        return self.failures / self.samples if self._outcomes else 0.0

    @property
    def is_open(self) -> bool:
        if self._opened_at is not None and self._clock() - self._opened_at >= self.reset_after_s:
            self.reset()
        return self._opened_at is not None

    def allow(self) -> bool:
        """Whether a new digest may start now."""
        return not self.is_open

    def record(self, ok: bool) -> bool:
        """Record one digest's outcome; True when this outcome opened the breaker.
        Outcomes of digests that finish while it is open are not counted: they
        started before it opened and say nothing about the time after."""
        if self.is_open:
            return False
        self._outcomes.append(ok)
        if self.samples >= self.min_samples and self.failure_ratio > self.threshold:
            self._opened_at = self._clock()
            return True
        return False

    def reset(self) -> None:
        self._outcomes.clear()
        self._opened_at = None
