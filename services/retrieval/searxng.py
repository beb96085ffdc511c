"""SearXNG, a self-hosted metasearch engine, as a web search provider (no API key).

``GET {SEARXNG_URL}/search?q=…&format=json`` answers ``{"query", "number_of_results",
"results": [{"url", "title", "content", "engine", "engines", "score", "category",
"publishedDate"?}], "answers", "suggestions", "unresponsive_engines"}``. The ``json``
format must be enabled in the instance's ``settings.yml`` (``search.formats``); an
instance without it answers 403, reported as a permanent error naming the fix.

Results carry snippets only: full texts come from the SSRF-guarded fetcher, the snippet
being the last resort (:func:`services.retrieval.keyless.web_sources`). Relevance is
SearXNG's ``score`` relative to the best of the answer, else the rank.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from services.retrieval.keyless import ApiClient, Fetch, WebResult, web_sources
from services.retrieval.providers import rank_relevance, score_relevance
from shared.platform.dates import parse_date
from shared.platform.errors import PermanentError
from shared.research.envelope import RetrievalMethod, Source
from shared.stores.textstore import TextStore

__all__ = ["SearxngProvider", "parse_searxng"]


def parse_searxng(data: Any) -> list[WebResult]:
    """Results (http(s) URLs only, first occurrence of each) of a SearXNG JSON answer."""
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise PermanentError("SearXNG answer has no results list")
    out: dict[str, WebResult] = {}
    for r in data["results"]:
        if not isinstance(r, dict):
            continue
        url = str(r.get("url") or "")
        if not url.startswith(("http://", "https://")) or url in out:
            continue
        score = r.get("score")
        out[url] = WebResult(
            url=url, title=str(r.get("title") or ""), snippet=str(r.get("content") or ""),
            score=float(score) if isinstance(score, (int, float)) else None,
            published_at=parse_date(r.get("publishedDate")),
        )
    return list(out.values())


class SearxngProvider:
    method = RetrievalMethod.WEB
    name = "searxng"

    def __init__(self, api: ApiClient, *, base_url: str, results_per_query: int, fetch: Fetch | None,
                 language: str = "all") -> None:
        self._api = api
        self._url = base_url.rstrip("/") + "/search"
        self._n = results_per_query
        self._fetch = fetch
        self._language = language

    def cache_params(self) -> Mapping[str, object]:
        return {"n": self._n, "language": self._language}

    async def search(self, query: str, texts: TextStore) -> list[Source]:
        try:
            data = await self._api.get_json(self._url, {"q": query, "format": "json", "language": self._language,
                                                        "safesearch": 1})
        except PermanentError as exc:
            if "HTTP 403" in str(exc):
                raise PermanentError(f"{exc} (enable the json format in SearXNG's settings.yml: search.formats)") from exc
            raise
        results = parse_searxng(data)[: self._n]
        scores = [r.score for r in results]
        relevance = score_relevance([s or 0.0 for s in scores]) if any(scores) else rank_relevance(len(results))
        return await web_sources(results, relevance, query=query, provider=self.name, texts=texts, fetch=self._fetch)
