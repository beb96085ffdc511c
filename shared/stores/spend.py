"""A job's model spend across attempts: the usage bucket.

A redelivered stage must count what a crashed attempt already spent against the
job's token budget, so the spend lives in the usage bucket (key = job id, value =
tokens), not in the process that spent it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError

from shared import subjects
from shared.stores.kv import compare_and_set

__all__ = ["KvSpendLedger"]


class KvSpendLedger:
    """The job's model spend in the usage bucket (key = job id, value = tokens),
    updated by compare-and-set so concurrent writers never lose an addition."""

    ATTEMPTS = 50

    def __init__(self, js: JetStreamContext) -> None:
        self._js = js
        self._kv: Any = None
        # One writer at a time from this process: only other processes can race it.
        self._lock = asyncio.Lock()

    async def _bucket(self) -> Any:
        if self._kv is None:
            self._kv = await self._js.key_value(subjects.USAGE_BUCKET)
        return self._kv

    async def spent(self, job_id: str) -> int:
        kv = await self._bucket()
        try:
            entry = await kv.get(job_id)
        except KeyNotFoundError:
            return 0
        return int(entry.value or b"0")

    async def add(self, job_id: str, tokens: int) -> None:
        kv = await self._bucket()
        async with self._lock:
            await self._add(kv, job_id, tokens)

    async def _add(self, kv: Any, job_id: str, tokens: int) -> None:
        def added(current: bytes | None) -> tuple[bytes, None]:
            return str(max(0, int(current or b"0") + tokens)).encode(), None

        await compare_and_set(kv, job_id, added, attempts=self.ATTEMPTS, pause_s=lambda attempt: 0.002 * (attempt + 1),
                              what=f"usage key of job {job_id}")
