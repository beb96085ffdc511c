"""Data access for jobs: keyword-only functions over an AsyncSession.

Every lifecycle transition locks the job's row and moves it only from the statuses it
expects (``... WHERE status IN (...)``), so two gateway processes (or admission racing a
cancellation) can never both move a job, and a late event for a job that already
finished changes nothing. Each transition writes its status event to the outbox in the
same transaction: it is announced if and only if it was committed.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from services.gateway import outbox
from services.gateway.models import Job, Result, SourceRow
from services.gateway.text import clean, clean_json
from shared import subjects
from shared.research.envelope import JobEnvelope, Usage, utcnow
from shared.subjects import overall_progress
from shared.research.events import TERMINAL_STATUSES, JobStatus, JobStatusChanged, ResearchResult

ADMISSION_LOCK = 7_215_012  # pg_advisory_xact_lock key serializing admission across gateways
_ACTIVE = (JobStatus.QUEUED, JobStatus.PROCESSING, JobStatus.AWAITING_INPUT)

class IdempotencyConflict(Exception):
    """The Idempotency-Key was used before with a different request."""

    def __init__(self, job_id: str) -> None:
        super().__init__(f"this Idempotency-Key was already used for job {job_id} with a different request")
        self.job_id = job_id


def request_hash(request: dict) -> str:
    """A stable digest of a submission, to tell a retry from a different request."""
    return hashlib.sha256(json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")).hexdigest()


class RateLimited(Exception):
    def __init__(self, retry_after_s: int) -> None:
        super().__init__(f"rate limited; retry after {retry_after_s}s")
        self.retry_after_s = retry_after_s


@dataclass(frozen=True)
class Transition:
    job_id: str
    status: JobStatus
    previous: JobStatus | None
    reason: str | None = None


async def create_job(
    session: AsyncSession,
    *,
    job_id: str,
    user_id: str,
    question: str,
    context: str | None,
    max_iterations: int,
    corpora: list[str] | None,
    providers: list[str] | None = None,
    clarify: bool = False,
    time_budget_s: float | None = None,
    max_cost_usd: float | None = None,
    report_depth: str = "standard",
    review_plan: bool = False,
    rate_max: int,
    rate_window_s: int,
    idempotency_key: str | None = None,
    request_digest: str | None = None,
    reuse: bool = True,
    parent_job_id: str | None = None,
) -> tuple[Job, bool]:
    """Insert a QUEUED job and its QUEUED status event, enforcing the per-user
    submission rate in the same transaction (serialized per user by an advisory lock,
    so it holds across gateways). With an ``idempotency_key`` the user already used,
    return that job instead (``created`` is False) if the request is the same, or raise
    IdempotencyConflict. Returns ``(job, created)``."""
    now = utcnow()
    await session.exec(sa.select(sa.func.pg_advisory_xact_lock(sa.func.hashtext("rate:" + user_id))))  # type: ignore[call-overload]
    if idempotency_key is not None:
        earlier = (await session.exec(select(Job).where(Job.user_id == user_id, Job.idempotency_key == idempotency_key))).first()
        if earlier is not None:
            # Nothing is written: the caller's session ends the transaction (and the lock).
            if earlier.request_hash != request_digest:
                raise IdempotencyConflict(earlier.id)
            return earlier, False
    window_start = now - timedelta(seconds=rate_window_s)
    recent = (
        await session.exec(
            select(Job.created_at)
            .where(Job.user_id == user_id, col(Job.created_at) > window_start)
            .order_by(col(Job.created_at))
        )
    ).all()
    if len(recent) >= rate_max:
        oldest_counted = recent[len(recent) - rate_max]
        retry = (oldest_counted + timedelta(seconds=rate_window_s) - now).total_seconds()
        raise RateLimited(max(1, math.ceil(retry)))
    job = Job(
        id=job_id, user_id=user_id, question=clean(question), context=clean(context) if context is not None else None,
        max_iterations=max_iterations, corpora=clean_json(corpora), providers=providers, clarify=clarify,
        time_budget_s=time_budget_s, max_cost_usd=max_cost_usd, report_depth=report_depth, review_plan=review_plan,
        status=JobStatus.QUEUED, created_at=now, updated_at=now,
        idempotency_key=idempotency_key, request_hash=request_digest, reuse=reuse, parent_job_id=parent_job_id,
    )
    session.add(job)
    outbox.enqueue_status(session, JobStatusChanged(job_id=job_id, status=JobStatus.QUEUED))
    await session.commit()
    await session.refresh(job)
    return job, True


async def get_job(session: AsyncSession, *, job_id: str, user_id: str | None = None) -> Job | None:
    query = select(Job).where(Job.id == job_id)
    if user_id is not None:
        query = query.where(Job.user_id == user_id)
    return (await session.exec(query)).first()


async def follow_up_ids(session: AsyncSession, *, job_id: str) -> list[str]:
    """The ids of the jobs that follow ``job_id`` up, oldest first."""
    return list((await session.exec(select(Job.id).where(Job.parent_job_id == job_id).order_by(col(Job.seq)))).all())


async def list_jobs(session: AsyncSession, *, user_id: str, limit: int, offset: int, status: JobStatus | None = None) -> tuple[Sequence[Job], int]:
    where = [Job.user_id == user_id]
    if status is not None:
        where.append(Job.status == status)
    total = (await session.exec(select(sa.func.count()).select_from(Job).where(*where))).one()  # type: ignore[call-overload]
    rows = (await session.exec(select(Job).where(*where).order_by(col(Job.seq).desc()).limit(limit).offset(offset))).all()
    return rows, int(total)


async def queue_summary(session: AsyncSession, *, user_id: str | None = None) -> dict[str, int]:
    query = select(Job.status, sa.func.count()).group_by(Job.status)  # type: ignore[call-overload]
    if user_id is not None:
        query = query.where(Job.user_id == user_id)
    counts = {s.value: 0 for s in JobStatus}
    for status, n in (await session.exec(query)).all():
        counts[str(status)] = int(n)
    return counts


async def _transition(
    session: AsyncSession, *, job_id: str, to: JobStatus, from_: Sequence[JobStatus], reason: str | None = None, values: dict | None = None
) -> Transition | None:
    current = (await session.exec(select(Job.status).where(Job.id == job_id).with_for_update())).first()
    if current is None or JobStatus(current) not in from_:
        return None
    # The clock is read once the row is ours: admission may have started the job while
    # we waited for the lock. GREATEST also absorbs clock skew between gateway hosts.
    now = utcnow()
    reason = clean(reason) if reason is not None else None
    update: dict = {"status": to, "updated_at": now, **(values or {})}
    if to in TERMINAL_STATUSES:
        update["finished_at"] = sa.func.greatest(col(Job.started_at), now)
        if reason is not None:
            update["error"] = reason
    moved = await session.exec(
        sa.update(Job).where(col(Job.id) == job_id, col(Job.status).in_(from_)).values(**update).execution_options(synchronize_session=False)  # type: ignore[call-overload]
    )
    if moved.rowcount != 1:  # pragma: no cover - the row lock above makes this impossible
        return None
    t = Transition(job_id, to, JobStatus(current), reason)
    outbox.enqueue_status(session, JobStatusChanged(job_id=job_id, status=to, previous=t.previous, reason=reason))
    return t


async def cancel_job(session: AsyncSession, *, job_id: str) -> Transition | None:
    t = await _transition(session, job_id=job_id, to=JobStatus.CANCELLED, from_=_ACTIVE, reason="cancelled by the user")
    await session.commit()
    return t


async def fail_job(session: AsyncSession, *, job_id: str, reason: str) -> Transition | None:
    t = await _transition(session, job_id=job_id, to=JobStatus.FAILED, from_=_ACTIVE, reason=reason)
    await session.commit()
    return t


async def record_progress(session: AsyncSession, *, job_id: str, stage: str, iteration: int, within: float) -> None:
    """Progress only moves forward, and only for a job that is still running."""
    progress = overall_progress(stage, within)
    await session.exec(
        sa.update(Job)  # type: ignore[call-overload]
        .where(col(Job.id) == job_id, col(Job.status) == JobStatus.PROCESSING)
        .values(
            stage=stage,
            iteration=sa.func.greatest(Job.iteration, iteration),
            progress=sa.func.greatest(Job.progress, progress),
            updated_at=utcnow(),
        )
    )
    await session.commit()


@dataclass
class JobProgress:
    """What a batch of progress and stage events says about one running job: the last
    stage heard of, the highest iteration and progress, the last transient error and
    the largest usage counters (each the same as applying the events one by one)."""

    stage: str | None = None
    iteration: int = 0
    progress: float = 0.0
    error: str | None = None
    tokens: tuple[int, int, int] | None = None  # input tokens, output tokens, model calls
    cost_usd: float = 0.0

    def add_usage(self, usage: Usage) -> None:
        seen = (usage.input_tokens, usage.output_tokens, usage.calls)
        self.tokens = seen if self.tokens is None else tuple(max(a, b) for a, b in zip(self.tokens, seen))  # type: ignore[assignment]
        self.cost_usd = max(self.cost_usd, usage.cost_usd)

    def values(self) -> dict:
        out: dict = {}
        if self.stage is not None:
            out |= {
                "stage": self.stage,
                "iteration": sa.func.greatest(Job.iteration, self.iteration),
                "progress": sa.func.greatest(Job.progress, self.progress),
            }
        if self.error is not None:
            out["error"] = clean(self.error)
        if self.tokens is not None:
            # Token counters only grow: a replayed or late event never lowers them.
            out |= {
                "input_tokens": sa.func.greatest(Job.input_tokens, self.tokens[0]),
                "output_tokens": sa.func.greatest(Job.output_tokens, self.tokens[1]),
                "llm_calls": sa.func.greatest(Job.llm_calls, self.tokens[2]),
                "cost_usd": sa.func.greatest(Job.cost_usd, self.cost_usd),
            }
        return out


async def record_progress_batch(session: AsyncSession, updates: dict[str, JobProgress]) -> int:
    """Store each job's coalesced progress with one conditional UPDATE (only a job that
    is still running moves), all in one transaction; commits. No ORM state is involved:
    the statements go straight to PostgreSQL. Returns how many jobs moved."""
    now = utcnow()
    moved = 0
    for job_id, update in updates.items():
        values = update.values()
        if not values:
            continue
        result = await session.exec(
            sa.update(Job)  # type: ignore[call-overload]
            .where(col(Job.id) == job_id, col(Job.status) == JobStatus.PROCESSING)
            .values(**values, updated_at=now)
            .execution_options(synchronize_session=False)
        )
        moved += result.rowcount
    await session.commit()
    return moved


async def record_retry(session: AsyncSession, *, job_id: str, stage: str, delivery: int, error: str) -> None:
    """Keep the last transient error visible on a running job (and in the reason if
    the job finally fails)."""
    await session.exec(
        sa.update(Job)  # type: ignore[call-overload]
        .where(col(Job.id) == job_id, col(Job.status) == JobStatus.PROCESSING)
        .values(error=clean(f"{stage} attempt {delivery} failed: {error}"), updated_at=utcnow())
    )
    await session.commit()


def _usage_values(usage: Usage) -> dict:
    """Token counters only grow: a replayed or late event never lowers them."""
    return {
        "input_tokens": sa.func.greatest(Job.input_tokens, usage.input_tokens),
        "output_tokens": sa.func.greatest(Job.output_tokens, usage.output_tokens),
        "llm_calls": sa.func.greatest(Job.llm_calls, usage.calls),
        "cost_usd": sa.func.greatest(Job.cost_usd, usage.cost_usd),
    }


async def record_usage(session: AsyncSession, *, job_id: str, usage: Usage) -> None:
    """The job's cumulative token usage, as reported by a stage that finished."""
    await session.exec(
        sa.update(Job).where(col(Job.id) == job_id, col(Job.status) == JobStatus.PROCESSING).values(**_usage_values(usage))  # type: ignore[call-overload]
    )
    await session.commit()


