"""A loopback fake of NCBI E-utilities (esearch.fcgi, efetch.fcgi) in their real formats.

- esearch with ``retmode=json``: ``{"header": ..., "esearchresult": {"count": "N",
  "retmax": "N", "retstart": "0", "idlist": ["123", ...], ...}}``; every number is a
  string, as NCBI sends it.
- efetch: PubMed XML with its ``<!DOCTYPE PubmedArticleSet ...>``, structured abstracts
  (``<AbstractText Label=... NlmCategory=...>``), inline markup in titles and abstracts
  (``<i>``, ``<sup>``...), ``CommentsCorrectionsList`` and ``ReferenceList`` entries that
  carry *other* papers' PMIDs, DOIs in ``ELocationID`` and ``ArticleIdList``.
- Errors as NCBI reports them: an ``ERROR`` field inside an HTTP 200 (esearch JSON,
  efetch XML), and 429 with ``{"error": "API rate limit exceeded", ...}`` when more
  requests arrive within one second than the limit (3, or 10 with an ``api_key``).
  The limit is enforced by the fake itself over a sliding one-second window, so a client
  that does not pace its requests really gets 429s.

Deliberately simple: matching is "any content word of the query appears in the title or
abstract", ranked by how many do; real PubMed maps terms to MeSH and ANDs them. The
tests only need a deterministic ranking, not PubMed's.

Scriptable per test: ``latency_s``, ``fail_next(kind, n)`` with kinds ``"error200"``
(an ERROR inside a 200), ``"429"``, ``"500"``; ``requests`` records every request.
"""

from __future__ import annotations

import asyncio
import collections
import re
import time
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.fakes.server import RecordingFake, search_terms

DOCTYPE = (
    '<?xml version="1.0" ?>\n'
    '<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" '
    '"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n'
)


@dataclass
class Article:
    """One PubMed record. ``title`` and abstract texts are XML fragments: they may
    hold inline markup (``<i>``, ``<sup>``) exactly as PubMed's XML does."""

    pmid: str
    title: str
    abstract: list[tuple[str | None, str]]  # (Label or None, XML fragment)
    journal: str = "Journal of Testing"
    pub_date: tuple[str, str | None, str | None] | str = (
        "2021",
        "Mar",
        "04",
    )  # (Year, Month, Day) or a MedlineDate
    authors: list[tuple[str, str]] = field(
        default_factory=lambda: [("Smith", "J"), ("Doe", "A")]
    )
    doi: str | None = None
    references: list[str] = field(
        default_factory=list
    )  # other papers' PMIDs (ReferenceList)
    comments: list[str] = field(
        default_factory=list
    )  # other papers' PMIDs (CommentsCorrectionsList)

    def plain(self) -> str:
        return re.sub(
            r"<[^>]+>", "", self.title + " " + " ".join(t for _, t in self.abstract)
        ).lower()


