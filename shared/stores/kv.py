"""Compare-and-set on one key of a JetStream key-value bucket.

Several processes keep shared counters and marks in key-value buckets (a job's model
spend, a rate limiter's next free slot, the run a control key stops). Each update is
read, change, write-if-nobody-wrote-in-between (``kv.update(..., last=revision)``, or
``kv.create`` for a key not there yet), read again when somebody did, after a short
random pause so that writers in step do not collide again.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any, TypeVar

from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError

from shared.platform.errors import TransientError

__all__ = ["compare_and_set"]

T = TypeVar("T")


async def compare_and_set(kv: Any, key: str, change: Callable[[bytes | None], tuple[bytes | None, T]], *,
                          attempts: int, pause_s: Callable[[int], float], what: str) -> T:
    """Apply ``change`` to the key's value (None when the key is not there) and write
    what it returns, unless another writer came first: then read and apply it again.

    ``change`` returns ``(new value, result)``; a new value of None writes nothing.
    ``pause_s(attempt)`` bounds the random pause after the attempt-th collision. The
    result is returned once written; after ``attempts`` collisions a TransientError
    names ``what``."""
    for attempt in range(attempts):
        try:
            entry = await kv.get(key)
            revision, current = entry.revision, entry.value
        except KeyNotFoundError:
            revision, current = 0, None
        value, result = change(current)
        if value is None:
            return result
        try:
            if revision:
                await kv.update(key, value, last=revision)
            else:
                await kv.create(key, value)
            return result
        except KeyWrongLastSequenceError:
            await asyncio.sleep(random.uniform(0, pause_s(attempt)))
    raise TransientError(f"{what}: no write after {attempts} contended attempts")
