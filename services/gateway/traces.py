"""A job's research trace, kept in PostgreSQL (``GET /api/research/jobs/{id}/trace``).

Every stage's ``done`` event carries that stage's part of the trace (its duration and
tokens for the pass; retrieval adds the searches it ran and what each provider
returned, scoring the checklist, the claims kept and rejected and the research
memory). The gateway's progress consumer stores each one as a row of
``research_trace_stages`` keyed by (job, stage, iteration): a redelivered event, or
the ``done`` event of a redelivered stage, writes nothing (the first one stored
stands, as the first result published is the one JetStream let through). The events
stream forgets a job after its TTL; these rows go only with the job.

The endpoint assembles the rows into one entry per iteration, for running, failed,
cancelled and completed jobs alike.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from typing import Any

import sqlalchemy as sa
from nats.aio.msg import Msg
from pydantic import BaseModel, Field, ValidationError
from sqlmodel.ext.asyncio.session import AsyncSession

from services.gateway.text import clean_json
from shared.research.events import (
    ProviderResults,
    StageEvent,
    StageState,
    StageTrace,
    TraceChecklistItem,
    TraceJudge,
    TraceQuery,
    TraceTokens,
    parse_event,
)
from shared.research.memory import ResearchMemory
from shared.research.plan_review import PlanChange
from shared.subjects import Stage

__all__ = ["PLAN_REVIEW_ROW", "JobTrace", "TraceIteration", "TracePlanReview", "TraceStage", "job_trace", "record_traces",
           "traced", "trace_events"]

log = logging.getLogger(__name__)

_STAGE_ORDER = {s.value: n for n, s in enumerate(Stage)}
PLAN_REVIEW_ROW = "plan_review"  # the stage column of the user's plan review (services/gateway/plan_review.py)

_INSERT = sa.text(
    """
    INSERT INTO research_trace_stages
        (job_id, stage, iteration, duration_s, input_tokens, output_tokens, data, recorded_at)
    SELECT CAST(:job_id AS varchar), CAST(:stage AS varchar), CAST(:iteration AS integer),
           CAST(:duration_s AS double precision), CAST(:input_tokens AS integer), CAST(:output_tokens AS integer),
           CAST(:data AS jsonb), now()
    WHERE EXISTS (SELECT 1 FROM research_jobs WHERE id = CAST(:job_id AS varchar))
    ON CONFLICT (job_id, stage, iteration) DO NOTHING
    """
)
_SELECT = sa.text(
    "SELECT stage, iteration, duration_s, input_tokens, output_tokens, data FROM research_trace_stages WHERE job_id = :job_id"
)


# -- the response ------------------------------------------------------------------------


class TraceStage(BaseModel):
    stage: str
    duration_s: float
    tokens: TraceTokens
    judge: TraceJudge | None = None  # the entailment judge's calls within these tokens, if it ran


class TraceIteration(BaseModel):
    iteration: int
    queries: list[TraceQuery] = Field(default_factory=list)  # the searches run, per provider
    results: dict[str, ProviderResults] = Field(default_factory=dict)  # per provider: results, new sources
    checklist: list[TraceChecklistItem] = Field(default_factory=list)  # as judged after the pass
    claims_kept: int | None = None  # None: the pass has not been scored (yet)
    claims_rejected: int | None = None
    stages: list[TraceStage] = Field(default_factory=list)  # in pipeline order
    step_order: list[str] = Field(default_factory=list)  # plan step ids in the order they ran, when known


class TracePlanReview(BaseModel):
    """The user's review of the plan (a request with ``review_plan``): how long the job
    waited, and what the user changed (nothing: approved as it was)."""

    run: int = 0  # the job's resume count when it was reviewed
    waited_s: float
    approved_as_is: bool
    changes: list[PlanChange] = Field(default_factory=list)


class JobTrace(BaseModel):
    """What each research pass did: searches, results, checklist, claims, and each
    stage's duration and tokens; ``memory`` is the research memory as last stored;
    ``plan_review`` what the user changed in the plan, when they reviewed it."""

    job_id: str
    status: str
    iterations: list[TraceIteration]
    memory: ResearchMemory = Field(default_factory=ResearchMemory)
    plan_review: list[TracePlanReview] = Field(default_factory=list)


# -- writing -------------------------------------------------------------------------------


def traced(event: object) -> StageEvent | None:
    """``event`` when it is a stage's ``done`` event with a trace, else None."""
    if isinstance(event, StageEvent) and event.state is StageState.DONE and event.trace is not None:
        return event
    return None