def article_xml(a: Article) -> str:
    if isinstance(a.pub_date, str):
        date = f"<MedlineDate>{escape(a.pub_date)}</MedlineDate>"
    else:
        year, month, day = a.pub_date
        date = (
            f"<Year>{year}</Year>"
            + (f"<Month>{month}</Month>" if month else "")
            + (f"<Day>{day}</Day>" if day else "")
        )
    if a.abstract:
        parts = []
        for label, text in a.abstract:
            attrs = (
                f" Label={quoteattr(label)} NlmCategory={quoteattr(label.upper())}"
                if label
                else ""
            )
            parts.append(f"<AbstractText{attrs}>{text}</AbstractText>")
        abstract = (
            "<Abstract>"
            + "".join(parts)
            + "<CopyrightInformation>© 2021 The Authors.</CopyrightInformation></Abstract>"
        )
    else:
        abstract = ""
    authors = "".join(
        f'<Author ValidYN="Y"><LastName>{escape(last)}</LastName><ForeName>{escape(ini)}.</ForeName>'
        f"<Initials>{escape(ini)}</Initials><AffiliationInfo><Affiliation>Dept. of Tests</Affiliation></AffiliationInfo></Author>"
        for last, ini in a.authors
    )
    eloc = (
        f'<ELocationID EIdType="doi" ValidYN="Y">{escape(a.doi)}</ELocationID>'
        if a.doi
        else ""
    )
    comments = ""
    if a.comments:
        comments = (
            "<CommentsCorrectionsList>"
            + "".join(
                f'<CommentsCorrections RefType="Cites"><RefSource>Other paper</RefSource><PMID Version="1">{p}</PMID></CommentsCorrections>'
                for p in a.comments
            )
            + "</CommentsCorrectionsList>"
        )
    ids = f'<ArticleId IdType="pubmed">{a.pmid}</ArticleId>' + (
        f'<ArticleId IdType="doi">{escape(a.doi)}</ArticleId>' if a.doi else ""
    )
    refs = ""
    if a.references:
        refs = (
            "<ReferenceList>"
            + "".join(
                f"<Reference><Citation>Cited work {p}.</Citation><ArticleIdList>"
                f'<ArticleId IdType="pubmed">{p}</ArticleId><ArticleId IdType="doi">10.9999/cited.{p}</ArticleId>'
                "</ArticleIdList></Reference>"
                for p in a.references
            )
            + "</ReferenceList>"
        )
    return (
        "<PubmedArticle>"
        f'<MedlineCitation Status="MEDLINE" Owner="NLM"><PMID Version="1">{a.pmid}</PMID>'
        "<DateCompleted><Year>2022</Year><Month>01</Month><Day>10</Day></DateCompleted>"
        '<Article PubModel="Print-Electronic"><Journal><ISSN IssnType="Electronic">1234-5678</ISSN>'
        f'<JournalIssue CitedMedium="Internet"><Volume>12</Volume><Issue>3</Issue><PubDate>{date}</PubDate></JournalIssue>'
        f"<Title>{escape(a.journal)}</Title><ISOAbbreviation>J Test</ISOAbbreviation></Journal>"
        f"<ArticleTitle>{a.title}</ArticleTitle><Pagination><MedlinePgn>1-10</MedlinePgn></Pagination>{eloc}"
        f'{abstract}<AuthorList CompleteYN="Y">{authors}</AuthorList><Language>eng</Language></Article>'
        f"<MedlineJournalInfo><Country>England</Country><MedlineTA>J Test</MedlineTA></MedlineJournalInfo>{comments}"
        "</MedlineCitation>"
        '<PubmedData><History><PubMedPubDate PubStatus="pubmed"><Year>2021</Year><Month>3</Month><Day>5</Day></PubMedPubDate></History>'
        f"<PublicationStatus>ppublish</PublicationStatus><ArticleIdList>{ids}</ArticleIdList>{refs}</PubmedData>"
        "</PubmedArticle>"
    )


