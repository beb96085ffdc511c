"""A request-rate limit held across every retrieval process, on every host.

NCBI allows 3 E-utilities requests per second per client (10 with an API key) and
answers 429 beyond that. A per-process limiter would let N processes send N times the
limit, so the schedule lives in JetStream key-value (``subjects.RATELIMIT_BUCKET``):
one key per limited API holds the time of the next free slot, and a process reserves a
slot by compare-and-set (``kv.update(..., last=revision)``): read the key, compute its
slot, write the following one only if nobody wrote in between, else read again. Every
process then sleeps until its own slot. Slots are spaced ``1/rate`` apart times
:data:`SAFETY_MARGIN`, because the server counts arrivals, and arrivals jitter by the
few milliseconds between waking up and the request reaching NCBI.

That margin is the whole of the tolerance: ``rate`` consecutive slots span
``SAFETY_MARGIN`` seconds, so a request sent more than ``SAFETY_MARGIN - 1`` seconds
after its slot could land in the same one-second window as the ``rate`` after it. A
process woken later than half that (a busy host, a long pause in the event loop) gives
its slot up and reserves another rather than send late; the other half is left for the
trip from the sleeping process to the server.

The slot times are wall-clock (``time.time()``): hosts sharing a limiter are assumed
to be NTP-synchronized, as any cluster is; a clock off by more than the margin could
let two requests land closer than ``1/rate``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time

from nats.js import JetStreamContext
from nats.js.kv import KeyValue

from shared import subjects
from shared.stores.kv import compare_and_set

__all__ = ["SAFETY_MARGIN", "KvRateLimiter", "ncbi_rate"]

log = logging.getLogger(__name__)

SAFETY_MARGIN = 1.15
MAX_CAS_ATTEMPTS = 200
MAX_FORFEITS = 20  # late wake-ups in a row before sending anyway (and saying so)


def ncbi_rate(*, has_key: bool, configured: float | None) -> float:
    """Requests per second for E-utilities: the setting, else NCBI's published limit."""
    if configured is not None:
        return configured
    return 10.0 if has_key else 3.0


class KvRateLimiter:
    """``await limiter.acquire()`` before each request; at most ``rate_per_s``
    acquisitions per second complete across every process that uses the same ``name``."""

    def __init__(self, js: JetStreamContext, *, name: str, rate_per_s: float, margin: float = SAFETY_MARGIN) -> None:
        if rate_per_s <= 0:
            raise ValueError("rate_per_s must be positive")
        self._js = js
        self._key = name
        self.interval_s = margin / rate_per_s
        self.max_late_s = (margin - 1.0) / 2
        self.forfeits = 0  # slots given up for a late wake-up, over this limiter's life
        self._kv: KeyValue | None = None

    async def _bucket(self) -> KeyValue:
        if self._kv is None:
            self._kv = await self._js.key_value(subjects.RATELIMIT_BUCKET)
        return self._kv

    async def reserve(self) -> float:
        """Reserve the next free slot; return its wall-clock time."""
        def taken(current: bytes | None) -> tuple[bytes, float]:
            slot = max(time.time(), float(json.loads(current or b"0")))
            return json.dumps(slot + self.interval_s).encode(), slot

        return await compare_and_set(await self._bucket(), self._key, taken, attempts=MAX_CAS_ATTEMPTS,
                                     pause_s=lambda _: 0.005, what=f"rate limiter {self._key!r}")

    async def acquire(self) -> float:
        """Wait for a reserved slot; return the seconds waited. A wake-up later than
        ``max_late_s`` after the slot forfeits it and waits for a new one."""
        began = time.time()
        for _ in range(MAX_FORFEITS):
            slot = await self.reserve()
            wait = slot - time.time()
            if wait > 0:
                await asyncio.sleep(wait)
            late = time.time() - slot
            if late <= self.max_late_s:
                return time.time() - began
            self.forfeits += 1
            log.info("rate limiter %r: woke %.0f ms after its slot; reserving another", self._key, late * 1000)
        log.warning("rate limiter %r: %d late wake-ups in a row (an overloaded host?); sending now",
                    self._key, MAX_FORFEITS)
        return time.time() - began
