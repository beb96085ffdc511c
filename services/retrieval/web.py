"""The web provider: Tavily search through ``tavily-python``'s async client.

One search asks for up to ``RESEARCH_WEB_RESULTS_PER_QUERY`` results with their raw
content. Full texts come from, in order: Tavily's own extraction (raw content
with the search, then one ``/extract`` call for the results that came without it),
then our fetcher (:func:`services.retrieval.fetch.fetch_document`, with its SSRF and
size rules), and the search snippet as the last resort, so every result has a text.
Each canonical text is archived in the object store before the source is returned.

Tavily's typed errors become ours where the client is called:

===============================  ======================================================
``InvalidAPIKeyError`` (401)     :class:`ProviderUnavailable`: the key is wrong for
                                 every query; the job goes on with other providers.
``ForbiddenError`` (403, and     :class:`ProviderUnavailable`: 432/433 mean the plan's
432/433)                         or pay-as-you-go limit is spent; retrying cannot help.
``UsageLimitExceededError``      :class:`TransientError`: too many requests; retried
(429)                            with backoff, then reported (never an empty result).
``BadRequestError`` (400)        :class:`QueryRejected`: this query only.
timeouts, 5xx, transport         :class:`TransientError`.
===============================  ======================================================
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import httpx
from tavily import AsyncTavilyClient
from tavily import errors as tavily_errors

from services.retrieval.fetch import FetchedDocument, fetch_document
from services.retrieval.merge import canonical_url, source_id
from services.retrieval.providers import (
    ProviderUnavailable,
    QueryRejected,
    archived_source,
    score_relevance,
)
from shared.platform.dates import parse_date
from shared.research.envelope import RetrievalMethod, Source
from shared.platform.errors import PermanentError, ResearchError, TransientError
from shared.settings import StageSettings
from shared.research.text import canonicalize
from shared.stores.textstore import TextStore

__all__ = ["WebProvider", "make_tavily_client"]

log = logging.getLogger(__name__)

T = TypeVar("T")
Fetch = Callable[[str], Awaitable[FetchedDocument]]


def make_tavily_client(settings: StageSettings) -> AsyncTavilyClient:
    """The client for ``TAVILY_API_KEY``, at ``TAVILY_BASE_URL`` when set."""
    if settings.tavily_api_key is None:
        raise PermanentError("TAVILY_API_KEY is not set")
    return AsyncTavilyClient(
        api_key=settings.tavily_api_key.get_secret_value(),
        api_base_url=settings.tavily_base_url or None,
        client_source="deepresearch",
    )


async def _call(what: str, call: Awaitable[T]) -> T:
    """Await a Tavily call, translating its errors into ours."""
    try:
        return await call
    except tavily_errors.InvalidAPIKeyError as exc:
        raise ProviderUnavailable(f"Tavily rejected TAVILY_API_KEY (401): {exc}") from exc
    except tavily_errors.ForbiddenError as exc:
        raise ProviderUnavailable(f"Tavily refused {what} (403, or 432/433: plan or pay-as-you-go limit reached): {exc}") from exc
    except tavily_errors.UsageLimitExceededError as exc:
        retry = getattr(exc, "retry_after_seconds", None)
        raise TransientError(f"Tavily rate limit (429) on {what}: {exc}", retry_after_s=retry) from exc
    except tavily_errors.BadRequestError as exc:
        raise QueryRejected(f"Tavily refused {what} as a bad request (400): {exc}") from exc
    except tavily_errors.TimeoutError as exc:
        raise TransientError(f"Tavily {what} timed out") from exc
    except httpx.HTTPStatusError as exc:
        status = exc.response.status_code
        if status >= 500:
            raise TransientError(f"Tavily {what} answered HTTP {status}") from exc
        raise PermanentError(f"Tavily {what} answered HTTP {status}") from exc
    except httpx.TransportError as exc:
        raise TransientError(f"Tavily unreachable for {what}: {exc}") from exc


class WebProvider:
    method = RetrievalMethod.WEB
    name = "tavily"  # its name in RESEARCH_WEB_PROVIDERS

    def __init__(self, client: AsyncTavilyClient, settings: StageSettings, *, fetch: Fetch | None = None) -> None:
        self._client = client
        self._settings = settings
        self._fetch = fetch or (lambda url: fetch_document(url, settings))

    async def aclose(self) -> None:
        await self._client.close()

    def cache_params(self) -> Mapping[str, object]:
        s = self._settings
        return {"max_results": s.research_web_results_per_query, "depth": s.tavily_search_depth, "raw": "text",
                "extract": s.tavily_use_extract}

    async def search(self, query: str, texts: TextStore) -> list[Source]:
        s = self._settings
        answer = await _call(f"search {query!r}", self._client.search(
            query, max_results=s.research_web_results_per_query, search_depth=s.tavily_search_depth,
            include_raw_content="text", timeout=s.research_provider_timeout_s,
        ))
        results = [r for r in answer.get("results") or [] if isinstance(r, dict) and r.get("url")]
        full, how = await self._full_texts(results)
        relevance = score_relevance([float(r.get("score") or 0.0) for r in results])
        sources: list[Source] = []
        for result, rel in zip(results, relevance, strict=True):
            url = str(result["url"])
            text = full.get(url) or canonicalize(str(result.get("content") or ""))
            if not text:
                continue
            doc = how.get(url)
            fetched = isinstance(doc, FetchedDocument)
            sources.append(await archived_source(
                texts, text, id=source_id(canonical_url(url)), url=url,
                title=str(result.get("title") or (doc.title if fetched else "") or url), query=query, relevance=rel,
                snippet=str(result.get("content") or ""), published_at=parse_date(result.get("published_date")),
                page_starts=doc.page_starts if fetched else None,
                metadata={"full_text": f"fetch:{doc.content_type}" if fetched else (doc or "snippet"),
                          "provider": self.name},
            ))
        return sources

    async def _full_texts(self, results: list[dict[str, Any]]) -> tuple[dict[str, str], dict[str, Any]]:
        """url -> canonical full text, and url -> where it came from ("tavily_raw",
        "tavily_extract" or the FetchedDocument)."""
        full: dict[str, str] = {}
        how: dict[str, Any] = {}
        for r in results:
            text = canonicalize(str(r.get("raw_content") or ""))
            if text:
                full[r["url"]], how[r["url"]] = text, "tavily_raw"
        missing = [str(r["url"]) for r in results if r["url"] not in full]
        if missing and self._settings.tavily_use_extract:
            try:
                extracted = await _call("extract", self._client.extract(
                    missing, format="text", timeout=min(self._settings.research_provider_timeout_s, 60.0)))
            except ResearchError as exc:
                # The search answered; extraction is an improvement, so its failure
                # (even an exhausted plan) falls back to fetching, not to an error.
                log.warning("Tavily extract failed for %d urls (%s); fetching them", len(missing), exc)
            else:
                for item in extracted.get("results") or []:
                    url, text = item.get("url"), canonicalize(str(item.get("raw_content") or ""))
                    if url in missing and text:
                        full[url], how[url] = text, "tavily_extract"
        still = [u for u in missing if u not in full]
        docs = await asyncio.gather(*(self._fetch_quietly(u) for u in still))
        for url, doc in zip(still, docs, strict=True):
            if doc is not None and doc.text:
                full[url], how[url] = doc.text, doc
        return full, how

    async def _fetch_quietly(self, url: str) -> FetchedDocument | None:
        try:
            return await self._fetch(url)
        except ResearchError as exc:
            log.info("fetching %s failed (%s); using the search snippet", url, exc)
            return None
