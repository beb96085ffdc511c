"""Typed job events, published on ``research.events.<job_id>.<type>``.

Progress is data, not prose: a client decides how to show an event. Every event has a
``type`` that doubles as the last subject token, so one parser reads any of them.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from shared.envelope import (
    Claim,
    JobConfidence,
    ScoredSource,
    Usage,
    utcnow,
)
from shared.subjects import Stage


class JobStatus(StrEnum):
    QUEUED = "QUEUED"
    PROCESSING = "PROCESSING"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    CANCELLED = "CANCELLED"
    EXPIRED = "EXPIRED"

    @property
    def terminal(self) -> bool:
        return self in TERMINAL_STATUSES


TERMINAL_STATUSES = frozenset(
    {JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED, JobStatus.EXPIRED}
)


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid")

    job_id: str
    at: datetime = Field(default_factory=utcnow)


class ProgressEvent(_Event):
    type: Literal["progress"] = "progress"
    stage: Stage
    iteration: int = 0
    progress: float = Field(ge=0.0, le=1.0)  # within the stage
    message: str
    counts: dict[str, int] = Field(default_factory=dict)


class StageState(StrEnum):
    STARTED = "started"
    DONE = "done"
    RETRYING = "retrying"
    SKIPPED = "skipped"  # the job was cancelled or finished; no work was done


class StageEvent(_Event):
    type: Literal["stage"] = "stage"
    stage: Stage
    iteration: int = 0
    state: StageState
    delivery: int = 1
    worker: str | None = None  # "host:pid" of the process that handled it
    duration_s: float | None = None
    error: str | None = None


class ChecklistCoverage(BaseModel):
    satisfied: list[str]
    gaps: list[str]


class OutputSource(BaseModel):
    """Seed 001's output source."""

    id: str
    type: str
    title: str
    url: str
    snippet: str


class ResearchOutput(BaseModel):
    """Seed 001's output object."""

    trace_id: str
    answer: str
    sources: list[OutputSource]
    checklist_coverage: ChecklistCoverage
    iterations_used: int
    status: Literal["completed", "max_iterations_reached", "error"]


class ResearchResult(BaseModel):
    """Everything the gateway persists when a job completes."""

    report: str
    output: ResearchOutput
    scored_sources: list[ScoredSource]
    claims: list[Claim]
    confidence: JobConfidence
    usage: Usage
    partial: bool = False
    partial_reason: str | None = None
    engine: str = "offline"


class JobCompleted(_Event):
    type: Literal["completed"] = "completed"
    result: ResearchResult


class JobFailed(_Event):
    type: Literal["failed"] = "failed"
    stage: Stage | None = None
    reason: str


class JobStatusChanged(_Event):
    """Emitted by the gateway on every lifecycle transition it persists."""

    type: Literal["status"] = "status"
    status: JobStatus
    previous: JobStatus | None = None
    reason: str | None = None


JobEvent = Annotated[
    ProgressEvent | StageEvent | JobCompleted | JobFailed | JobStatusChanged,
    Field(discriminator="type"),
]
_event_adapter: TypeAdapter[Any] = TypeAdapter(JobEvent)


def parse_event(data: bytes | str) -> ProgressEvent | StageEvent | JobCompleted | JobFailed | JobStatusChanged:
    return _event_adapter.validate_json(data)
