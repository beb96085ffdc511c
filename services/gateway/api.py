"""The HTTP API (jobs, results, sources, claims, cancel, queue, health) over the gateway's state; a job's
event stream is in events_sse.py."""

from __future__ import annotations

import asyncio
import logging
import re
import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, HTTPException, Query, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, field_validator
from sqlalchemy import text as sql_text

from services.gateway import jobs, resume, storage
from services.gateway.claims import ClaimsListing, claims_listing
from services.gateway.exports import REPORT_RESPONSES, ReportFormat, export
from services.gateway.lifecycle import Lifecycle
from services.gateway.models import JobPublic
from services.gateway.text import is_blank, text_problem
from services.gateway.traces import JobTrace, job_trace
from shared.stores.archive import Archive, SnippetCheck, archive_key, check_snippet, passages_to_verify
from shared.research.envelope import DigestPayload, ReportDepth, RetrievalMethod, new_job_id
from shared.platform.errors import PermanentError, TransientError
from shared.research.events import JobStatus
from shared.settings import GatewaySettings
from shared.platform.supervision import down_servers, failing_services

log = logging.getLogger(__name__)

# \Z, not $: "$" also matches before a trailing newline.
CORPUS_NAME = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")
CORPUS_NAME_SCHEMA = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"  # the same, as JSON Schema spells it
QUESTION_MAX_CHARS = 20_000  # a hard cap; RESEARCH_MAX_QUESTION_CHARS (default 4000) is usually lower
MAX_OFFSET = 1_000_000_000  # far beyond any listing; keeps OFFSET inside PostgreSQL's bigint
STORE_FULL_RETRY_AFTER_S = 10  # a full disk waits for someone to free space: ask for fewer, slower retries
IDEMPOTENCY_KEY = re.compile(r"\A[\x21-\x7e]{1,200}\Z")
OPENAPI_SECURITY = {"bearerAuth": {"type": "http", "scheme": "bearer", "description": "An API key from RESEARCH_API_KEYS"}}


class ErrorBody(BaseModel):
    """Every error answer: a message naming the problem, plus FastAPI's detail."""

    message: str
    detail: Any = None


def _valid_ids(request: Request) -> None:
    """Job ids are UUIDs: anything else (a NUL, a path fragment) is refused before it
    reaches a query."""
    job_id = request.path_params.get("job_id")
    if job_id is None:
        return
    try:
        ok = str(uuid.UUID(job_id)) == job_id.lower()
    except ValueError:
        ok = False
    if not ok:
        raise HTTPException(422, [{"loc": ["path", "job_id"], "msg": f"job_id {job_id!r} is not a job id (a UUID)", "type": "value_error"}])


router = APIRouter(dependencies=[Depends(_valid_ids)])


def _storable(field: str, value: str) -> str:
    problem = text_problem(value)
    if problem:
        raise ValueError(f"{field} {problem}")
    return value


def _visible(field: str, value: str) -> str:
    """Storable text with something to read in it, stripped."""
    _storable(field, value)
    if is_blank(value):
        raise ValueError(f"{field} must not be empty (it has no visible characters)")
    return value.strip()


