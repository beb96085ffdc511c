"""Wikipedia as a web search provider (no API key), through the MediaWiki Action API.

One request searches and returns each hit's lead section as plain text:
``GET {WIKIPEDIA_API_URL}?action=query&format=json&formatversion=2&generator=search
&gsrsearch=…&gsrlimit=N&prop=extracts|info&exintro=1&explaintext=1&exlimit=max
&inprop=url`` answers ``{"query": {"pages": [{"pageid", "title", "index", "extract",
"fullurl", "touched"}]}}`` (``pages`` in no particular order: ``index`` is the search
rank). No hits: no ``query`` member at all. API errors come as HTTP 200 with
``{"error": {"code", "info"}}``; ``maxlag``/``ratelimited`` are transient.

The lead section is the article's summary; it is the source's text (no page fetch).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from services.retrieval.keyless import ApiClient, WebResult, web_sources
from services.retrieval.providers import rank_relevance
from shared.platform.dates import parse_date
from shared.platform.errors import PermanentError, TransientError
from shared.research.envelope import RetrievalMethod, Source
from shared.stores.textstore import TextStore

__all__ = ["WikipediaProvider", "parse_wikipedia"]

TRANSIENT_CODES = frozenset({"maxlag", "ratelimited", "readonly", "internal_api_error_DBQueryError"})


def parse_wikipedia(data: Any) -> list[WebResult]:
    """Pages of a ``generator=search`` answer, in search rank order."""
    if not isinstance(data, dict):
        raise PermanentError("Wikipedia answered an unexpected JSON document")
    error = data.get("error")
    if isinstance(error, dict):
        message = f"Wikipedia API error {error.get('code')}: {error.get('info')}"
        if str(error.get("code")) in TRANSIENT_CODES:
            raise TransientError(message)
        raise PermanentError(message)
    pages = (data.get("query") or {}).get("pages") or []
    if isinstance(pages, dict):  # formatversion=1 keys pages by id
        pages = list(pages.values())
    ranked = sorted((p for p in pages if isinstance(p, dict) and p.get("fullurl")),
                    key=lambda p: int(p.get("index") or 1_000_000))
    return [WebResult(url=str(p["fullurl"]), title=str(p.get("title") or ""), snippet="",
                      published_at=parse_date(p.get("touched")), text=str(p.get("extract") or "") or None)
            for p in ranked]


class WikipediaProvider:
    method = RetrievalMethod.WEB
    name = "wikipedia"

    def __init__(self, api: ApiClient, *, api_url: str, results_per_query: int) -> None:
        self._api = api
        self._url = api_url
        self._n = min(results_per_query, 20)  # exintro extracts: at most 20 pages a request

    def cache_params(self) -> Mapping[str, object]:
        return {"n": self._n, "api": self._url}

    async def search(self, query: str, texts: TextStore) -> list[Source]:
        data = await self._api.get_json(self._url, {
            "action": "query", "format": "json", "formatversion": 2, "generator": "search", "gsrsearch": query,
            "gsrlimit": self._n, "gsrnamespace": 0, "prop": "extracts|info", "exintro": 1, "explaintext": 1,
            "exlimit": "max", "inprop": "url", "maxlag": 5,
        })
        results = [r for r in parse_wikipedia(data) if r.text][: self._n]
        return await web_sources(results, rank_relevance(len(results)), query=query, provider=self.name,
                                 texts=texts, fetch=None)
