"""Plan review, the gateway's side: a job waiting on its plan, and the user's approval.

A request with ``review_plan`` plans as usual, but planning hands its first plan to the
gateway in a ``plan_review`` event (services/decomposition/review.py) instead of going
on to retrieval. :func:`await_plan_review` moves the job PROCESSING -> AWAITING_INPUT
and keeps the envelope research continues from; while the job waits, ``GET …/jobs/{id}``
carries the plan under ``plan`` (shared/research/plan_review.py, ``ReviewPlan``).

``POST /api/research/jobs/{id}/plan`` (plan_review_api.py) approves it, as it is or edited: the body is the
plan as the user wants it, checked by the rules a model's plan passes (422 naming the
field; the job keeps waiting). The approved plan and what the user changed are stored,
the change list is added to the job's trace, and the job queues again (AWAITING_INPUT
-> QUEUED). Admission then starts it with :func:`continuation`: a plan command with
``phase="reviewed"``, on which planning writes queries for the new and reworded steps
and hands the job to retrieval without planning again.

Waiting holds no concurrency slot. It counts against the job's TTL (expiry counts the
job's age, whatever its status) but not against its research deadline: the deadline is
counted from the job's start, and admission starts the approved job afresh.
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from services.gateway import jobs
from services.gateway.models import Job
from services.gateway.text import clean_json
from services.gateway.traces import PLAN_REVIEW_ROW
from shared.research.envelope import JobEnvelope, utcnow
from shared.research.events import JobStatus, PlanReviewRequested
from shared.research.plan_review import PlanChange

__all__ = ["approve_plan", "await_plan_review", "continuation"]


_TRACE_INSERT = sa.text(
    """
    INSERT INTO research_trace_stages
        (job_id, stage, iteration, duration_s, input_tokens, output_tokens, data, recorded_at)
    VALUES (CAST(:job_id AS varchar), CAST(:stage AS varchar), CAST(:iteration AS integer),
            CAST(:duration_s AS double precision), 0, 0, CAST(:data AS jsonb), now())
    ON CONFLICT (job_id, stage, iteration) DO NOTHING
    """
)


# -- data access -----------------------------------------------------------------------


async def await_plan_review(session: AsyncSession, *, event: PlanReviewRequested) -> jobs.Transition | None:
    """PROCESSING -> AWAITING_INPUT with the plan to review; commits. The job leaves the
    running set, so its concurrency slot is free while it waits. None (nothing changed)
    for a job no longer running: a replayed event, or one cancelled meanwhile."""
    t = await jobs._transition(  # noqa: SLF001 - the one locked, status-checked transition of the module
        session, job_id=event.job_id, to=JobStatus.AWAITING_INPUT, from_=(JobStatus.PROCESSING,),
        reason="waiting for the research plan to be reviewed",
        values={"plan_envelope": clean_json(event.envelope.model_dump(mode="json")), "plan_reviewed_at": None,
                "plan_changes": None, **jobs._usage_values(event.usage)},  # noqa: SLF001 - the same counters as clarification's
    )
    await session.commit()
    return t


async def approve_plan(session: AsyncSession, *, job_id: str, envelope: JobEnvelope,
                       changes: list[PlanChange]) -> jobs.Transition | None:
    """AWAITING_INPUT -> QUEUED with the approved plan's envelope and the user's changes,
    and the changes in the job's trace; commits. None (nothing changed) when the job no
    longer waits on a plan (approved by another request, cancelled, expired)."""
    waiting = (await session.exec(
        select(Job.updated_at).where(Job.id == job_id, col(Job.plan_envelope).is_not(None),
                                     col(Job.plan_reviewed_at).is_(None)).with_for_update()
    )).first()
    if waiting is None:
        await session.rollback()
        return None
    now = utcnow()
    listed = [c.model_dump(mode="json") for c in changes]
    t = await jobs._transition(  # noqa: SLF001 - the one locked, status-checked transition of the module
        session, job_id=job_id, to=JobStatus.QUEUED, from_=(JobStatus.AWAITING_INPUT,),
        reason="research plan approved" + (f" with {len(changes)} change(s)" if changes else " as it was"),
        values={"plan_envelope": clean_json(envelope.model_dump(mode="json")), "plan_reviewed_at": now,
                "plan_changes": clean_json(listed)},
    )
    if t is None:
        await session.rollback()
        return None
    # When the job went to AWAITING_INPUT: the wait is the trace row's duration.
    waited_s = max(0.0, (now - waiting).total_seconds())
    await session.exec(_TRACE_INSERT.bindparams(  # type: ignore[call-overload]
        job_id=job_id, stage=PLAN_REVIEW_ROW, iteration=envelope.resumes, duration_s=round(waited_s, 3),
        data=json.dumps(clean_json({"approved_as_is": not changes, "changes": listed})),
    ))
    await session.commit()
    return t


def continuation(job: Job, fresh: JobEnvelope) -> JobEnvelope | None:
    """The command an approved job starts with: its stored envelope, the user's plan in
    it, marked ``reviewed``, with ``fresh``'s deadline (research time counts from this
    start, not from the job's first). None when the job is not one just approved (a
    later resume of it starts from its checkpoint, as any other job)."""
    if job.plan_envelope is None or job.plan_reviewed_at is None:
        return None
    stored = JobEnvelope.model_validate(job.plan_envelope)
    if stored.phase != "reviewed" or stored.resumes != job.resumes:
        return None
    return stored.model_copy(update={"deadline_at": fresh.deadline_at})