class JobCreate(BaseModel):
    """A research request (the ``deep_research`` tool's input, plus the corpora to search)."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(
        min_length=1, max_length=QUESTION_MAX_CHARS,
        description="The research question (at most RESEARCH_MAX_QUESTION_CHARS characters, 4000 by default)",
    )
    context: str | None = Field(None, max_length=20_000, description="The user's needs, domain or constraints")
    max_iterations: int = Field(10, ge=1, le=50, description="Maximum research iterations")
    corpora: list[Annotated[str, Field(pattern=CORPUS_NAME_SCHEMA)]] | None = Field(
        None, max_length=50, description="Named corpora to search; default: all"
    )
    providers: list[RetrievalMethod] | None = Field(
        None, min_length=1, description="Providers to search (web, pubmed, rag); default: every configured one"
    )
    clarify: bool = Field(False, description="Let the planner ask up to 3 clarifying questions when the question is ambiguous")
    reuse: bool = Field(True, description="Start from the research of a similar question this user completed recently "
                        "(same corpora and providers; RESEARCH_REUSE_MAX_AGE_S, RESEARCH_REUSE_MIN_SIMILARITY)")
    time_budget_s: float | None = Field(
        None, gt=0, description="Seconds from the job's start to its deadline (at most RESEARCH_MAX_TIME_BUDGET_S); "
        "then every stage hands on what it has and the job completes with a partial report. Default: RESEARCH_JOB_DEADLINE_S",
    )
    max_cost_usd: float | None = Field(
        None, gt=0, description="Most the job's model calls may cost, in USD at the configured model prices (LLM_PRICES); "
        "a call that does not fit is answered offline and the report is partial. Default: RESEARCH_MAX_COST_USD",
    )
    report_depth: ReportDepth = Field(
        "standard", description="How much the report says: brief (a one-screen answer: the summary, at most 2 findings "
        "per section, 3 Verified Findings), standard, or detailed (every finding under each item it answers, up to 10 "
        "Verified Findings, each section written in its own model call, one more iteration while items are open)",
    )
    review_plan: bool = Field(False, description="Wait for the user to approve (or edit) the research plan before "
                              "research goes on: the job goes to AWAITING_INPUT with the plan under `plan`; "
                              "POST /api/research/jobs/{id}/plan approves it")

    @field_validator("question")
    @classmethod
    def _question(cls, v: str) -> str:
        return _visible("question", v)

    @field_validator("context")
    @classmethod
    def _context(cls, v: str | None) -> str | None:
        return _storable("context", v) if v is not None else None

    @field_validator("providers", mode="before")
    @classmethod
    def _local_is_rag(cls, v: object) -> object:
        """The provider name "local" is accepted for the local corpora's "rag"."""
        return ["rag" if p == "local" else p for p in v] if isinstance(v, list) else v

    @field_validator("corpora")
    @classmethod
    def _corpora(cls, v: list[str] | None) -> list[str] | None:
        if v is None:
            return None
        for name in v:
            if not CORPUS_NAME.fullmatch(name):
                raise ValueError(f"invalid corpus name {name!r}: use letters, digits, '.', '_' or '-'")
        return list(dict.fromkeys(v))


class JobAccepted(BaseModel):
    job_id: str
    status: JobStatus


class JobList(BaseModel):
    items: list[JobPublic]
    total: int
    limit: int
    offset: int


def lifecycle(request: Request) -> Lifecycle:
    return request.app.state.lifecycle


def settings_of(request: Request) -> GatewaySettings:
    return request.app.state.settings


def current_user(request: Request) -> str:
    keys: dict[str, str] = request.app.state.api_keys
    if not keys:
        return "local"
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    user = keys.get(token.strip()) if scheme.lower() == "bearer" else None
    if user is None:
        raise HTTPException(401, "missing or invalid API key: send `Authorization: Bearer <key>`", headers={"WWW-Authenticate": "Bearer"})
    return user


User = Annotated[str, Depends(current_user)]
Life = Annotated[Lifecycle, Depends(lifecycle)]


def _validation_error(field: str, message: str) -> HTTPException:
    return HTTPException(422, [{"loc": ["body", field], "msg": message, "type": "value_error"}])


async def _owned_job(life: Lifecycle, job_id: str, user: str):  # noqa: ANN202
    async with life.sessions() as session:
        job = await jobs.get_job(session, job_id=job_id, user_id=user)
    if job is None:
        # Another user's job answers exactly like a missing one.
        raise HTTPException(404, f"job {job_id} not found")
    return job


