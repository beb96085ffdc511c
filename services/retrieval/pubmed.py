"""PubMed through NCBI E-utilities: ``esearch`` (JSON) for PMIDs, ``efetch`` (XML) for
the records, each record normalized to the envelope's source object.

What E-utilities does that a naive client gets wrong, and what this module does:

* Errors arrive with HTTP 200: esearch JSON carries ``esearchresult.ERROR``, efetch XML
  an ``<ERROR>`` element. Both raise :class:`EutilsError` (transient: NCBI's backend
  errors are mostly momentary; the query text is ours and well-formed). ``errorlist``
  (phrases not found) is not an error: it comes with zero or partial results.
* Ids are strings (``"idlist": ["123"]``, ``"count": "0"``) and stay strings.
* A record embeds other papers' PMIDs (``CommentsCorrectionsList``, ``ReferenceList``)
  and DOIs (``ReferenceList``): only ``MedlineCitation/PMID`` and the article's own
  ``ELocationID`` / ``PubmedData/ArticleIdList`` identify it.
* Titles and abstracts contain inline markup (``<i>``, ``<sup>``, ``<sub>``...): text is
  taken with ``itertext()`` so ``H<sub>2</sub>O`` reads ``H2O``.
* Over the rate limit NCBI answers 429: every request first takes a slot from the
  cross-process :class:`~services.retrieval.ratelimit.KvRateLimiter`; a 429 that still
  happens raises a TransientError carrying ``Retry-After`` (or one second).

``tool``, ``email`` and ``api_key`` go on every request, as NCBI asks.
The XML is parsed with the standard library: expat neither fetches the DOCTYPE's
external DTD nor expands external entities, and limits entity amplification.
"""

from __future__ import annotations

import asyncio
import json
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

import httpx

from services.retrieval.merge import source_id
from services.retrieval.providers import archived_source, rank_relevance
from shared.platform.dates import retry_after_s
from shared.research.envelope import CredibilityTier, RetrievalMethod, Source
from shared.platform.errors import PermanentError, TransientError
from shared.research.text import canonicalize
from shared.stores.textstore import TextStore

__all__ = ["EutilsError", "PubMedClient", "PubMedProvider", "PubMedRecord", "parse_efetch", "parse_esearch",
           "pubmed_url"]


_MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1)}
DEFAULT_RETRY_AFTER_S = 1.0
MAX_EFETCH_IDS = 200  # NCBI asks for POST beyond about 200 ids; a batch stays a GET


class EutilsError(TransientError):
    """E-utilities reported an error inside an HTTP 200."""


class Limiter(Protocol):
    async def acquire(self) -> float: ...


def pubmed_url(pmid: str) -> str:
    return f"https://pubmed.ncbi.nlm.nih.gov/{pmid}/"


@dataclass
class PubMedRecord:
    pmid: str
    title: str
    sections: list[tuple[str | None, str]]  # (label, text) of the abstract, in order
    journal: str = ""
    published_at: datetime | None = None
    authors: list[str] = field(default_factory=list)
    doi: str | None = None

    @property
    def url(self) -> str:
        return pubmed_url(self.pmid)

    def text(self) -> str:
        """The record as one document: title, then each abstract section as a paragraph
        headed by its label (structured abstracts keep BACKGROUND/METHODS/...)."""
        paragraphs = [self.title] + [f"{label}: {body}" if label else body for label, body in self.sections]
        return "\n\n".join(p for p in paragraphs if p)


# -- parsing -----------------------------------------------------------------------


def parse_esearch(payload: bytes) -> list[str]:
    """PMIDs (strings, in rank order) from an esearch JSON answer."""
    try:
        data = json.loads(payload)
    except ValueError as exc:
        raise EutilsError(f"esearch answered with something that is not JSON: {payload[:120]!r}") from exc
    if not isinstance(data, dict):
        raise EutilsError("esearch answered with an unexpected JSON document")
    result = data.get("esearchresult")
    if not isinstance(result, dict):
        raise EutilsError(f"esearch answer has no esearchresult: {str(data.get('error') or data)[:200]}")
    if result.get("ERROR"):
        raise EutilsError(f"esearch error: {result['ERROR']}")
    ids = result.get("idlist") or []
    return [str(i) for i in ids if str(i).isdigit()]


def _text(el: ET.Element | None) -> str:
    """All text under ``el`` with inline markup flattened and whitespace collapsed."""
    if el is None:
        return ""
    return " ".join("".join(el.itertext()).split())


