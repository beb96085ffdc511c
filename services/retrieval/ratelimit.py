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

The slot times are wall-clock (``time.time()``): hosts sharing a limiter are assumed
to be NTP-synchronized, as any cluster is; a clock off by more than the margin could
let two requests land closer than ``1/rate``.
"""

from __future__ import annotations

import asyncio
import json
import random
import time

from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from shared import subjects
from shared.errors import TransientError

__all__ = ["SAFETY_MARGIN", "KvRateLimiter", "ncbi_rate"]

SAFETY_MARGIN = 1.15
MAX_CAS_ATTEMPTS = 200


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
        self._kv: KeyValue | None = None

    async def _bucket(self) -> KeyValue:
        if self._kv is None:
            self._kv = await self._js.key_value(subjects.RATELIMIT_BUCKET)
        return self._kv

    async def reserve(self) -> float:
        """Reserve the next free slot; return its wall-clock time."""
        kv = await self._bucket()
        for _ in range(MAX_CAS_ATTEMPTS):
            try:
                entry = await kv.get(self._key)
                revision, next_free = entry.revision, float(json.loads(entry.value or b"0"))
            except KeyNotFoundError:
                revision, next_free = 0, 0.0
            slot = max(time.time(), next_free)
            value = json.dumps(slot + self.interval_s).encode()
            try:
                if revision:
                    await kv.update(self._key, value, last=revision)
                else:
                    await kv.create(self._key, value)
                return slot
            except KeyWrongLastSequenceError:
                # Another process took a slot first; read again after a short random
                # pause so contenders do not retry in lockstep.
                await asyncio.sleep(random.uniform(0, 0.005))
        raise TransientError(f"rate limiter {self._key!r}: no slot after {MAX_CAS_ATTEMPTS} contended attempts")

    async def acquire(self) -> float:
        """Wait for a reserved slot; return the seconds waited."""
        slot = await self.reserve()
        wait = slot - time.time()
        if wait > 0:
            await asyncio.sleep(wait)
        return max(0.0, wait)