async def await_input(session: AsyncSession, *, job_id: str, questions: list[str], usage: Usage) -> Transition | None:
    """PROCESSING -> AWAITING_INPUT: the planner asked clarifying questions. The job
    leaves the running set, so its concurrency slot is free while it waits."""
    t = await _transition(
        session, job_id=job_id, to=JobStatus.AWAITING_INPUT, from_=(JobStatus.PROCESSING,),
        reason="waiting for answers to clarifying questions",
        # A plan an earlier run left waiting is not what the job waits on now.
        values={"clarifying_questions": clean_json(questions), "progress": 0.0, "plan_envelope": None,
                **_usage_values(usage)},
    )
    await session.commit()
    return t


async def answer_clarification(session: AsyncSession, *, job_id: str, answer: str) -> Transition | None:
    """AWAITING_INPUT -> QUEUED with the user's answer; admission starts it again. A
    job that waits on its plan (services/gateway/plan_review.py) takes no answer."""
    if (await session.exec(select(Job.plan_envelope).where(Job.id == job_id, col(Job.plan_reviewed_at).is_(None)))).first() is not None:
        return None
    t = await _transition(
        session, job_id=job_id, to=JobStatus.QUEUED, from_=(JobStatus.AWAITING_INPUT,),
        reason="clarification received", values={"clarification": clean(answer)},
    )
    await session.commit()
    return t