def _date(el: ET.Element | None) -> datetime | None:
    if el is None:
        return None
    year = _text(el.find("Year"))
    month_raw = _text(el.find("Month"))
    day_raw = _text(el.find("Day"))
    if not year:
        # <MedlineDate>2019 Jan-Feb</MedlineDate>, <MedlineDate>2018 Winter</MedlineDate>
        words = _text(el.find("MedlineDate")).replace("-", " ").split()
        if not words or not words[0][:4].isdigit():
            return None
        year = words[0][:4]
        month_raw = words[1] if len(words) > 1 else ""
        day_raw = ""
    month = int(month_raw) if month_raw.isdigit() else _MONTHS.get(month_raw[:3].lower(), 1)
    day = int(day_raw) if day_raw.isdigit() else 1
    try:
        return datetime(int(year), max(1, min(month, 12)), 1, tzinfo=UTC).replace(day=day)
    except ValueError:
        return datetime(int(year), max(1, min(month, 12)), 1, tzinfo=UTC)


def _doi(article: ET.Element) -> str | None:
    """The article's own DOI: ELocationID, else PubmedData/ArticleIdList (never one
    inside ReferenceList, which names cited works)."""
    for eloc in article.findall("MedlineCitation/Article/ELocationID"):
        if eloc.get("EIdType") == "doi" and _text(eloc):
            return _text(eloc)
    for aid in article.findall("PubmedData/ArticleIdList/ArticleId"):
        if aid.get("IdType") == "doi" and _text(aid):
            return _text(aid)
    return None


def _authors(art: ET.Element) -> list[str]:
    out = []
    for author in art.findall("AuthorList/Author"):
        collective = _text(author.find("CollectiveName"))
        last = _text(author.find("LastName"))
        initials = _text(author.find("Initials"))
        if collective:
            out.append(collective)
        elif last:
            out.append(f"{last} {initials}".strip())
    return out


def parse_efetch(payload: bytes) -> list[PubMedRecord]:
    """Records from an efetch PubMed XML answer (book records are skipped)."""
    try:
        root = ET.fromstring(payload)
    except ET.ParseError as exc:
        raise EutilsError(f"efetch answered with malformed XML: {exc}") from exc
    error = root.find(".//ERROR") if root.tag != "ERROR" else root
    if error is not None:
        raise EutilsError(f"efetch error: {_text(error)}")
    records = []
    for article in root.findall("PubmedArticle"):
        pmid = _text(article.find("MedlineCitation/PMID"))
        art = article.find("MedlineCitation/Article")
        if not pmid.isdigit() or art is None:
            continue
        sections = []
        for part in art.findall("Abstract/AbstractText"):
            body = _text(part)
            if body:
                sections.append((part.get("Label") or None, body))
        published = _date(art.find("ArticleDate")) or _date(art.find("Journal/JournalIssue/PubDate"))
        records.append(PubMedRecord(
            pmid=pmid,
            title=_text(art.find("ArticleTitle")).rstrip() or _text(art.find("VernacularTitle")),
            sections=sections,
            journal=_text(art.find("Journal/Title")),
            published_at=published,
            authors=_authors(art),
            doi=_doi(article),
        ))
    return records


# -- the client --------------------------------------------------------------------