@router.post("/api/research/jobs", status_code=202, response_model=JobAccepted, tags=["jobs"])
async def submit_job(
    body: JobCreate, user: User, life: Life, request: Request,
    idempotency_key: Annotated[str | None, Header(
        alias="Idempotency-Key", max_length=200,
        description="Any printable ASCII token (at most 200): the same user and key get the same job back; "
        "the same key with a different request is refused (409)",
    )] = None,
) -> JobAccepted:
    """202: the job is stored (it is announced and started by the outbox relay and
    admission, also if NATS is briefly unavailable). 503 with Retry-After: nothing was
    stored; retrying is safe, and with an Idempotency-Key never creates a second job."""
    settings = settings_of(request)
    if len(body.question) > settings.research_max_question_chars:
        raise _validation_error("question", f"question is longer than {settings.research_max_question_chars} characters")
    if body.time_budget_s is not None and body.time_budget_s > settings.research_max_time_budget_s:
        raise _validation_error("time_budget_s", f"time_budget_s {body.time_budget_s:g} is above the largest allowed, "
                                f"{settings.research_max_time_budget_s:g} seconds (RESEARCH_MAX_TIME_BUDGET_S)")
    if idempotency_key is not None and not IDEMPOTENCY_KEY.fullmatch(idempotency_key):
        raise HTTPException(422, [{"loc": ["header", "Idempotency-Key"], "msg": "Idempotency-Key must be 1-200 printable ASCII characters", "type": "value_error"}])
    if life.event_store_full is not None:  # a job stored now could not be announced
        raise HTTPException(503, storage.EVENT_STORE_FULL, headers={"Retry-After": str(STORE_FULL_RETRY_AFTER_S)})
    providers = [p.value for p in dict.fromkeys(body.providers)] if body.providers else None
    async with life.sessions() as session:
        try:
            job, _created = await jobs.create_job(
                session, job_id=new_job_id(), user_id=user, question=body.question, context=body.context,
                max_iterations=body.max_iterations, corpora=body.corpora,
                providers=providers, clarify=body.clarify, time_budget_s=body.time_budget_s,
                max_cost_usd=body.max_cost_usd, report_depth=body.report_depth, review_plan=body.review_plan,
                rate_max=settings.research_rate_limit_max, rate_window_s=settings.research_rate_limit_window_s,
                idempotency_key=idempotency_key,
                request_digest=jobs.request_hash(body.model_dump(mode="json")) if idempotency_key is not None else None,
                reuse=body.reuse,
            )
        except jobs.IdempotencyConflict as exc:
            raise HTTPException(409, str(exc)) from exc
        except jobs.RateLimited as exc:
            raise HTTPException(
                429,
                f"rate limit: at most {settings.research_rate_limit_max} jobs per {settings.research_rate_limit_window_s}s",
                headers={"Retry-After": str(exc.retry_after_s)},
            ) from exc
    life.kick()
    return JobAccepted(job_id=job.id, status=job.status)


@router.get("/api/research/jobs", response_model=JobList, tags=["jobs"])
async def list_jobs(
    user: User, life: Life,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    status: JobStatus | None = None,
) -> JobList:
    async with life.sessions() as session:
        rows, total = await jobs.list_jobs(session, user_id=user, limit=limit, offset=offset, status=status)
    return JobList(items=[JobPublic.of(j) for j in rows], total=total, limit=limit, offset=offset)


@router.get("/api/research/jobs/{job_id}", response_model=JobPublic, tags=["jobs"])
async def get_job(job_id: str, user: User, life: Life) -> JobPublic:
    job = await _owned_job(life, job_id, user)
    async with life.sessions() as session:
        return JobPublic.of(job, follow_ups=await jobs.follow_up_ids(session, job_id=job_id))


@router.get("/api/research/jobs/{job_id}/result", tags=["jobs"])
async def get_result(job_id: str, user: User, life: Life) -> dict[str, Any]:
    job = await _owned_job(life, job_id, user)
    if job.status != JobStatus.COMPLETED:
        detail = f"job is {job.status.value}" + (f": {job.error}" if job.error else "") + "; no result"
        raise HTTPException(409, detail)
    async with life.sessions() as session:
        result = await jobs.get_result(session, job_id=job_id)
    if result is None:  # pragma: no cover - COMPLETED is written with its result
        raise HTTPException(500, "result missing for a completed job")
    return {
        "job_id": job_id,
        "status": job.status.value,
        "report": result.report,
        "output": result.output,
        "confidence": result.confidence,
        "claims": result.claims,
        "rejected_claims": result.rejected_claims,
        "verified_findings": result.verified_findings,
        "sentences_removed": result.sentences_removed,
        # Sentences and claims by check level, removals by reason, the judge (null for
        # results stored before levels were recorded).
        "verification": result.verification,
        "offline_parts": result.offline_parts,
        "council": result.council,
        "memory": result.memory,
        "tokenUsage": result.token_usage,
        "engine": result.engine,
        "partial": result.partial,
        "partial_reason": result.partial_reason,
        "created_at": result.created_at,
    }


@router.get("/api/research/jobs/{job_id}/report", tags=["jobs"], response_class=Response, responses=REPORT_RESPONSES)
async def get_report(
    job_id: str, user: User, life: Life,
    fmt: Annotated[ReportFormat, Query(alias="format", description="md, html (self-contained), pdf or docx")] = ReportFormat.MD,
) -> Response:
    """The completed job's report as a file; citations [n] link to their Sources entry."""
    job = await _owned_job(life, job_id, user)
    async with life.sessions() as session:
        result = await jobs.get_result(session, job_id=job_id) if job.status == JobStatus.COMPLETED else None
    if result is None:
        raise HTTPException(409, f"job is {job.status.value}: its report exists once it has completed")
    out = await asyncio.to_thread(export, result.report, fmt, f"report-{job_id}",  # PDF/DOCX: CPU work
                                  pdf_font=life.settings.research_pdf_font)
    return Response(out.content, media_type=out.media_type, headers=out.headers)


