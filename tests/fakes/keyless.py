"""Loopback fakes of the keyless search APIs, in their real wire formats.

- :class:`FakeSearxng`: ``GET /search?q=…&format=json`` answers SearXNG's JSON
  (``query``, ``number_of_results``, ``results`` [``url``, ``title``, ``content``,
  ``engine``, ``engines``, ``positions``, ``score``, ``category``, ``publishedDate``?],
  ``answers``, ``corrections``, ``infoboxes``, ``suggestions``, ``unresponsive_engines``);
  without ``format=json`` (or with ``json_enabled=False``, as a default instance) 403.
  ``GET /pages/<slug>`` serves result pages as HTML for the fetcher.
- :class:`FakeWikipedia`: ``GET /w/api.php?action=query&generator=search&prop=extracts…``
  answers ``{"batchcomplete": true, "query": {"pages": [{"pageid", "ns", "title",
  "index", "extract", "fullurl", "touched", ...}]}}`` (``formatversion=2``; pages in
  pageid order, ``index`` the rank); no hit: ``{"batchcomplete": true}``; a missing
  ``gsrsearch``: ``{"error": {"code": "nosrsearch", ...}}`` with HTTP 200.
- :class:`FakeArxiv`: ``GET /api/query?search_query=…`` answers an Atom feed with
  ``opensearch:totalResults`` and ``<entry>`` elements (id with version, title and
  summary with line breaks, ``arxiv:doi``, ``arxiv:primary_category``, links); a bad
  query (no ``search_query``) a 400 error feed, as arXiv sends it.
- :class:`FakeOpenAlex`: ``GET /works?search=…&per-page=N`` answers ``{"meta":
  {"count", "db_response_time_ms", "page", "per_page"}, "results": [work...],
  "group_by": []}`` with ``abstract_inverted_index``, ``authorships``, ``doi`` as a URL
  and ``relevance_score``.

Matching is the other fakes' rule: any content word of the query in the title or text,
ranked by how many. Every fake records ``requests`` and takes ``fail_next(status, n)``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from html import escape
from typing import Any
from xml.sax.saxutils import escape as xml_escape

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from tests.fakes.server import RecordingFake, search_terms

__all__ = ["Doc", "FakeArxiv", "FakeOpenAlex", "FakeSearxng", "FakeWikipedia", "Paper"]


@dataclass
class Doc:
    """A web page (SearXNG) or an article (Wikipedia). ``url`` None: served by the fake."""

    slug: str
    title: str
    text: str
    url: str | None = None
    published: str | None = None


@dataclass
class Paper:
    key: str  # arXiv id ("2101.01234") or OpenAlex id ("W123")
    title: str
    abstract: str
    authors: list[str] = field(default_factory=lambda: ["Ada Lovelace", "Alan Turing"])
    published: str = "2021-01-05"
    doi: str | None = None
    journal: str | None = None


def _ranked(items: list[Any], query: str, text_of: Any) -> list[tuple[int, Any]]:
    terms = search_terms(query)
    scored = [(sum(1 for t in terms if t in text_of(i).lower()), i) for i in items]
    return sorted(((n, i) for n, i in scored if n), key=lambda ni: -ni[0])


class _Fake(RecordingFake):
    def fail_next(self, status: int, n: int = 1) -> None:
        self._script_failures(status, n)

    def _admit(self, path: str, request: Request) -> int:
        with self._lock:
            status = self._failures.pop(0) if self._failures else 200
            self.requests.append({"path": path, "params": dict(request.query_params), "t": time.time(), "status": status})
        return status


class FakeSearxng(_Fake):
    def __init__(self, docs: list[Doc], *, json_enabled: bool = True) -> None:
        super().__init__()
        self.docs = docs
        self.json_enabled = json_enabled
        self.app = Starlette(routes=[Route("/search", self._search), Route("/pages/{slug}", self._page)])

    def url_of(self, doc: Doc) -> str:
        return doc.url or f"{self.base_url}/pages/{doc.slug}"

    async def _search(self, request: Request) -> Response:
        status = self._admit("search", request)
        if status == 429:
            return Response("Too Many Requests", status_code=429, headers={"Retry-After": "1"})
        if status != 200:
            return HTMLResponse("<html><body>error</body></html>", status_code=status)
        if request.query_params.get("format") != "json" or not self.json_enabled:
            return Response("Forbidden", status_code=403)
        query = request.query_params.get("q", "")
        results = []
        for i, (n, doc) in enumerate(_ranked(self.docs, query, lambda d: d.title + " " + d.text)):
            r: dict[str, Any] = {
                "url": self.url_of(doc), "title": doc.title, "content": doc.text[:200],
                "engine": "duckduckgo", "engines": ["duckduckgo", "brave"], "positions": [i + 1],
                "score": round(n * 2.0 / (i + 1), 3), "category": "general", "parsed_url": ["http", "x", "/", "", "", ""],
                "template": "default.html", "thumbnail": "", "priority": "",
            }
            if doc.published:
                r["publishedDate"] = doc.published
            results.append(r)
        return JSONResponse({"query": query, "number_of_results": 0, "results": results, "answers": [],
                             "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []})

    async def _page(self, request: Request) -> Response:
        for doc in self.docs:
            if doc.slug == request.path_params["slug"]:
                body = "".join(f"<p>{escape(p)}</p>" for p in doc.text.split("\n\n"))
                return HTMLResponse(f"<html><head><title>{escape(doc.title)}</title></head>"
                                    f"<body><nav>Menu</nav><main><h1>{escape(doc.title)}</h1>{body}</main></body></html>")
        return HTMLResponse("not found", status_code=404)


class FakeWikipedia(_Fake):
    def __init__(self, docs: list[Doc]) -> None:
        super().__init__()
        self.docs = docs
        self.app = Starlette(routes=[Route("/w/api.php", self._api)])

    @property
    def api_url(self) -> str:
        return f"{self.base_url}/w/api.php"

    async def _api(self, request: Request) -> Response:
        status = self._admit("api", request)
        if status != 200:
            return Response("error", status_code=status)
        q = request.query_params
        query = q.get("gsrsearch")
        if not query:
            return JSONResponse({"error": {"code": "nosrsearch", "info": "The \"gsrsearch\" parameter must be set.",
                                           "*": "See https://en.wikipedia.org/w/api.php for API usage."},
                                 "servedby": "mw-api-ext.codfw.main"})
        ranked = _ranked(self.docs, query, lambda d: d.title + " " + d.text)[: int(q.get("gsrlimit") or 10)]
        if not ranked:
            return JSONResponse({"batchcomplete": True})
        pages = []
        for index, (_, doc) in enumerate(ranked, start=1):
            pageid = 1000 + self.docs.index(doc)
            pages.append({
                "pageid": pageid, "ns": 0, "title": doc.title, "index": index,
                "extract": doc.text.split("\n\n")[0] if q.get("exintro") else doc.text,
                "contentmodel": "wikitext", "pagelanguage": "en", "touched": doc.published or "2024-05-01T12:00:00Z",
                "lastrevid": pageid * 7, "length": len(doc.text),
                "fullurl": doc.url or f"https://en.wikipedia.org/wiki/{doc.title.replace(' ', '_')}",
                "editurl": f"https://en.wikipedia.org/w/index.php?title={doc.title.replace(' ', '_')}&action=edit",
            })
        pages.sort(key=lambda p: p["pageid"])
        return JSONResponse({"batchcomplete": True, "continue": {"gsroffset": len(pages), "continue": "gsroffset||"},
                             "query": {"pages": pages}})


ATOM_HEAD = ('<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom" '
             'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" xmlns:arxiv="http://arxiv.org/schemas/atom">\n')


class FakeArxiv(_Fake):
    def __init__(self, papers: list[Paper]) -> None:
        super().__init__()
        self.papers = papers
        self.app = Starlette(routes=[Route("/api/query", self._query)])

    @property
    def api_url(self) -> str:
        return f"{self.base_url}/api/query"

    async def _query(self, request: Request) -> Response:
        status = self._admit("query", request)
        if status != 200:
            return Response("error", status_code=status)
        q = request.query_params
        search = q.get("search_query")
        if not search:
            return Response(ATOM_HEAD + "<title>arXiv Query: search_query=&amp;id_list=</title>"
                            "<entry><id>http://arxiv.org/api/errors#incorrect_id_format_for_</id>"
                            "<title>Error</title><summary>incorrect id format for </summary></entry></feed>",
                            status_code=400, media_type="application/atom+xml")
        words = " ".join(part.split(":", 1)[-1] for part in search.replace(" OR ", " ").replace(" AND ", " ").split())
        ranked = _ranked(self.papers, words, lambda p: p.title + " " + p.abstract)[: int(q.get("max_results") or 10)]
        entries = []
        for _, p in ranked:
            title = xml_escape(p.title)
            # arXiv wraps titles and abstracts with line breaks and indentation.
            summary = "\n  ".join(xml_escape(p.abstract[i:i + 60]) for i in range(0, len(p.abstract), 60))
            authors = "".join(f"<author><name>{xml_escape(a)}</name></author>" for a in p.authors)
            doi = f'<arxiv:doi>{xml_escape(p.doi)}</arxiv:doi><link title="doi" href="https://doi.org/{xml_escape(p.doi)}" rel="related"/>' if p.doi else ""
            journal = f"<arxiv:journal_ref>{xml_escape(p.journal)}</arxiv:journal_ref>" if p.journal else ""
            entries.append(
                f"<entry><id>http://arxiv.org/abs/{p.key}v2</id><updated>{p.published}T10:00:00Z</updated>"
                f"<published>{p.published}T09:00:00Z</published><title>{title}</title>"
                f"<summary>  {summary}\n</summary>{authors}{doi}{journal}"
                f'<link href="http://arxiv.org/abs/{p.key}v2" rel="alternate" type="text/html"/>'
                f'<link title="pdf" href="http://arxiv.org/pdf/{p.key}v2" rel="related" type="application/pdf"/>'
                f'<arxiv:primary_category term="cs.CL" scheme="http://arxiv.org/schemas/atom"/>'
                f'<category term="cs.CL" scheme="http://arxiv.org/schemas/atom"/></entry>')
        body = (ATOM_HEAD + f'<link href="http://arxiv.org/api/query" rel="self" type="application/atom+xml"/>'
                f"<title>arXiv Query: search_query={xml_escape(search)}</title><id>http://arxiv.org/api/x</id>"
                f"<updated>2025-01-01T00:00:00-05:00</updated><opensearch:totalResults>{len(ranked)}</opensearch:totalResults>"
                f"<opensearch:startIndex>0</opensearch:startIndex><opensearch:itemsPerPage>{len(ranked)}</opensearch:itemsPerPage>"
                + "".join(entries) + "</feed>")
        return Response(body, media_type="application/atom+xml; charset=utf-8")


def inverted_index(text: str) -> dict[str, list[int]]:
    index: dict[str, list[int]] = {}
    for i, word in enumerate(text.split()):
        index.setdefault(word, []).append(i)
    return index


class FakeOpenAlex(_Fake):
    def __init__(self, papers: list[Paper]) -> None:
        super().__init__()
        self.papers = papers
        self.app = Starlette(routes=[Route("/works", self._works)])

    async def _works(self, request: Request) -> Response:
        status = self._admit("works", request)
        if status == 429:
            return JSONResponse({"error": "Rate limit exceeded"}, status_code=429, headers={"Retry-After": "1"})
        if status != 200:
            return JSONResponse({"error": "Internal server error"}, status_code=status)
        q = request.query_params
        per_page = int(q.get("per-page") or q.get("per_page") or 25)
        ranked = _ranked(self.papers, q.get("search", ""), lambda p: p.title + " " + p.abstract)
        results = []
        for n, p in ranked[:per_page]:
            results.append({
                "id": f"https://openalex.org/{p.key}", "doi": f"https://doi.org/{p.doi}" if p.doi else None,
                "title": p.title, "display_name": p.title, "relevance_score": round(n * 123.4, 3),
                "publication_year": int(p.published[:4]), "publication_date": p.published, "type": "article",
                "ids": {"openalex": f"https://openalex.org/{p.key}"},
                "primary_location": {"is_oa": True, "landing_page_url": f"https://example.org/{p.key}",
                                     "source": {"id": "https://openalex.org/S1", "display_name": p.journal,
                                                "type": "journal"} if p.journal else None},
                "authorships": [{"author_position": "first" if i == 0 else "middle",
                                 "author": {"id": f"https://openalex.org/A{i}", "display_name": a},
                                 "institutions": []} for i, a in enumerate(p.authors)],
                "cited_by_count": 3, "abstract_inverted_index": inverted_index(p.abstract) if p.abstract else None,
            })
        return JSONResponse({"meta": {"count": len(ranked), "db_response_time_ms": 12, "page": 1, "per_page": per_page,
                                      "groups_count": None}, "results": results, "group_by": []})