async def complete_job(session: AsyncSession, *, job_id: str, result: ResearchResult) -> Transition | None:
    """Persist the result and sources and mark the job COMPLETED, in one transaction.
    The unique job_id on research_results makes a replayed event write nothing."""
    now = utcnow()
    t = await _transition(
        session, job_id=job_id, to=JobStatus.COMPLETED, from_=_ACTIVE,
        values={
            "progress": 1.0, "stage": "synthesize", "partial": result.partial,
            "error": clean(result.partial_reason) if result.partial_reason else None,
            "input_tokens": result.usage.input_tokens, "output_tokens": result.usage.output_tokens,
            "llm_calls": result.usage.calls, "cost_usd": result.usage.cost_usd,
            "iteration": result.output.iterations_used - 1,
        },
    )
    if t is None:
        await session.rollback()
        return None
    # Cleaned: PostgreSQL rejects NUL in text and JSONB, and a result that can never
    # be stored would keep its job running until it expired.
    citations = clean_json([s.model_dump(mode="json") for s in result.output.sources])
    await session.exec(
        pg_insert(Result)  # type: ignore[call-overload]
        .values(
            job_id=job_id, report=clean(result.report), output=clean_json(result.output.model_dump(mode="json")),
            citations=citations, claims=clean_json([c.model_dump(mode="json") for c in result.claims]),
            rejected_claims=clean_json([r.model_dump(mode="json") for r in result.rejected_claims]),
            verified_findings=clean_json([f.model_dump(mode="json") for f in result.verified_findings]),
            sentences_removed=result.sentences_removed,
            verification=clean_json(result.verification.model_dump(mode="json")),
            offline_parts=clean_json(list(result.offline_parts)),
            council=clean_json([c.model_dump(mode="json") for c in result.council]),
            memory=clean_json(result.memory.model_dump(mode="json")) if result.memory is not None else None,
            confidence=clean_json(result.confidence.model_dump(mode="json")),
            token_usage=clean_json({
                "input_tokens": result.usage.input_tokens, "output_tokens": result.usage.output_tokens,
                "llm_calls": result.usage.calls,
                # USD at the configured prices (LLM_PRICES); the unpriced models' calls count 0.
                "cost_usd": result.usage.cost_usd, "unpriced_models": result.usage.unpriced_models,
                "by_stage": result.usage.model_dump(mode="json")["by_stage"],
            }),
            engine=clean(result.engine), partial=result.partial,
            partial_reason=clean(result.partial_reason) if result.partial_reason else None, created_at=now,
        )
        .on_conflict_do_nothing(index_elements=["job_id"])
    )
    rows = [
        dict(
            job_id=job_id, source_id=clean(s.id), url=clean(s.url), title=clean(s.title), retrieval_method=s.retrieval_method.value,
            credibility_tier=s.credibility_tier.value, domain_authority=s.domain_authority, published_at=s.published_at,
            relevance_score=s.relevance_score, authority_score=s.authority_score, recency_score=s.recency_score,
            relevance_component=s.relevance_component, credibility_score=s.credibility_score,
            composite_score=s.composite_score, text_hash=clean(s.text_hash), excerpt=clean(s.text),
            digest=clean_json(s.digest.model_dump(mode="json")) if s.digest else None,
            fidelity=clean_json(s.fidelity.model_dump(mode="json")) if s.fidelity else None, created_at=now,
        )
        for s in result.scored_sources
    ]
    if rows:
        await session.exec(pg_insert(SourceRow).values(rows).on_conflict_do_nothing(index_elements=["job_id", "source_id"]))  # type: ignore[call-overload]
    await session.commit()
    return t