@router.get("/api/research/jobs/{job_id}/trace", response_model=JobTrace, tags=["jobs"])
async def get_trace(job_id: str, user: User, life: Life) -> JobTrace:
    """What each research pass did (searches per provider, results, checklist, claims
    kept and rejected, each stage's duration and tokens) and the research memory; for a
    job in any status, and kept after the job's events have expired."""
    job = await _owned_job(life, job_id, user)
    async with life.sessions() as session:
        result = await jobs.get_result(session, job_id=job_id) if job.status == JobStatus.COMPLETED else None
        return await job_trace(session, job_id=job_id, status=job.status.value,
                               stored_memory=result.memory if result is not None else None)


@router.get("/api/research/jobs/{job_id}/sources", tags=["jobs"])
async def get_sources(job_id: str, user: User, life: Life) -> dict[str, Any]:
    await _owned_job(life, job_id, user)
    async with life.sessions() as session:
        rows = await jobs.get_sources(session, job_id=job_id)
    return {"job_id": job_id, "sources": [r.model_dump(exclude={"id", "job_id"}) for r in rows]}


@router.get("/api/research/jobs/{job_id}/claims", response_model=ClaimsListing, tags=["jobs"])
async def get_claims(job_id: str, user: User, life: Life) -> ClaimsListing:
    """The job's claims: verified ones (confidence, citations with verified locators,
    checklist items) and the ones the check rejected, each with its reason."""
    job = await _owned_job(life, job_id, user)
    if job.status != JobStatus.COMPLETED:
        raise HTTPException(409, f"job is {job.status.value}: claims are listed once it has completed")
    async with life.sessions() as session:
        result = await jobs.get_result(session, job_id=job_id)
    if result is None:
        raise HTTPException(409, "the job's result is not stored yet")
    return claims_listing(job_id, result.claims, result.rejected_claims)


class SourceVerification(BaseModel):
    """Each evidence locator of one source re-checked against the archived text."""

    job_id: str
    source_id: str
    archive_key: str
    archived: bool  # the archived text was found (and matches its hash)
    archived_chars: int | None
    verified: int
    total: int
    all_verified: bool
    snippets: list[SnippetCheck]


@router.get("/api/research/jobs/{job_id}/sources/{source_id}/verify", response_model=SourceVerification, tags=["jobs"])
async def verify_source(job_id: str, source_id: str, user: User, life: Life) -> SourceVerification:
    """Locator verification: ``archived_text[start:end] == snippet.text`` for every
    evidence snippet of the source's digest and every passage of it the job's claims
    quote (and the page, for a page locator). Digested or not, a source's canonical
    text is archived (by the digest stage, else by synthesis) under its text hash."""
    await _owned_job(life, job_id, user)
    async with life.sessions() as session:
        rows = await jobs.get_sources(session, job_id=job_id)
        result = await jobs.get_result(session, job_id=job_id)
    row = next((r for r in rows if r.source_id == source_id), None)
    if row is None:
        raise HTTPException(404, f"source {source_id} not found in job {job_id} (sources are stored when the job completes)")
    digest = DigestPayload.model_validate(row.digest) if row.digest is not None else None
    passages = passages_to_verify(digest, result.claims if result else [], source_id)
    if not passages:
        why = (row.fidelity or {}).get("reason", "not digested")
        raise HTTPException(409, f"source {source_id} has no digest ({why}) and no claim quotes it: nothing to verify")
    key = archive_key(digest.source_text_hash) if digest else row.text_hash
    corrupt: str | None = None
    try:
        archived = await Archive(life.js).get(key)
    except PermanentError as exc:
        archived, corrupt = None, str(exc)
    except TransientError as exc:
        raise HTTPException(503, f"the digest archive did not answer: {exc}") from exc
    checks = [check_snippet(archived, s) for s in passages]
    if corrupt:
        checks = [c.model_copy(update={"reason": corrupt}) for c in checks]
    verified = sum(c.verified for c in checks)
    return SourceVerification(
        job_id=job_id, source_id=source_id, archive_key=key, archived=archived is not None,
        archived_chars=len(archived.text) if archived else None, verified=verified, total=len(checks),
        all_verified=verified == len(checks), snippets=checks,
    )


