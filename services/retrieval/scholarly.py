"""Scholarly search without keys: arXiv (Atom API) and OpenAlex (works API). Results
are papers: title, abstract as text, authors, date and the paper's identifiers
(arXiv id, DOI) in ``metadata``, so :func:`services.retrieval.merge.dedupe_keys` unites
an OpenAlex work, a PubMed record and a web page at the same DOI.

arXiv: ``GET {ARXIV_API_URL}?search_query=all:w1 OR all:w2…&start=0&max_results=N
&sortBy=relevance`` answers an Atom feed; each ``<entry>`` has ``<id>`` (the abs URL
with its version), ``<title>``, ``<summary>`` (the abstract), ``<published>``,
``<author><name>``, and optionally ``<arxiv:doi>`` and ``<arxiv:journal_ref>``. An error
is a feed whose one entry's ``<id>`` is ``http://arxiv.org/api/errors#…`` (HTTP 400).
arXiv asks for at most one request every three seconds: every request takes a slot of
the shared limiter (ARXIV_MAX_REQUESTS_PER_S).

OpenAlex: ``GET {OPENALEX_API_URL}/works?search=…&per-page=N`` answers ``{"meta",
"results": [{"id", "doi", "display_name", "publication_date", "authorships": [{"author":
{"display_name"}}], "abstract_inverted_index": {word: [positions]}, "relevance_score",
"primary_location": {"landing_page_url", "source": {"display_name", "type"}}}]}``. The
abstract is rebuilt from the inverted index; works without one carry no evidence and are
left out. ``mailto`` (OPENALEX_EMAIL) puts requests in the polite pool.

The XML is parsed with the standard library (expat: no external entities, no DTD fetch).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from services.retrieval.keyless import ApiClient
from services.retrieval.merge import source_id
from services.retrieval.providers import archived_source, rank_relevance, score_relevance
from shared.platform.dates import parse_date
from shared.platform.errors import PermanentError, TransientError
from shared.research.envelope import CredibilityTier, RetrievalMethod, Source
from shared.research.text import canonicalize
from shared.stores.textstore import TextStore

__all__ = ["ArxivProvider", "OpenAlexProvider", "Paper", "arxiv_query", "parse_arxiv", "parse_openalex"]

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
_VERSION = re.compile(r"v\d+$")
_WORD = re.compile(r"[\w-]+", re.UNICODE)
MAX_QUERY_TERMS = 12


@dataclass
class Paper:
    url: str
    title: str
    abstract: str
    authors: list[str] = field(default_factory=list)
    published_at: datetime | None = None
    ids: dict[str, str] = field(default_factory=dict)  # arxiv_id, doi, openalex_id
    venue: str = ""
    score: float | None = None
    journal: bool = False  # published in a journal (OpenAlex source type)

    def text(self) -> str:
        return "\n\n".join(p for p in (self.title, self.abstract) if p)


def _flat(text: str | None) -> str:
    return " ".join((text or "").split())


# -- arXiv -------------------------------------------------------------------------------


def arxiv_query(query: str) -> str:
    """``all:`` terms joined by OR (arXiv ranks by how well each paper matches):
    a planner's natural-language query ANDed term by term would rarely match anything."""
    terms = [w for w in _WORD.findall(query.lower()) if len(w) > 2][:MAX_QUERY_TERMS]
    return " OR ".join(f"all:{t}" for t in dict.fromkeys(terms)) or f"all:{query.strip()}"


def parse_arxiv(payload: bytes) -> list[Paper]:
    try:
        root = ET.fromstring(payload)
    except ET.ParseError as exc:
        raise TransientError(f"arXiv answered malformed XML: {exc}") from exc
    papers = []
    for entry in root.findall(f"{ATOM}entry"):
        raw_id = _flat(entry.findtext(f"{ATOM}id"))
        if "/api/errors" in raw_id:
            raise PermanentError(f"arXiv API error: {_flat(entry.findtext(f'{ATOM}summary'))}")
        if "/abs/" not in raw_id:
            continue
        arxiv_id = _VERSION.sub("", raw_id.split("/abs/", 1)[1])
        ids = {"arxiv_id": arxiv_id}
        doi = _flat(entry.findtext(f"{ARXIV}doi"))
        if doi:
            ids["doi"] = doi
        papers.append(Paper(
            url=f"https://arxiv.org/abs/{arxiv_id}",
            title=_flat(entry.findtext(f"{ATOM}title")),
            abstract=_flat(entry.findtext(f"{ATOM}summary")),
            authors=[_flat(a.findtext(f"{ATOM}name")) for a in entry.findall(f"{ATOM}author") if _flat(a.findtext(f"{ATOM}name"))],
            published_at=parse_date(_flat(entry.findtext(f"{ATOM}published"))),
            ids=ids,
            venue=_flat(entry.findtext(f"{ARXIV}journal_ref")),
        ))
    return papers