async def admit(
    session: AsyncSession, *, max_concurrency: int, envelope_for: Callable[[Job], JobEnvelope | Awaitable[JobEnvelope]],
) -> list[Job]:
    """Move the oldest QUEUED jobs to PROCESSING while slots are free, writing each
    one's plan command and status event to the outbox; commits.

    The count of running jobs is taken under a transaction-scoped advisory lock, so the
    limit holds across gateway processes (only admission adds PROCESSING jobs). The
    queued rows are locked (``FOR UPDATE SKIP LOCKED``: a row a cancellation holds is
    left to it) and moved only if still QUEUED, so a job cancelled meanwhile stays
    cancelled."""
    await session.exec(sa.select(sa.func.pg_advisory_xact_lock(ADMISSION_LOCK)))  # type: ignore[call-overload]
    running = (await session.exec(select(sa.func.count()).select_from(Job).where(Job.status == JobStatus.PROCESSING))).one()  # type: ignore[call-overload]
    free = max_concurrency - int(running)
    if free <= 0:
        await session.rollback()
        return []
    ids = (
        await session.exec(
            select(Job.id).where(Job.status == JobStatus.QUEUED).order_by(col(Job.seq)).limit(free).with_for_update(skip_locked=True)
        )
    ).all()
    if not ids:
        await session.rollback()
        return []
    now = utcnow()
    moved = await session.exec(
        sa.update(Job)  # type: ignore[call-overload]
        .where(col(Job.id).in_(ids), col(Job.status) == JobStatus.QUEUED)
        .values(status=JobStatus.PROCESSING, started_at=now, updated_at=now, stage="plan", finished_at=None)
        .returning(Job.id)
    )
    admitted_ids = set(moved.scalars().all())
    admitted = [j for j in (await session.exec(select(Job).where(col(Job.id).in_(admitted_ids)).order_by(col(Job.seq)))).all()]
    for job in admitted:
        envelope = envelope_for(job)
        if inspect.isawaitable(envelope):  # a resumed or reusing job's command is read from the object store
            envelope = await envelope
        # A job resumed after clarification plans again: a new Msg-Id, or JetStream
        # would drop it as a duplicate of the first plan command.
        msg_id = envelope.msg_id + (":clarified" if job.clarification is not None else "")
        outbox.enqueue(session, subject=subjects.stage_subject(envelope.stage), message=envelope, msg_id=msg_id)
        outbox.enqueue_status(session, JobStatusChanged(job_id=job.id, status=JobStatus.PROCESSING, previous=JobStatus.QUEUED))
    await session.commit()
    return admitted