class PubMedClient:
    """esearch + efetch over an ``httpx.AsyncClient`` passed in (tests point it at a
    loopback fake), every request paced by ``limiter``."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        base_url: str,
        limiter: Limiter,
        tool: str,
        email: str | None = None,
        api_key: str | None = None,
    ) -> None:
        self._http = http
        self._base = base_url.rstrip("/")
        self._limiter = limiter
        self._identity = {k: v for k, v in {"tool": tool, "email": email, "api_key": api_key}.items() if v}
        self._open: _Batch | None = None
        self._sending: set[asyncio.Task[None]] = set()

    async def _get(self, endpoint: str, params: dict[str, Any]) -> bytes:
        """One paced request."""
        await self._limiter.acquire()
        return await self._request(endpoint, params)

    async def _request(self, endpoint: str, params: dict[str, Any]) -> bytes:
        """One request, its slot already taken. Failures are raised typed, not retried
        here: the caller's one retry policy (``research_provider_retries``) honours
        ``retry_after_s``."""
        try:
            response = await self._http.get(f"{self._base}/{endpoint}", params={**params, **self._identity})
        except httpx.TimeoutException as exc:
            raise TransientError(f"E-utilities {endpoint} timed out") from exc
        except httpx.TransportError as exc:
            raise TransientError(f"E-utilities {endpoint} unreachable: {exc}") from exc
        if response.status_code == 429:
            raise TransientError(f"E-utilities {endpoint}: over NCBI's rate limit (429)", retry_after_s=_retry_after(response))
        if response.status_code >= 500:
            raise TransientError(f"E-utilities {endpoint} answered HTTP {response.status_code}")
        if response.status_code >= 400:
            raise PermanentError(f"E-utilities {endpoint} refused the request: HTTP {response.status_code} {response.text[:200]}")
        return response.content

    async def search(self, query: str, *, retmax: int) -> list[str]:
        payload = await self._get("esearch.fcgi", {
            "db": "pubmed", "term": query, "retmode": "json", "retmax": retmax, "sort": "relevance",
        })
        return parse_esearch(payload)[:retmax]

    async def fetch(self, pmids: list[str]) -> list[PubMedRecord]:
        """The records of ``pmids`` (those PubMed has). Concurrent calls share efetch
        requests: a batch stays open while its request waits for a rate-limit slot, and
        every call made meanwhile joins it, so a fan-out of N queries costs N esearch
        requests but far fewer than N efetch requests."""
        if not pmids:
            return []
        batch = self._open
        if batch is None or len(batch.pmids.keys() | set(pmids)) > MAX_EFETCH_IDS:
            batch = self._open = _Batch(asyncio.get_running_loop().create_future())
            task = asyncio.create_task(self._send(batch))
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)
        batch.pmids.update(dict.fromkeys(pmids))
        records = await asyncio.shield(batch.result)  # one caller giving up does not cancel the others' request
        wanted = set(pmids)
        return [r for r in records if r.pmid in wanted]

    async def _send(self, batch: _Batch) -> None:
        try:
            await self._limiter.acquire()
            if self._open is batch:
                self._open = None  # later callers start the next batch
            payload = await self._request("efetch.fcgi", {"db": "pubmed", "id": ",".join(batch.pmids), "retmode": "xml", "rettype": "abstract"})
            batch.result.set_result(parse_efetch(payload))
        except BaseException as exc:
            if self._open is batch:
                self._open = None
            if not batch.result.done():
                batch.result.set_exception(exc if isinstance(exc, Exception) else TransientError("efetch was cancelled"))
            if not isinstance(exc, Exception):
                raise


@dataclass
class _Batch:
    result: asyncio.Future[list[PubMedRecord]]
    pmids: dict[str, None] = field(default_factory=dict)  # ordered set

    def __post_init__(self) -> None:
        # Retrieve the exception even when every waiter was cancelled, so asyncio
        # does not log "exception was never retrieved".
        self.result.add_done_callback(lambda f: f.cancelled() or f.exception())


def _retry_after(response: httpx.Response) -> float:
    wait = retry_after_s(response.headers.get("Retry-After"))
    return DEFAULT_RETRY_AFTER_S if wait is None else wait


# -- the provider --------------------------------------------------------------------


class PubMedProvider:
    """PubMed as a search provider: records as sources, PRIMARY_SOURCE, their
    text (title and labelled abstract) archived. Records without an abstract carry no
    evidence to quote and are left out."""

    method = RetrievalMethod.PUBMED

    def __init__(self, client: PubMedClient, *, results_per_query: int) -> None:
        self._client = client
        self._n = results_per_query

    def cache_params(self) -> Mapping[str, object]:
        return {"retmax": self._n, "sort": "relevance"}

    async def search(self, query: str, texts: TextStore) -> list[Source]:
        pmids = await self._client.search(query, retmax=self._n)
        records = {r.pmid: r for r in await self._client.fetch(pmids)}
        relevance = rank_relevance(len(pmids))
        sources = []
        for pmid, rel in zip(pmids, relevance, strict=True):
            record = records.get(pmid)
            if record is None or not record.sections:
                continue
            text = canonicalize(record.text())
            metadata = {"pmid": record.pmid, "journal": record.journal, "authors": "; ".join(record.authors),
                        "doi": record.doi}
            sources.append(await archived_source(
                texts, text, id=source_id(record.url), url=record.url, title=record.title or f"PMID {record.pmid}",
                query=query, relevance=rel, published_at=record.published_at, metadata=metadata,
                method=RetrievalMethod.PUBMED, tier=CredibilityTier.PRIMARY_SOURCE,
            ))
        return sources
