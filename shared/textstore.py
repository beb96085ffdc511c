"""Canonical source texts in the JetStream object store, keyed by their hash.

The envelope carries only the ``sha256-<hex>`` key; any process of any stage reads
the text back and can check it was not altered.
"""

from __future__ import annotations

from nats.js import JetStreamContext
from nats.js.errors import ObjectNotFoundError

from shared import subjects
from shared.errors import PermanentError, TransientError
from shared.text import text_hash


class TextStore:
    def __init__(self, js: JetStreamContext) -> None:
        self._js = js
        self._store = None

    async def _obs(self):  # noqa: ANN202 - nats.js.object_store.ObjectStore
        if self._store is None:
            self._store = await self._js.object_store(subjects.TEXT_BUCKET)
        return self._store

    async def put(self, text: str) -> str:
        """Store a canonical text (idempotent) and return its key."""
        key = text_hash(text)
        obs = await self._obs()
        try:
            await obs.get_info(key)
            return key
        except ObjectNotFoundError:
            pass
        try:
            await obs.put(key, text.encode("utf-8"))
        except TimeoutError as exc:
            raise TransientError(f"object store put timed out for {key}") from exc
        return key

    async def get(self, key: str) -> str:
        obs = await self._obs()
        try:
            result = await obs.get(key)
        except ObjectNotFoundError as exc:
            raise PermanentError(f"archived text {key} is missing from the object store") from exc
        except TimeoutError as exc:
            raise TransientError(f"object store get timed out for {key}") from exc
        text = (result.data or b"").decode("utf-8")
        if text_hash(text) != key:
            raise PermanentError(f"archived text {key} does not match its hash")
        return text
