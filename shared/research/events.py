"""Typed job events, published on ``research.events.<job_id>.<type>``.

Progress is data, not prose: a client decides how to show an event. Every event has a
``type`` that doubles as the last subject token, so one parser reads any of them.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from shared.research.envelope import (
    Citation,
    Claim,
    JobConfidence,
    JobEnvelope,
    RejectedClaim,
    ScoredSource,
    Usage,
    utcnow,
)
from shared.research.memory import ResearchMemory
from shared.research.plan_review import ReviewPlan
from shared.subjects import Stage


class JobStatus(StrEnum):
    QUEUED = "QUEUED"
    PROCESSING = "PROCESSING"
    AWAITING_INPUT = "AWAITING_INPUT"  # clarifying questions asked, or a plan to review; holds no slot
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


class TraceTokens(BaseModel):
    input: int = 0
    output: int = 0
    cost_usd: float = 0.0  # at the configured prices (shared/llm/pricing.py); unpriced models count 0
    unpriced_models: list[str] = Field(default_factory=list)


class TraceQuery(BaseModel):
    provider: str
    text: str


class ProviderResults(BaseModel):
    count: int = 0  # results the provider returned
    new_sources: int = 0  # sources new to the job it contributed


class TraceChecklistItem(BaseModel):
    id: str
    description: str
    status: str


class TraceJudge(BaseModel):
    """The entailment judge's work in one stage's pass: statements asked about, how many
    it found entailed and vetoed (the rest it did not judge), its status and tokens."""

    statements: int = 0
    entailed: int = 0
    vetoed: int = 0
    status: str = ""
    model: str | None = None
    tokens: int = 0

    def plus(self, other: TraceJudge | None) -> TraceJudge:
        """Two runs of one pass as one (scoring judges claims, then the steps' analysis)."""
        if other is None:
            return self
        return TraceJudge(statements=self.statements + other.statements, entailed=self.entailed + other.entailed,
                          vetoed=self.vetoed + other.vetoed, status=other.status or self.status,
                          model=other.model or self.model, tokens=self.tokens + other.tokens)


class StageTrace(BaseModel):
    """One stage's contribution to the job's trace, carried by its ``done`` event and
    stored by the gateway once per (job, stage, iteration). Every stage reports its
    duration and this pass's tokens; retrieval adds the searches it ran and what each
    provider returned; scoring adds the checklist, the claims kept and rejected, and
    the research memory after the pass."""

    duration_s: float = 0.0
    tokens: TraceTokens = Field(default_factory=TraceTokens)
    queries: list[TraceQuery] | None = None
    results: dict[str, ProviderResults] | None = None
    checklist: list[TraceChecklistItem] | None = None
    claims_kept: int | None = None
    claims_rejected: int | None = None
    memory: ResearchMemory | None = None
    step_order: list[str] | None = None  # plan step ids in the order they ran, when the stage knows it
    judge: TraceJudge | None = None  # the entailment judge's calls in this pass (scoring, synthesis)


class StageEvent(_Event):
    type: Literal["stage"] = "stage"
    stage: Stage
    iteration: int = 0
    state: StageState
    delivery: int = 1
    worker: str | None = None  # "host:pid" of the process that handled it
    duration_s: float | None = None
    error: str | None = None
    usage: Usage | None = None  # on "done": the job's token usage so far (cumulative)
    trace: StageTrace | None = None  # on "done": this stage's part of the job's trace


class ChecklistCoverage(BaseModel):
    satisfied: list[str]
    gaps: list[str]


class OutputSource(BaseModel):
    """A source as listed in the tool's output object."""

    id: str
    type: str
    title: str
    url: str
    snippet: str


class ResearchOutput(BaseModel):
    """The ``deep_research`` tool's output object (answer, sources, checklist coverage, status)."""

    trace_id: str
    answer: str
    sources: list[OutputSource]
    checklist_coverage: ChecklistCoverage
    iterations_used: int
    status: Literal["completed", "max_iterations_reached", "error"]


class VerifiedFinding(BaseModel):
    """One of the report's Verified Findings: a verified claim, its confidence and its
    exact quotes with their locators, chosen and worded by code, never by the model."""

    claim_id: str
    text: str
    confidence: float
    citations: list[Citation]


class CouncilReview(BaseModel):
    """One council model's verdict on the plan ("brief") or on the verified findings."""

    subject: Literal["brief", "findings"]
    model: str
    agree: bool | None  # None: the member gave no verdict (see error)
    reasons: list[str] = Field(default_factory=list)
    error: str | None = None


class VerificationSummary(BaseModel):
    """What the checks did to the report and its claims: kept sentences and claims
    by level (``quoted``, ``entailed``, ``supported``), removed ones by reason
    (``negation``, ``quantifier``, ``modality``, ``comparative``, ``role``, ``number``,
    ``name``, ``scope``, ``merge``, ``terms``, ``judge``, ``repeated``, ``uncited``, ...),
    and whether the verifier model ran (``judge``: ``ran``, or ``not run: <why>``)."""

    sentences: dict[str, int] = Field(default_factory=dict)
    sentences_removed: dict[str, int] = Field(default_factory=dict)
    claims: dict[str, int] = Field(default_factory=dict)
    claims_rejected: dict[str, int] = Field(default_factory=dict)
    judge: str = "not run: no model configured"
    judge_model: str | None = None
    judge_tokens: int = 0
    judged: int = 0  # report sentences sent to the judge


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
    rejected_claims: list[RejectedClaim] = Field(default_factory=list)  # proposed claims the check refused
    verified_findings: list[VerifiedFinding] = Field(default_factory=list)
    sentences_removed: int = 0  # model-written sentences the verification pass removed
    verification: VerificationSummary = Field(default_factory=VerificationSummary)
    offline_parts: list[str] = Field(default_factory=list)  # report parts written without the model
    council: list[CouncilReview] = Field(default_factory=list)
    memory: ResearchMemory | None = None  # the research memory the report was written from


class JobCompleted(_Event):
    type: Literal["completed"] = "completed"
    result: ResearchResult


class JobFailed(_Event):
    type: Literal["failed"] = "failed"
    stage: Stage | None = None
    reason: str


class ClarificationRequested(_Event):
    """The planner found the question ambiguous (only when the request set
    ``clarify``): the job waits for the user's answer."""

    type: Literal["clarification"] = "clarification"
    questions: list[str] = Field(min_length=1, max_length=3)
    usage: Usage = Field(default_factory=Usage)


class PlanReviewRequested(_Event):
    """The first plan is made and the request set ``review_plan``: the job waits for
    the user to approve it, as it is or edited (shared/research/plan_review.py).
    ``envelope`` is what research continues from, with the plan the user approves."""

    type: Literal["plan_review"] = "plan_review"
    plan: ReviewPlan
    envelope: JobEnvelope
    usage: Usage = Field(default_factory=Usage)


class CouncilReviewed(_Event):
    """A council model reviewed the plan (before research) or the verified findings
    (before the report is written); disagreements also appear in the report."""

    type: Literal["council"] = "council"
    stage: Stage
    review: CouncilReview


class JobStatusChanged(_Event):
    """Emitted by the gateway on every lifecycle transition it persists."""

    type: Literal["status"] = "status"
    status: JobStatus
    previous: JobStatus | None = None
    reason: str | None = None


# -- digest audit events, on research.events.<job_id>.digest.<what> ----------------------


class DigestSkipReason(StrEnum):
    """Why a source reached scoring with its content intact instead of a digest."""

    POLICY_OFF = "policy_off"  # DIGEST_POLICY=off
    NO_TEXT = "no_text"  # nothing to digest
    TOO_SHORT = "too_short"  # auto: not longer than DIGEST_MIN_CHARS
    LOW_QUALITY = "low_quality"  # auto: LOW quality (see services/digest/policy.py)
    OVER_LIMIT = "over_limit"  # ranked below the DIGEST_MAX_SOURCES best of the batch
    CIRCUIT_OPEN = "circuit_open"  # the circuit breaker is open and no digest is cached
    TIMEOUT = "timeout"  # slower than DIGEST_TIMEOUT_S
    ERROR = "error"  # the digest failed (a digest.error event says how)
    DEADLINE = "deadline"  # the job's deadline came before its digest did


class _DigestEvent(_Event):
    iteration: int = 0
    source_id: str


class DigestStarted(_DigestEvent):
    type: Literal["digest.started"] = "digest.started"


class DigestCompleted(_DigestEvent):
    type: Literal["digest.completed"] = "digest.completed"
    cached: bool = False  # served from the in-process or shared cache
    duration_s: float
    original_chars: int
    digest_chars: int
    compression_ratio: float
    evidence_snippets: int
    engine: str = "offline"


class DigestSkipped(_DigestEvent):
    type: Literal["digest.skipped"] = "digest.skipped"
    reason: DigestSkipReason


class DigestError(_DigestEvent):
    type: Literal["digest.error"] = "digest.error"
    error: str


class DigestPdfExtractError(_DigestEvent):
    """A PDF source whose page map cannot be used: its locators lose the page prefix."""

    type: Literal["digest.pdf_extract_error"] = "digest.pdf_extract_error"
    error: str


class DigestCircuitBreakerTriggered(_Event):
    type: Literal["digest.circuit_breaker_triggered"] = "digest.circuit_breaker_triggered"
    iteration: int = 0
    failures: int
    samples: int
    failure_ratio: float


DigestEvent = (
    DigestStarted | DigestCompleted | DigestSkipped | DigestError | DigestPdfExtractError | DigestCircuitBreakerTriggered
)

JobEvent = Annotated[
    ProgressEvent | StageEvent | JobCompleted | JobFailed | ClarificationRequested | PlanReviewRequested | JobStatusChanged
    | CouncilReviewed | DigestEvent,
    Field(discriminator="type"),
]
_event_adapter: TypeAdapter[Any] = TypeAdapter(JobEvent)


def parse_event(data: bytes | str) -> (ProgressEvent | StageEvent | JobCompleted | JobFailed | ClarificationRequested
                                       | PlanReviewRequested | JobStatusChanged | CouncilReviewed | DigestEvent):
    return _event_adapter.validate_json(data)
