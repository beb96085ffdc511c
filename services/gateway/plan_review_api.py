"""``POST /api/research/jobs/{id}/plan``: the user approves the plan of a job waiting on
it, as it is or edited (services/gateway/plan_review.py says what happens then)."""

from __future__ import annotations

import logging

from fastapi import APIRouter, HTTPException

from services.gateway import jobs
from services.gateway.api import Life, User, router as api_router
from services.gateway.models import JobPublic, awaiting_plan
from services.gateway.plan_review import approve_plan
from shared.research.envelope import JobEnvelope
from shared.research.plan_review import ReviewPlan, apply_review

__all__ = ["router"]

log = logging.getLogger(__name__)

# The API's dependencies too (job ids are UUIDs, checked before any query).
router = APIRouter(dependencies=api_router.dependencies)


@router.post("/api/research/jobs/{job_id}/plan", response_model=JobPublic, tags=["jobs"])
async def review_plan(job_id: str, body: ReviewPlan, user: User, life: Life) -> JobPublic:
    """Approve the research plan of a job waiting on it, as it is or edited: send the
    ``plan`` of ``GET …/jobs/{id}`` back, changed as you like (an item or step without
    an id is new; one left out is removed). 422: the plan breaks a rule of a model's
    plan (the field is named; the job keeps waiting). 409: the job waits on no plan.
    The job then queues again and research goes on with this plan."""
    async with life.sessions() as session:
        job = await jobs.get_job(session, job_id=job_id, user_id=user)
    if job is None:
        raise HTTPException(404, f"job {job_id} not found")  # another user's job answers like a missing one
    if not awaiting_plan(job):
        raise HTTPException(409, f"job is {job.status.value}, not waiting for its plan to be reviewed")
    assert job.plan_envelope is not None
    held = JobEnvelope.model_validate(job.plan_envelope)
    assert held.plan is not None
    try:
        plan, changes = apply_review(held.plan, body)
    except ValueError as exc:
        raise HTTPException(422, [{"loc": ["body", "steps"], "msg": f"steps: {exc}", "type": "value_error"}]) from exc
    approved = held.model_copy(update={"plan": plan, "phase": "reviewed"})
    async with life.sessions() as session:
        t = await approve_plan(session, job_id=job_id, envelope=approved, changes=changes)
    if t is None:
        async with life.sessions() as session:
            job = await jobs.get_job(session, job_id=job_id, user_id=user)
        raise HTTPException(409, f"job is {job.status.value if job else 'gone'}, not waiting for its plan to be reviewed")
    log.info("job %s: plan approved (%s)", job_id, ", ".join(f"{c.part} {c.id or ''} {c.action}".replace("  ", " ")
                                                            for c in changes) or "as it was")
    life.kick()
    async with life.sessions() as session:
        job = await jobs.get_job(session, job_id=job_id, user_id=user)
    assert job is not None
    return JobPublic.of(job)