def trace_events(msgs: Iterable[Msg]) -> list[StageEvent]:
    """The traced ``done`` events of a batch. An unreadable event is left to the
    progress coalescing, which logs it; it has no trace to store."""
    out = []
    for msg in msgs:
        try:
            event = traced(parse_event(msg.data))
        except ValidationError as exc:
            # coalesce() logs it as an error already, with the reason it is dropped.
            log.debug("no trace in an unreadable event on %s: %s", getattr(msg, "subject", "?"), exc.error_count())
            continue
        if event is not None:
            out.append(event)
    return out


def _row(event: StageEvent) -> dict[str, Any]:
    trace = event.trace
    assert trace is not None
    # Tokens are columns; the stage's cost (and unpriced models) stay in data.
    data = trace.model_dump(mode="json", exclude={"duration_s": True, "tokens": {"input", "output"}}, exclude_none=True)
    return {
        "job_id": event.job_id, "stage": event.stage.value, "iteration": event.iteration,
        "duration_s": trace.duration_s, "input_tokens": trace.tokens.input, "output_tokens": trace.tokens.output,
        # Cleaned: PostgreSQL refuses NUL in JSONB, and query texts come from users.
        "data": json.dumps(clean_json(data)),
    }


async def record_traces(session: AsyncSession, events: Sequence[StageEvent]) -> None:
    """Store each event's trace unless its (job, stage, iteration) is stored already,
    or its job is unknown. Does not commit: the caller's transaction holds it."""
    for event in events:
        await session.exec(_INSERT.bindparams(**_row(event)))  # type: ignore[call-overload]


# -- reading --------------------------------------------------------------------------------


def _stage_data(row: Any) -> StageTrace:
    data = json.loads(row.data) if isinstance(row.data, str) else dict(row.data or {})
    cost = data.get("tokens") if isinstance(data.get("tokens"), dict) else {}
    data.update(duration_s=row.duration_s, tokens={**cost, "input": row.input_tokens, "output": row.output_tokens})
    return StageTrace.model_validate(data)


def assemble(job_id: str, status: str, rows: Sequence[Any], stored_memory: dict[str, Any] | None) -> JobTrace:
    """The trace from a job's rows (any order), one entry per iteration in order."""
    by_iteration: dict[int, TraceIteration] = {}
    memory: ResearchMemory | None = None
    reviews: list[TracePlanReview] = []
    ordered = sorted(rows, key=lambda r: (r.iteration, _STAGE_ORDER.get(r.stage, 99)))
    for row in ordered:
        if row.stage == PLAN_REVIEW_ROW:  # written by the gateway (plan_review.py), not a stage
            data = json.loads(row.data) if isinstance(row.data, str) else dict(row.data or {})
            reviews.append(TracePlanReview(run=row.iteration, waited_s=row.duration_s, **data))
            continue
        trace = _stage_data(row)
        entry = by_iteration.setdefault(row.iteration, TraceIteration(iteration=row.iteration))
        entry.stages.append(TraceStage(stage=row.stage, duration_s=round(trace.duration_s, 3), tokens=trace.tokens,
                                       judge=trace.judge))
        if trace.queries is not None:
            entry.queries = trace.queries
        if trace.results is not None:
            entry.results = trace.results
        if trace.checklist is not None:
            entry.checklist = trace.checklist
        if trace.claims_kept is not None:
            entry.claims_kept, entry.claims_rejected = trace.claims_kept, trace.claims_rejected
        if trace.step_order:
            entry.step_order = trace.step_order
        if trace.memory is not None:
            memory = trace.memory
    if stored_memory is not None:  # the result's: what the report was written from
        memory = ResearchMemory.model_validate(stored_memory)
    return JobTrace(job_id=job_id, status=status, iterations=list(by_iteration.values()), memory=memory or ResearchMemory(),
                    plan_review=reviews)


async def job_trace(session: AsyncSession, *, job_id: str, status: str, stored_memory: dict[str, Any] | None) -> JobTrace:
    rows = (await session.exec(_SELECT.bindparams(job_id=job_id))).all()  # type: ignore[call-overload]
    return assemble(job_id, status, rows, stored_memory)
