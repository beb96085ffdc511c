"""Follow-up questions: ``POST /api/research/jobs/{job_id}/follow-up``.

A follow-up is a new job of the same user that starts from a COMPLETED job's research
(its parent): it is stored with ``parent_job_id`` and the parent's request (context,
corpora, providers, limits, report depth), and admission seeds its first command from
the parent's final checkpoint (services/gateway/reuse.py, ``follow_up_envelope``): the
parent's sources, digests, verified claims and memory, and the searches it ran. It
plans for the follow-up question only (services/decomposition/follow_up.py counts the
parent's claims toward its checklist and does not search again what they answer), its
first scoring pass checks the carried claims again as reused ones are
(services/scoring/reused.py), and its report cites the parent's sources and its own
alike, naming the parent in its methodology.
"""

from __future__ import annotations

import logging

from fastapi import APIRouter, Depends, HTTPException, Request
from pydantic import BaseModel, ConfigDict, Field, field_validator

from services.gateway import jobs, storage
from services.gateway.api import (
    QUESTION_MAX_CHARS,
    STORE_FULL_RETRY_AFTER_S,
    JobCreate,
    Life,
    User,
    _owned_job,
    _valid_ids,
    _validation_error,
    settings_of,
)
from shared.platform.errors import PermanentError, TransientError
from shared.research.envelope import new_job_id
from shared.research.events import JobStatus
from shared.stores import checkpoints
from shared.subjects import Stage

__all__ = ["FollowUpAccepted", "FollowUpCreate", "router"]

log = logging.getLogger(__name__)

router = APIRouter(dependencies=[Depends(_valid_ids)])


class FollowUpCreate(BaseModel):
    """A follow-up question; everything else is the parent's request."""

    model_config = ConfigDict(extra="forbid")

    question: str = Field(
        min_length=1, max_length=QUESTION_MAX_CHARS,
        description="The follow-up question (at most RESEARCH_MAX_QUESTION_CHARS characters, 4000 by default)",
    )

    @field_validator("question")
    @classmethod
    def _question(cls, v: str) -> str:
        return JobCreate._question(v)  # noqa: SLF001 - the same rules as a submission's question


class FollowUpAccepted(BaseModel):
    job_id: str
    status: JobStatus
    parent_job_id: str


async def _parent_research_stored(life: Life, job_id: str) -> None:
    """409 when the parent's final checkpoint is gone (it outlived its retention): the
    follow-up would have nothing to start from. 503 when it cannot be read for now."""
    try:
        parent = await checkpoints.latest(life.js, job_id)
    except TransientError as exc:
        raise HTTPException(503, f"the job's research could not be read for now: {exc}",
                            headers={"Retry-After": str(STORE_FULL_RETRY_AFTER_S)}) from exc
    except PermanentError as exc:
        log.error("job %s: its checkpoint cannot be read for a follow-up: %s", job_id, exc)
        raise HTTPException(409, f"job {job_id}'s research cannot be read ({exc}): ask a new question instead") from exc
    if parent is None or parent.stage != Stage.SYNTHESIZE:
        raise HTTPException(409, f"job {job_id}'s research is no longer stored (it is kept as long as the job's "
                            "source texts): ask a new question instead")


@router.post("/api/research/jobs/{job_id}/follow-up", status_code=202, response_model=FollowUpAccepted, tags=["jobs"])
async def follow_up(job_id: str, body: FollowUpCreate, user: User, life: Life, request: Request) -> FollowUpAccepted:
    """Ask a follow-up question of a COMPLETED job: a new job that starts from its
    memory, sources and verified claims, researches only what the follow-up needs and
    answers it, citing the parent's sources and its own. 202: stored and queued. 404: no
    such job (or not yours). 409: the job is not COMPLETED, or its research is no
    longer stored. 422: an empty, over-long or unprintable question. 429: rate limit."""
    settings = settings_of(request)
    parent = await _owned_job(life, job_id, user)
    if len(body.question) > settings.research_max_question_chars:
        raise _validation_error("question", f"question is longer than {settings.research_max_question_chars} characters")
    if parent.status != JobStatus.COMPLETED:
        raise HTTPException(409, f"job is {parent.status.value}: only a COMPLETED job can be followed up")
    if life.event_store_full is not None:  # a job stored now could not be announced
        raise HTTPException(503, storage.EVENT_STORE_FULL, headers={"Retry-After": str(STORE_FULL_RETRY_AFTER_S)})
    await _parent_research_stored(life, job_id)
    async with life.sessions() as session:
        try:
            job, _created = await jobs.create_job(
                session, job_id=new_job_id(), user_id=user, question=body.question, context=parent.context,
                max_iterations=parent.max_iterations, corpora=parent.corpora, providers=parent.providers,
                time_budget_s=parent.time_budget_s, max_cost_usd=parent.max_cost_usd,
                report_depth=parent.report_depth, rate_max=settings.research_rate_limit_max,
                rate_window_s=settings.research_rate_limit_window_s, parent_job_id=parent.id,
            )
        except jobs.RateLimited as exc:
            raise HTTPException(
                429, f"rate limit: at most {settings.research_rate_limit_max} jobs per {settings.research_rate_limit_window_s}s",
                headers={"Retry-After": str(exc.retry_after_s)},
            ) from exc
    log.info("job %s follows up job %s", job.id, parent.id)
    life.kick()
    return FollowUpAccepted(job_id=job.id, status=job.status, parent_job_id=parent.id)
