"""The digest cache: in-process entries backed by a JetStream KV bucket.

Key: ``digest:{version}:{source_id}:{content_hash}:{query_hash}:{config_hash}``, every
factor that changes a digest, so a changed text, question or configuration misses.
The in-process cache holds ``max_entries`` (100) and, when full, drops the oldest half
(a half-flush: one cheap sweep instead of bookkeeping on every read). The
shared cache lets another digest process, or the same question tomorrow, reuse a
digest; its entries live as long as the archive its locators point into. A shared
cache that does not answer is a miss, never a failed digest.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from typing import Any

from nats.errors import Error as NatsError
from nats.js import JetStreamContext
from nats.js.errors import BucketNotFoundError, KeyNotFoundError
from pydantic import ValidationError

from shared import subjects
from shared.research.envelope import DigestPayload
from shared.research.text import short_hash

log = logging.getLogger(__name__)

DIGEST_IMPL_VERSION = "1.0"
_KV_KEY = re.compile(r"^[-/_=a-zA-Z0-9]+(\.[-/_=a-zA-Z0-9]+)*$")


def cache_key(*, source_id: str, content_hash: str, query_hash: str, config_hash: str,
              version: str = DIGEST_IMPL_VERSION) -> str:
    """The cache key. ``content_hash`` is the SHA-256 hex of the canonical text (the
    ``sha256-`` prefix of a text key is dropped)."""
    content = content_hash.removeprefix("sha256-").removeprefix("sha256:")
    return f"digest:{version}:{source_id}:{content}:{query_hash}:{config_hash}"


def config_hash(config: dict[str, Any]) -> str:
    """8-hex hash of everything besides text and query that shapes a digest."""
    return short_hash(json.dumps(config, sort_keys=True, separators=(",", ":"), default=str))


def kv_key(key: str) -> str:
    """A NATS KV key for a cache key: ``:`` becomes ``.`` (KV keys allow neither ``:``
    nor most punctuation); a key that still is not valid is hashed."""
    dotted = key.replace(":", ".")
    return dotted if _KV_KEY.match(dotted) else "digest.h." + hashlib.sha256(key.encode()).hexdigest()


class LocalCache:
    """Insertion-ordered; when full, the oldest half is flushed."""

    def __init__(self, max_entries: int = 100) -> None:
        if max_entries < 2:
            raise ValueError("max_entries must be at least 2")
        self.max_entries = max_entries
        self._entries: dict[str, DigestPayload] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def get(self, key: str) -> DigestPayload | None:
        return self._entries.get(key)

    def put(self, key: str, payload: DigestPayload) -> None:
        if key not in self._entries and len(self._entries) >= self.max_entries:
            for old in list(self._entries)[: self.max_entries // 2]:
                del self._entries[old]
        self._entries[key] = payload

    def clear(self) -> None:
        self._entries.clear()


class SharedCache:
    """The JetStream KV bucket ``DIGEST_CACHE_BUCKET``."""

    def __init__(self, js: JetStreamContext) -> None:
        self._js = js
        self._kv = None

    async def _bucket(self):
        if self._kv is None:
            self._kv = await self._js.key_value(subjects.DIGEST_CACHE_BUCKET)
        return self._kv

    async def get(self, key: str) -> DigestPayload | None:
        try:
            entry = await (await self._bucket()).get(kv_key(key))
        except (KeyNotFoundError, BucketNotFoundError):
            return None
        except (NatsError, TimeoutError, OSError) as exc:  # a shared cache that fails is a miss
            log.warning("shared digest cache read failed (%s): treated as a miss", exc)
            return None
        try:
            return DigestPayload.model_validate_json(entry.value or b"")
        except ValidationError:
            log.warning("shared digest cache entry %s is not a digest: ignored", key)
            return None

    async def put(self, key: str, payload: DigestPayload) -> None:
        try:
            await (await self._bucket()).put(kv_key(key), payload.model_dump_json().encode())
        except (NatsError, TimeoutError, OSError) as exc:  # the digest is still good without the cache
            log.warning("shared digest cache write failed (%s)", exc)


class DigestCache:
    """Local first, then shared (a shared hit is kept locally too)."""

    def __init__(self, local: LocalCache, shared: SharedCache | None) -> None:
        self.local = local
        self.shared = shared

    async def get(self, key: str) -> tuple[DigestPayload, str] | None:
        """The cached digest and where it came from (``local`` or ``shared``)."""
        payload = self.local.get(key)
        if payload is not None:
            return payload, "local"
        if self.shared is not None and (payload := await self.shared.get(key)) is not None:
            self.local.put(key, payload)
            return payload, "shared"
        return None

    async def put(self, key: str, payload: DigestPayload) -> None:
        self.local.put(key, payload)
        if self.shared is not None:
            await self.shared.put(key, payload)