# -- OpenAlex ----------------------------------------------------------------------------


def abstract_from_inverted_index(index: Any) -> str:
    """``{"word": [0, 7], ...}`` back to the text, words in position order."""
    if not isinstance(index, dict):
        return ""
    at: dict[int, str] = {}
    for word, positions in index.items():
        for p in positions if isinstance(positions, list) else []:
            if isinstance(p, int):
                at[p] = str(word)
    return " ".join(at[p] for p in sorted(at))


def parse_openalex(data: Any) -> list[Paper]:
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise PermanentError(f"OpenAlex answer has no results: {str(data)[:200]}")
    papers = []
    for w in data["results"]:
        if not isinstance(w, dict):
            continue
        doi = str(w.get("doi") or "").removeprefix("https://doi.org/")
        location = w.get("primary_location") or {}
        source = location.get("source") or {}
        ids = {"openalex_id": str(w.get("id") or "").rsplit("/", 1)[-1]}
        if doi:
            ids["doi"] = doi
        url = f"https://doi.org/{doi}" if doi else str(location.get("landing_page_url") or w.get("id") or "")
        if not url:
            continue
        score = w.get("relevance_score")
        papers.append(Paper(
            url=url,
            title=_flat(w.get("display_name") or w.get("title")),
            abstract=_flat(abstract_from_inverted_index(w.get("abstract_inverted_index"))),
            authors=[_flat((a.get("author") or {}).get("display_name")) for a in w.get("authorships") or []
                     if isinstance(a, dict) and (a.get("author") or {}).get("display_name")],
            published_at=parse_date(w.get("publication_date")),
            ids=ids,
            venue=_flat(source.get("display_name")),
            score=float(score) if isinstance(score, (int, float)) else None,
            journal=source.get("type") == "journal",
        ))
    return papers


# -- papers to sources -------------------------------------------------------------------


async def paper_sources(papers: list[Paper], relevance: list[float], *, query: str, provider: str,
                        texts: TextStore) -> list[Source]:
    """Papers with an abstract as sources (title and abstract archived as the text)."""
    sources = []
    for paper, rel in zip(papers, relevance, strict=True):
        if not paper.abstract:
            continue
        text = canonicalize(paper.text())
        metadata = {**paper.ids, "provider": provider, "authors": "; ".join(paper.authors), "journal": paper.venue}
        sources.append(await archived_source(
            texts, text, id=source_id(paper.url), url=paper.url, title=paper.title or paper.url, query=query,
            relevance=rel, published_at=paper.published_at, metadata=metadata,
            tier=CredibilityTier.PRIMARY_SOURCE if paper.journal else None,
        ))
    return sources


class ArxivProvider:
    method = RetrievalMethod.WEB
    name = "arxiv"

    def __init__(self, api: ApiClient, *, api_url: str, results_per_query: int) -> None:
        self._api, self._url, self._n = api, api_url, results_per_query

    def cache_params(self) -> Mapping[str, object]:
        return {"n": self._n, "sort": "relevance", "api": self._url}

    async def search(self, query: str, texts: TextStore) -> list[Source]:
        response = await self._api.get(self._url, {"search_query": arxiv_query(query), "start": 0,
                                                   "max_results": self._n, "sortBy": "relevance"})
        papers = parse_arxiv(response.content)[: self._n]
        return await paper_sources(papers, rank_relevance(len(papers)), query=query, provider=self.name, texts=texts)


class OpenAlexProvider:
    method = RetrievalMethod.WEB
    name = "openalex"

    def __init__(self, api: ApiClient, *, api_url: str, results_per_query: int, email: str | None = None,
                 api_key: str | None = None) -> None:
        self._api, self._url, self._n = api, api_url.rstrip("/") + "/works", results_per_query
        self._identity = {k: v for k, v in {"mailto": email, "api_key": api_key}.items() if v}

    def cache_params(self) -> Mapping[str, object]:
        return {"n": self._n, "api": self._url}

    async def search(self, query: str, texts: TextStore) -> list[Source]:
        data = await self._api.get_json(self._url, {"search": query, "per-page": self._n, **self._identity})
        papers = parse_openalex(data)[: self._n]
        scores = [p.score or 0.0 for p in papers]
        relevance = score_relevance(scores) if any(scores) else rank_relevance(len(papers))
        return await paper_sources(papers, relevance, query=query, provider=self.name, texts=texts)
