"""A job's model spend across attempts: the usage bucket.

A redelivered stage must count what a crashed attempt already spent against the
job's token budget, so the spend lives in the usage bucket (key = job id, value =
tokens), not in the process that spent it.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError

from shared import subjects
from shared.errors import TransientError

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
        for attempt in range(self.ATTEMPTS):
            try:
                entry = await kv.get(job_id)
            except KeyNotFoundError:
                revision, current = 0, 0
            else:
                revision, current = entry.revision, int(entry.value or b"0")
            value = str(max(0, current + tokens)).encode()
            try:
                if revision:
                    await kv.update(job_id, value, last=revision)
                else:
                    await kv.create(job_id, value)
                return
            except KeyWrongLastSequenceError:
                # Another process wrote in between: read again, after a jittered pause
                # so that writers in step do not collide again.
                await asyncio.sleep(random.uniform(0, 0.002 * (attempt + 1)))
        raise TransientError(f"usage key of job {job_id} kept changing under {self.ATTEMPTS} attempts")
