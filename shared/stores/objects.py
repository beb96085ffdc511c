"""Texts in a JetStream object store, keyed by their own hash.

The one wrapper both buckets use: the canonical texts the stages pass by key
(:mod:`shared.stores.textstore`) and the digest archive kept for verification
(:mod:`shared.stores.archive`). Writing is idempotent, reading checks the text against its
key, and every failure is typed: missing is None, a timeout is transient, an altered
text is permanent.
"""

from __future__ import annotations

import asyncio

from nats.js import JetStreamContext
from nats.js.api import ObjectMeta
from nats.js.errors import BucketNotFoundError, NotFoundError, ObjectNotFoundError

from shared.platform.errors import PermanentError, TransientError
from shared.research.text import text_hash

# nats-py's ObjectStore.get waits for the object's chunks without a limit: an object
# whose chunks have just aged out (chunks are written, hence expire, before its meta
# record) would hang the reader.
READ_TIMEOUT_S = 10.0


class HashedTexts:
    def __init__(self, js: JetStreamContext, bucket: str, *, read_timeout_s: float = READ_TIMEOUT_S) -> None:
        self._js = js
        self._bucket = bucket
        self._store = None
        self._read_timeout_s = read_timeout_s

    async def _obs(self):  # noqa: ANN202 - nats.js.object_store.ObjectStore
        if self._store is None:
            self._store = await self._js.object_store(self._bucket)
        return self._store

    async def has(self, key: str) -> bool:
        try:
            await (await self._obs()).get_info(key)
            return True
        except (ObjectNotFoundError, NotFoundError):
            return False

    async def put(self, text: str, *, description: str | None = None) -> str:
        """Store ``text`` (idempotent: a text already there is not written again); its key."""
        key = text_hash(text)
        if await self.has(key):
            return key
        try:
            await (await self._obs()).put(key, text.encode("utf-8"), meta=ObjectMeta(name=key, description=description))
        except TimeoutError as exc:
            raise TransientError(f"object store {self._bucket}: put timed out for {key}") from exc
        return key

    async def read(self, key: str) -> tuple[str, str | None] | None:
        """(text, description) of ``key``; None when it is not (or no longer) stored."""
        try:
            obs = await self._obs()
            result = await asyncio.wait_for(obs.get(key), self._read_timeout_s)
        except (ObjectNotFoundError, NotFoundError, BucketNotFoundError):
            return None
        except TimeoutError as exc:
            raise TransientError(
                f"object store {self._bucket}: read of {key} timed out (it may be expiring right now)"
            ) from exc
        text = (result.data or b"").decode("utf-8")
        if text_hash(text) != key:
            raise PermanentError(f"stored text {key} does not match its hash")
        return text, result.info.description