@router.post("/api/research/jobs/{job_id}/cancel", response_model=JobPublic, tags=["jobs"])
async def cancel_job(job_id: str, user: User, life: Life) -> JobPublic:
    job = await _owned_job(life, job_id, user)
    if jobs.is_terminal(job.status):
        raise HTTPException(409, f"job is already {job.status.value}")
    t = await life.cancel(job_id)
    if t is None:
        job = await _owned_job(life, job_id, user)
        raise HTTPException(409, f"job is already {job.status.value}")
    return JobPublic.of(await _owned_job(life, job_id, user))


class ClarificationAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    answer: str = Field(min_length=1, max_length=20_000, description="The answer to the job's clarifying questions")

    @field_validator("answer")
    @classmethod
    def _answer(cls, v: str) -> str:
        return _visible("answer", v)


@router.post("/api/research/jobs/{job_id}/clarification", response_model=JobPublic, tags=["jobs"])
async def answer_clarification(job_id: str, body: ClarificationAnswer, user: User, life: Life) -> JobPublic:
    """Answer the planner's clarifying questions; the job queues again and plans with
    the answer."""
    job = await _owned_job(life, job_id, user)
    if job.status != JobStatus.AWAITING_INPUT or await life.clarify(job_id, body.answer) is None:
        job = await _owned_job(life, job_id, user)
        raise HTTPException(409, f"job is {job.status.value}, not waiting for clarification")
    return JobPublic.of(await _owned_job(life, job_id, user))


@router.post("/api/research/jobs/{job_id}/resume", status_code=202, response_model=JobPublic, tags=["jobs"])
async def resume_job(job_id: str, user: User, life: Life) -> JobPublic:
    """Start a FAILED, EXPIRED or CANCELLED job again from its last finished stage
    (searches already run are not repeated; the token count continues). 202: queued,
    admission starts it under the concurrency limit. 409: the job is not resumable."""
    job = await _owned_job(life, job_id, user)
    if job.status not in resume.RESUMABLE or await resume.request_resume(life.sessions, life.js, job_id=job_id) is None:
        job = await _owned_job(life, job_id, user)
        raise HTTPException(409, f"job is {job.status.value}: only a FAILED, EXPIRED or CANCELLED job can be resumed")
    job = await _owned_job(life, job_id, user)
    await resume.carry_spend(life.js, job)
    life.kick()
    return JobPublic.of(job)


@router.get("/api/research/queue/summary", tags=["queue"])
async def queue_summary(user: User, life: Life) -> dict[str, Any]:
    async with life.sessions() as session:
        mine = await jobs.queue_summary(session, user_id=user)
        everyone = await jobs.queue_summary(session)
    return {"counts": mine, "system": everyone, "max_concurrency": life.settings.research_max_concurrency}


@router.get("/healthz", tags=["health"])
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", tags=["health"])
async def readyz(request: Request) -> JSONResponse:
    life: Lifecycle | None = getattr(request.app.state, "lifecycle", None)
    checks = {"nats": False, "postgres": False}
    errors: dict[str, str] = {}
    # A server `deepresearch up` started and is starting again after it exited: named,
    # and not probed (a probe of a stopped nats-server would wait out its timeout).
    servers_down = down_servers(settings_of(request).data_dir)
    if life is not None:
        async def postgres() -> None:
            async with life.sessions() as session:
                await session.exec(sql_text("SELECT 1"))  # type: ignore[call-overload]

        for name, probe in (("nats", life.js.account_info), ("postgres", postgres)):
            if name in servers_down:
                errors[name] = "down: the supervisor is starting it again (see servers_down)"
                continue
            try:
                await asyncio.wait_for(probe(), 2.0)
                checks[name] = True
            except Exception as exc:  # noqa: BLE001 - any failure means not ready; said in the body and the log
                errors[name] = f"{type(exc).__name__}: {exc}"[:200]
                log.warning("readiness: %s check failed: %s", name, errors[name])
    # A service that `deepresearch up` keeps restarting would leave every job unfinished.
    failing = failing_services(settings_of(request).data_dir)
    # A background loop (admission, the outbox relay, a consumer) that keeps failing
    # leaves jobs queued or unannounced although both servers answer.
    loops = life.loops.problems() if life is not None else {}
    ready = all(checks.values()) and not failing and not loops and not servers_down
    body = ({"ready": ready, **checks} | ({"errors": errors} if errors else {})
            | ({"servers_down": servers_down} if servers_down else {})
            | ({"failing_services": failing} if failing else {}) | ({"loops": loops} if loops else {}))
    return JSONResponse(body, status_code=200 if ready else 503)
