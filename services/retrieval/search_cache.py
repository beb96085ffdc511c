"""Search results shared by every retrieval process, so a repeated job (or a retried
stage) does not pay for the same web or PubMed search twice.

Entries live in JetStream key-value (``subjects.SEARCH_CACHE_BUCKET``), whose TTL is
``RESEARCH_SEARCH_CACHE_TTL_S``. The key is a hash of the provider, the query's
identity (:func:`shared.research.text.normalize_query`) and every parameter that changes the
answer (result count, search depth...), so a changed setting never serves stale
shapes. The value is the provider's normalized sources; their full texts are already in
the object store under ``text_hash`` (kept 30 days, longer than any allowed TTL).

Only answers are cached: an error is never stored, so a failed search is retried.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Awaitable, Callable, Mapping

from nats.js import JetStreamContext
from nats.js.errors import BucketNotFoundError, KeyNotFoundError
from nats.js.kv import KeyValue
from pydantic import TypeAdapter, ValidationError

from shared import subjects
from shared.research.envelope import Source
from shared.research.text import normalize_query

__all__ = ["SearchCache", "cache_key"]

log = logging.getLogger(__name__)

CACHE_FORMAT = 1  # part of every key: a changed value shape starts a fresh cache
MAX_VALUE_BYTES = 900 * 1024  # NATS refuses payloads over 1 MiB
_SOURCES = TypeAdapter(list[Source])


def cache_key(provider: str, query: str, params: Mapping[str, object]) -> str:
    """``<provider>.<sha256 hex>``: a valid KV key whatever the query contains."""
    identity = json.dumps([CACHE_FORMAT, provider, normalize_query(query), dict(params)], sort_keys=True, default=str)
    return f"{provider}.{hashlib.sha256(identity.encode('utf-8')).hexdigest()}"


class SearchCache:
    def __init__(self, js: JetStreamContext, *, enabled: bool = True) -> None:
        self._js = js
        self.enabled = enabled
        self._kv: KeyValue | None = None

    async def _bucket(self) -> KeyValue | None:
        if self._kv is None:
            try:
                self._kv = await self._js.key_value(subjects.SEARCH_CACHE_BUCKET)
            except BucketNotFoundError:
                log.warning("search cache bucket %s is missing; searching without cache", subjects.SEARCH_CACHE_BUCKET)
                return None
        return self._kv

    async def get(self, key: str) -> list[Source] | None:
        if not self.enabled or (kv := await self._bucket()) is None:
            return None
        try:
            entry = await kv.get(key)
        except KeyNotFoundError:
            return None
        try:
            return _SOURCES.validate_json(entry.value or b"")
        except ValidationError:
            log.warning("search cache entry %s does not parse; searching again", key)
            return None

    async def put(self, key: str, sources: list[Source]) -> None:
        if not self.enabled or (kv := await self._bucket()) is None:
            return
        value = _SOURCES.dump_json(sources)
        if len(value) > MAX_VALUE_BYTES:
            log.info("search result %s is %d bytes, too large to cache", key, len(value))
            return
        await kv.put(key, value)

    async def get_or_search(
        self, key: str, search: Callable[[], Awaitable[list[Source]]]
    ) -> tuple[list[Source], bool]:
        """The cached sources for ``key`` (and True), or ``search()``'s, stored (and False)."""
        cached = await self.get(key)
        if cached is not None:
            return cached, True
        sources = await search()
        await self.put(key, sources)
        return sources, False
