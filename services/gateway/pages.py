"""The web page (``/``, ``/jobs/{id}``, its static files) and the two API routes only it
needs: the corpora a question may search, and a source's canonical text with the
passages its citations quote.

The page is plain HTML, CSS and JavaScript shipped in ``static/``: no build step, no
CDN, so it works offline and installs with the package. Every page answer carries a
Content-Security-Policy that allows only this origin's own scripts and styles, so text
from a source or a report can never run as script even if it slipped into the DOM.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import FileResponse, HTMLResponse
from pydantic import BaseModel

from services.gateway import jobs
from services.gateway.api import ErrorBody, Life, User, _valid_ids, settings_of, verify_source
from shared.stores.archive import Archive
from shared.research.corpora import CorpusInfo, read_corpora
from shared.research.envelope import Claim
from shared.platform.errors import PermanentError, TransientError
from shared.research.locators import parse_locator

__all__ = ["STATIC_DIR", "CitedSpan", "CorporaListing", "SourceText", "router"]

STATIC_DIR = Path(__file__).resolve().parent / "static"
_TYPES = {".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".png": "image/png", ".svg": "image/svg+xml"}
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
_PAGE_HEADERS = {"Content-Security-Policy": CSP, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}

router = APIRouter()
api = APIRouter(dependencies=[Depends(_valid_ids)])


# -- the page ------------------------------------------------------------------------


def _page() -> HTMLResponse:
    return HTMLResponse((STATIC_DIR / "index.html").read_text(encoding="utf-8"), headers=_PAGE_HEADERS)


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
async def index() -> HTMLResponse:
    """The page: submit a question, follow it, read its report."""
    return _page()


@router.get("/jobs/{job_id}", response_class=HTMLResponse, include_in_schema=False)
async def job_page(job_id: str) -> HTMLResponse:
    """The same page, opened on one job (the script reads the id from the address)."""
    try:
        ok = str(uuid.UUID(job_id)) == job_id.lower()
    except ValueError:
        ok = False
    if not ok:
        raise HTTPException(404, f"{job_id!r} is not a job id (a UUID)")
    return _page()


@router.get("/static/{name}", response_class=FileResponse, include_in_schema=False)
async def static_file(name: str) -> FileResponse:
    """One of the page's own files, by bare name: nothing outside ``static/`` is reachable."""
    path = STATIC_DIR / name
    if "/" in name or "\\" in name or name.startswith(".") or path.suffix not in _TYPES or not path.is_file():
        raise HTTPException(404, f"no static file {name!r}")
    return FileResponse(path, media_type=_TYPES[path.suffix], headers=_PAGE_HEADERS)


# -- corpora -------------------------------------------------------------------------


class CorporaListing(BaseModel):
    """The local corpora this gateway's data directory holds an index for."""

    corpora: list[CorpusInfo]


@api.get("/api/research/corpora", response_model=CorporaListing, tags=["corpora"])
async def list_corpora(user: User, request: Request) -> CorporaListing:
    """The corpora a job's ``corpora`` may name, with their document and chunk counts
    (read from each index's manifest; ``problem`` says why counts are missing)."""
    del user  # authenticated like every /api route; the corpora are shared by all users
    corpora = await asyncio.to_thread(read_corpora, settings_of(request).corpora_dir)
    return CorporaListing(corpora=corpora)


# -- a source's text with its cited passages ----------------------------------------------


class CitedSpan(BaseModel):
    """One passage of the canonical text: ``text == SourceText.text[start:end]`` when verified."""

    start: int | None  # None: the locator does not parse
    end: int | None
    page: int | None
    locator: str
    text: str
    verified: bool
    reason: str | None = None
    cited: bool  # quoted by one of the job's claims (else: an evidence snippet of the digest)
    claim_ids: list[str]


class SourceText(BaseModel):
    job_id: str
    source_id: str
    archive_key: str
    text: str | None  # the archived canonical text; None when it is not (or no longer) archived
    reason: str | None = None  # why the text is missing
    spans: list[CitedSpan]


def _span_bounds(locator: str) -> tuple[int | None, int | None, int | None]:
    try:
        page, start, end = parse_locator(locator)
    except ValueError:
        return None, None, None
    return start, end, page


@api.get(
    "/api/research/jobs/{job_id}/sources/{source_id}/text", response_model=SourceText, tags=["jobs"],
    responses={409: {"model": ErrorBody, "description": "The source has nothing to verify (no digest, no quoting claim)"}},
)
async def source_text(job_id: str, source_id: str, user: User, life: Life) -> SourceText:
    """The source's canonical text as archived, with every passage its digest and the
    job's claims point at (each re-verified: ``text[start:end] == passage``), so a
    reader sees each quote in its context."""
    checked = await verify_source(job_id, source_id, user, life)
    async with life.sessions() as session:
        result = await jobs.get_result(session, job_id=job_id)
    quoted: dict[tuple[str, str], list[str]] = {}
    for claim in (Claim.model_validate(c) for c in (result.claims if result else [])):
        for citation in claim.citations:
            if citation.source_id == source_id:
                quoted.setdefault((citation.locator, citation.quote), []).append(claim.id)
    text, reason = None, None
    try:
        archived = await Archive(life.js).get(checked.archive_key)
        text = archived.text if archived else None
        reason = None if archived else "the text is not archived (never archived, or past its retention)"
    except PermanentError as exc:
        reason = str(exc)
    except TransientError as exc:
        raise HTTPException(503, f"the digest archive did not answer: {exc}") from exc
    spans = []
    for s in checked.snippets:
        start, end, page = _span_bounds(s.locator)
        ids = quoted.get((s.locator, s.text), [])
        spans.append(CitedSpan(start=start, end=end, page=page, locator=s.locator, text=s.text,
                               verified=s.verified, reason=s.reason, cited=bool(ids), claim_ids=ids))
    spans.sort(key=lambda s: (s.start is None, s.start or 0))
    return SourceText(job_id=job_id, source_id=source_id, archive_key=checked.archive_key, text=text, reason=reason, spans=spans)


router.include_router(api)
