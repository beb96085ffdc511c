"""Canonical source texts in the JetStream object store, keyed by their hash.

The envelope carries only the ``sha256-<hex>`` key; any process of any stage reads
the text back and can check it was not altered.
"""

from __future__ import annotations

from nats.js import JetStreamContext

from shared import subjects
from shared.stores.objects import HashedTexts
from shared.platform.errors import PermanentError

__all__ = ["TextStore"]


class TextStore:
    def __init__(self, js: JetStreamContext) -> None:
        self._texts = HashedTexts(js, subjects.TEXT_BUCKET)

    async def put(self, text: str) -> str:
        """Store a canonical text (idempotent) and return its key."""
        return await self._texts.put(text)

    async def get(self, key: str) -> str:
        found = await self._texts.read(key)
        if found is None:
            raise PermanentError(f"archived text {key} is missing from the object store")
        return found[0]