async def expiry_candidates(session: AsyncSession, *, ttl_s: int) -> list[str]:
    """Active jobs older than the TTL (the caller stops their stages, then expires them)."""
    cutoff = utcnow() - timedelta(seconds=ttl_s)
    # A resumed job's age counts from its resume: it would otherwise expire at once.
    age_from = sa.func.coalesce(col(Job.resumed_at), col(Job.created_at))
    return list((await session.exec(select(Job.id).where(col(Job.status).in_(_ACTIVE), age_from < cutoff))).all())


async def expire_jobs(session: AsyncSession, *, job_ids: Sequence[str], ttl_s: int) -> list[Transition]:
    out = []
    for job_id in job_ids:
        t = await _transition(session, job_id=job_id, to=JobStatus.EXPIRED, from_=_ACTIVE, reason=f"expired: older than the {ttl_s}s TTL")
        if t:
            out.append(t)
    await session.commit()
    return out


async def get_result(session: AsyncSession, *, job_id: str) -> Result | None:
    return (await session.exec(select(Result).where(Result.job_id == job_id))).first()


async def get_sources(session: AsyncSession, *, job_id: str) -> Sequence[SourceRow]:
    return (await session.exec(select(SourceRow).where(SourceRow.job_id == job_id).order_by(col(SourceRow.composite_score).desc()))).all()


def is_terminal(status: JobStatus | str) -> bool:
    return JobStatus(status) in TERMINAL_STATUSES

