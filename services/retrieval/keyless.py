"""What the keyless search providers (SearXNG, Wikipedia, arXiv, OpenAlex) share: one
paced HTTP GET with the project's error rules, and turning web results into sources.

Errors, the same for every API:

==========================  =========================================================
429                         :class:`TransientError` with the server's ``Retry-After``
                            (retried with backoff; a web chain fails over at once).
432/433 (a spent quota),    :class:`ProviderUnavailable`: retrying cannot help; a web
402                         chain skips the provider for a while.
other 4xx                   :class:`PermanentError`.
5xx, timeouts, transport    :class:`TransientError`.
==========================  =========================================================

Every request first takes a slot from the provider's rate limiter (the cross-process
:class:`~services.retrieval.ratelimit.KvRateLimiter` in the service; a no-op in tests).
API base URLs are operator settings, like NCBI's; the *result* URLs an API returns come
from whoever wrote the pages and are only fetched through
:func:`services.retrieval.fetch.fetch_document` and its SSRF guard.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import httpx

from services.retrieval.fetch import FetchedDocument
from services.retrieval.merge import canonical_url, source_id
from services.retrieval.providers import ProviderUnavailable, archived_source
from shared.platform.dates import retry_after_s
from shared.platform.errors import PermanentError, ResearchError, TransientError
from shared.research.envelope import Source
from shared.research.text import canonicalize
from shared.stores.textstore import TextStore

__all__ = ["ApiClient", "Limiter", "NoLimit", "WebResult", "web_sources"]

log = logging.getLogger(__name__)

QUOTA_STATUSES = frozenset({402, 432, 433})
DEFAULT_RETRY_AFTER_S = 1.0

Fetch = Callable[[str], Awaitable[FetchedDocument]]


class Limiter(Protocol):
    async def acquire(self) -> float: ...


class NoLimit:
    """A limiter that never waits (self-hosted services, tests)."""

    async def acquire(self) -> float:
        return 0.0


class ApiClient:
    """GETs to one API over a shared ``httpx.AsyncClient``, each paced by ``limiter``."""

    def __init__(self, http: httpx.AsyncClient, *, name: str, limiter: Limiter | None = None) -> None:
        self._http = http
        self.name = name
        self._limiter = limiter or NoLimit()

    async def get(self, url: str, params: Mapping[str, Any], *, headers: Mapping[str, str] | None = None) -> httpx.Response:
        await self._limiter.acquire()
        try:
            response = await self._http.get(url, params=dict(params), headers=dict(headers or {}))
        except httpx.TimeoutException as exc:
            raise TransientError(f"{self.name} timed out") from exc
        except httpx.TransportError as exc:
            raise TransientError(f"{self.name} unreachable: {exc}") from exc
        status = response.status_code
        if status == 429:
            wait = retry_after_s(response.headers.get("Retry-After"))
            raise TransientError(f"{self.name}: rate limited (429)",
                                 retry_after_s=DEFAULT_RETRY_AFTER_S if wait is None else wait)
        if status in QUOTA_STATUSES:
            raise ProviderUnavailable(f"{self.name}: quota exhausted (HTTP {status})")
        if status >= 500:
            raise TransientError(f"{self.name} answered HTTP {status}")
        if status >= 400:
            raise PermanentError(f"{self.name} refused the request: HTTP {status} {response.text[:200]}")
        return response

    async def get_json(self, url: str, params: Mapping[str, Any]) -> Any:
        response = await self.get(url, params, headers={"Accept": "application/json"})
        try:
            return response.json()
        except ValueError as exc:
            # A proxy's error page, or SearXNG without the json format enabled (403 then).
            raise TransientError(f"{self.name} answered something that is not JSON: {response.text[:120]!r}") from exc


# -- results to sources ------------------------------------------------------------------


@dataclass
class WebResult:
    """One result of a web search API, before its full text is known."""

    url: str
    title: str
    snippet: str
    score: float | None = None
    published_at: datetime | None = None
    text: str | None = None  # the full text when the API gave it (Wikipedia extracts)


async def web_sources(
    results: Sequence[WebResult], relevance: Sequence[float], *, query: str, provider: str,
    texts: TextStore, fetch: Fetch | None,
) -> list[Source]:
    """Sources for ``results``: the text the API gave, else the page fetched through the
    SSRF-guarded fetcher, else the snippet; every text archived before its source is
    returned (as :class:`services.retrieval.web.WebProvider` does for Tavily)."""

    missing = [r.url for r in results if not r.text]
    docs: list[FetchedDocument | None] = []
    if fetch is not None and missing:
        docs = list(await asyncio.gather(*(_fetch_quietly(fetch, u) for u in missing)))
    fetched = {u: d for u, d in zip(missing, docs, strict=False) if d is not None and d.text}
    sources: list[Source] = []
    for result, rel in zip(results, relevance, strict=True):
        doc = fetched.get(result.url)
        text = canonicalize(result.text or "") or (doc.text if doc else "") or canonicalize(result.snippet)
        if not text:
            continue
        how = "api" if result.text else (f"fetch:{doc.content_type}" if doc else "snippet")
        sources.append(await archived_source(
            texts, text, id=source_id(canonical_url(result.url)), url=result.url,
            title=result.title or (doc.title if doc else "") or result.url, query=query, relevance=rel,
            snippet=result.snippet, published_at=result.published_at, page_starts=doc.page_starts if doc else None,
            metadata={"full_text": how, "provider": provider},
        ))
    return sources


async def _fetch_quietly(fetch: Fetch, url: str) -> FetchedDocument | None:
    try:
        return await fetch(url)
    except ResearchError as exc:
        log.info("fetching %s failed (%s); using the search snippet", url, exc)
        return None