class FakeEutils(RecordingFake):
    def __init__(
        self,
        articles: list[Article],
        *,
        latency_s: float = 0.0,
        enforce_rate_limit: bool = True,
    ) -> None:
        super().__init__()  # requests: {"path", "params", "t", "status"}; failures: kinds
        self.articles = {a.pmid: a for a in articles}
        self.latency_s = latency_s
        self.enforce_rate_limit = enforce_rate_limit
        self.rejected = 0  # 429s sent
        self._arrivals: dict[str, collections.deque[float]] = collections.defaultdict(
            collections.deque
        )
        self.app = Starlette(
            routes=[
                Route("/esearch.fcgi", self._esearch, methods=["GET", "POST"]),
                Route("/efetch.fcgi", self._efetch, methods=["GET", "POST"]),
            ]
        )

    # -- scripting -------------------------------------------------------------------

    def fail_next(self, kind: str, n: int = 1) -> None:
        """The next ``n`` requests fail as ``kind``: "error200", "429" or "500"."""
        self._script_failures(kind, n)

    def arrivals(self) -> list[float]:
        with self._lock:
            return sorted(r["t"] for r in self.requests)

    # -- serving -----------------------------------------------------------------------

    async def _params(self, request: Request) -> dict[str, str]:
        params = dict(request.query_params)
        if request.method == "POST":
            params.update({k: str(v) for k, v in (await request.form()).items()})
        return params

    def _admit(
        self, path: str, params: dict[str, str]
    ) -> tuple[str | None, JSONResponse | None]:
        """Record the request; a scripted failure or a 429 if over the limit."""
        now = time.time()
        who = params.get("api_key") or "anonymous"
        limit = 10 if params.get("api_key") else 3
        with self._lock:
            window = self._arrivals[who]
            while window and window[0] <= now - 1.0:
                window.popleft()
            window.append(now)
            over = self.enforce_rate_limit and len(window) > limit
            failure = self._failures.pop(0) if self._failures and not over else None
            status = 429 if over or failure == "429" else 200
            self.requests.append(
                {"path": path, "params": params, "t": now, "status": status}
            )
            if status == 429:
                self.rejected += 1
                count = len(window)
        if status == 429:
            body = {
                "error": "API rate limit exceeded",
                "api-key": who,
                "count": str(count),
                "limit": str(limit),
            }
            return None, JSONResponse(body, status_code=429)
        if failure == "500":
            return None, JSONResponse(
                {"error": "internal server error"}, status_code=500
            )
        return failure, None

    async def _esearch(self, request: Request) -> Response:
        params = await self._params(request)
        failure, refused = self._admit("esearch", params)
        if refused is not None:
            return refused
        await asyncio.sleep(self.latency_s)
        if failure == "error200":
            return JSONResponse(
                {
                    "header": {"type": "esearch", "version": "0.3"},
                    "esearchresult": {
                        "ERROR": "Search Backend failed: Database is not available"
                    },
                }
            )
        if params.get("db") != "pubmed":
            return JSONResponse(
                {
                    "header": {"type": "esearch", "version": "0.3"},
                    "esearchresult": {
                        "ERROR": f"Invalid db name specified: {params.get('db')}"
                    },
                }
            )
        terms = search_terms(params.get("term", ""))
        scored = []
        for a in self.articles.values():
            text = a.plain()
            hits = sum(1 for t in terms if t in text)
            if hits:
                scored.append((-hits, a.pmid))
        ids = [pmid for _, pmid in sorted(scored)]
        retmax = int(params.get("retmax", "20"))
        result: dict[str, Any] = {
            "count": str(len(ids)),
            "retmax": str(min(retmax, len(ids))),
            "retstart": "0",
            "idlist": ids[:retmax],
            "translationset": [],
            "querytranslation": " OR ".join(terms),
        }
        if not ids:
            result["errorlist"] = {"phrasesnotfound": terms, "fieldsnotfound": []}
            result["warninglist"] = {
                "phrasesignored": [],
                "quotedphrasesnotfound": [],
                "outputmessages": ["No items found."],
            }
        return JSONResponse(
            {"header": {"type": "esearch", "version": "0.3"}, "esearchresult": result}
        )

    async def _efetch(self, request: Request) -> Response:
        params = await self._params(request)
        failure, refused = self._admit("efetch", params)
        if refused is not None:
            return refused
        await asyncio.sleep(self.latency_s)
        if failure == "error200":
            body = '<?xml version="1.0" encoding="UTF-8" ?>\n<eFetchResult>\n\t<ERROR>Cannot retrieve history data. query_key: 1</ERROR>\n</eFetchResult>\n'
            return Response(body, media_type="text/xml")
        ids = [i.strip() for i in params.get("id", "").split(",") if i.strip()]
        body = (
            DOCTYPE
            + "<PubmedArticleSet>"
            + "".join(article_xml(self.articles[i]) for i in ids if i in self.articles)
            + "</PubmedArticleSet>\n"
        )
        return Response(body, media_type="text/xml")
