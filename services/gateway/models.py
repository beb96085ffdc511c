"""The gateway's tables (docs/architecture.md, "Data model"). The gateway is their only writer.

SQLModel families as in full-stack-fastapi-template: ``JobBase`` holds what a client
sends, ``Job`` is the table, ``JobPublic`` what the API returns.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Field, SQLModel

from shared.research.envelope import Plan
from shared.research.events import JobStatus
from shared.research.plan_review import ReviewPlan, review_of


def _tz() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def _status_type() -> sa.Enum:
    # Stored as the plain strings of JobStatus in a VARCHAR(20), read back as JobStatus.
    return sa.Enum(JobStatus, native_enum=False, length=20, values_callable=lambda e: [m.value for m in e], validate_strings=True)


class JobBase(SQLModel):
    question: str
    context: str | None = None
    max_iterations: int = 10
    corpora: list[str] | None = Field(default=None, sa_column=sa.Column(JSONB, nullable=True))
    providers: list[str] | None = Field(default=None, sa_column=sa.Column(JSONB, nullable=True))
    clarify: bool = False
    # Seconds from the job's start to its deadline; None: RESEARCH_JOB_DEADLINE_S.
    time_budget_s: float | None = None
    # USD the job's model calls may cost; None: the stages' RESEARCH_MAX_COST_USD.
    max_cost_usd: float | None = None
    # How much the report says: brief, standard or detailed (services/synthesis/depth.py).
    report_depth: str = Field(default="standard", max_length=10)
    # The user approves (or edits) the first plan before research goes on.
    review_plan: bool = False


class Job(JobBase, table=True):
    __tablename__ = "research_jobs"

    id: str = Field(primary_key=True, max_length=36)
    # Submission order; admission starts queued jobs by it (timestamps can tie).
    seq: int | None = Field(default=None, sa_column=sa.Column(sa.BigInteger, sa.Identity(), unique=True, nullable=False))
    user_id: str = Field(index=True, max_length=200)
    status: JobStatus = Field(sa_column=sa.Column(_status_type(), nullable=False, index=True))
    stage: str | None = Field(default=None, max_length=20)
    iteration: int = 0
    progress: float = 0.0
    error: str | None = Field(default=None, sa_column=sa.Column(sa.Text, nullable=True))
    partial: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    llm_calls: int = 0
    cost_usd: float = 0.0  # USD at the configured prices so far; only ever raised
    clarifying_questions: list[str] | None = Field(default=None, sa_column=sa.Column(JSONB, nullable=True))
    clarification: str | None = Field(default=None, sa_column=sa.Column(sa.Text, nullable=True))
    # A client's Idempotency-Key and the hash of the request it came with: a retried
    # submission finds its job instead of creating a second one.
    idempotency_key: str | None = Field(default=None, max_length=200)
    request_hash: str | None = Field(default=None, max_length=64)
    # May start from a similar job of the same user that completed recently; resumes so
    # far (every message of a resumed run carries the count in its id) and the last
    # one's time (expiry counts a resumed job's age from it).
    reuse: bool = Field(default=True, sa_column=sa.Column(sa.Boolean, nullable=False, server_default=sa.true()))
    resumes: int = Field(default=0, sa_column=sa.Column(sa.Integer, nullable=False, server_default="0"))
    resumed_at: datetime | None = Field(default=None, sa_column=sa.Column(_tz(), nullable=True))
    # The completed job this one follows up (services/gateway/followup.py): it starts
    # from that job's research.
    parent_job_id: str | None = Field(default=None, sa_column=sa.Column(
        sa.String(36), sa.ForeignKey("research_jobs.id", ondelete="SET NULL"), nullable=True, index=True))
    # Plan review (services/gateway/plan_review.py): the envelope research continues
    # from (the planner's while the job waits, with the user's plan once approved), when
    # the user approved it and what they changed.
    plan_envelope: dict[str, Any] | None = Field(default=None, sa_column=sa.Column(JSONB, nullable=True))
    plan_reviewed_at: datetime | None = Field(default=None, sa_column=sa.Column(_tz(), nullable=True))
    plan_changes: list[dict[str, Any]] | None = Field(default=None, sa_column=sa.Column(JSONB, nullable=True))
    created_at: datetime = Field(sa_column=sa.Column(_tz(), nullable=False, index=True))
    started_at: datetime | None = Field(default=None, sa_column=sa.Column(_tz(), nullable=True))
    finished_at: datetime | None = Field(default=None, sa_column=sa.Column(_tz(), nullable=True))
    updated_at: datetime = Field(sa_column=sa.Column(_tz(), nullable=False))


def awaiting_plan(job: Job) -> bool:
    """The job waits for its user to approve (or edit) its plan."""
    return job.status == JobStatus.AWAITING_INPUT and job.plan_envelope is not None and job.plan_reviewed_at is None


def plan_to_review(job: Job) -> ReviewPlan | None:
    """The plan the job waits on, as the user reviews it; None when it waits on none."""
    if not awaiting_plan(job):
        return None
    assert job.plan_envelope is not None
    return review_of(Plan.model_validate(job.plan_envelope["plan"]))


class OutboxMessage(SQLModel, table=True):
    """A message to publish, written in the same transaction as the state change it
    announces; the relay publishes it and deletes the row. A crash between commit and
    publish delays the message, never loses it."""

    __tablename__ = "research_outbox"

    id: int | None = Field(default=None, sa_column=sa.Column(sa.BigInteger, sa.Identity(), primary_key=True))
    subject: str = Field(sa_column=sa.Column(sa.Text, nullable=False))
    # Nats-Msg-Id: the relay's repeated publish after a crash is deduplicated by JetStream.
    msg_id: str = Field(sa_column=sa.Column(sa.Text, nullable=False))
    payload: str = Field(sa_column=sa.Column(sa.Text, nullable=False))
    created_at: datetime = Field(sa_column=sa.Column(_tz(), nullable=False))


class TokenUsagePublic(SQLModel):
    input_tokens: int
    output_tokens: int
    llm_calls: int = 0
    cost_usd: float = 0.0  # USD at the configured prices (LLM_PRICES); unpriced models count 0


class JobPublic(JobBase):
    job_id: str
    status: JobStatus
    stage: str | None
    iteration: int
    progress: float
    error: str | None
    partial: bool
    token_usage: TokenUsagePublic
    clarifying_questions: list[str] | None = None  # while AWAITING_INPUT: answer them to resume
    clarification: str | None = None
    plan: ReviewPlan | None = None  # while AWAITING_INPUT for plan review: approve it (edited) to resume
    plan_changes: list[dict[str, Any]] | None = None  # what the user changed in the plan ([]: approved as it was)
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    reuse: bool = True
    resumes: int = 0
    parent_job_id: str | None = None  # the job this one follows up
    follow_ups: list[str] | None = None  # the jobs that follow this one up, oldest first (GET …/{id} only; None in listings)

    @classmethod
    def of(cls, job: Job, *, follow_ups: list[str] | None = None) -> JobPublic:
        return cls(
            job_id=job.id, question=job.question, context=job.context, max_iterations=job.max_iterations,
            corpora=job.corpora, providers=job.providers, clarify=job.clarify, time_budget_s=job.time_budget_s,
            max_cost_usd=job.max_cost_usd, report_depth=job.report_depth, review_plan=job.review_plan,
            plan=plan_to_review(job), plan_changes=job.plan_changes,
            status=job.status, stage=job.stage, iteration=job.iteration,
            progress=job.progress, error=job.error, partial=job.partial,
            token_usage=TokenUsagePublic(input_tokens=job.input_tokens, output_tokens=job.output_tokens, llm_calls=job.llm_calls,
                                         cost_usd=round(job.cost_usd, 6)),
            clarifying_questions=job.clarifying_questions, clarification=job.clarification,
            created_at=job.created_at, started_at=job.started_at, finished_at=job.finished_at,
            reuse=job.reuse, resumes=job.resumes, parent_job_id=job.parent_job_id, follow_ups=follow_ups,
        )


class Result(SQLModel, table=True):
    __tablename__ = "research_results"

    id: int | None = Field(default=None, primary_key=True)
    job_id: str = Field(sa_column=sa.Column(sa.String(36), sa.ForeignKey("research_jobs.id", ondelete="CASCADE"), unique=True, nullable=False))
    report: str = Field(sa_column=sa.Column(sa.Text, nullable=False))
    output: dict[str, Any] = Field(sa_column=sa.Column(JSONB, nullable=False))
    citations: list[dict[str, Any]] = Field(sa_column=sa.Column(JSONB, nullable=False))
    claims: list[dict[str, Any]] = Field(sa_column=sa.Column(JSONB, nullable=False))
    # Proposed claims the deterministic check refused, with their reasons (GET …/claims).
    rejected_claims: list[dict[str, Any]] = Field(
        default_factory=list, sa_column=sa.Column(JSONB, nullable=False, server_default=sa.text("'[]'::jsonb")))
    # What synthesis verified: findings built by code, sentences its check removed, parts
    # written without the model, and the council's reviews (empty when it is off).
    verified_findings: list[dict[str, Any]] = Field(
        default_factory=list, sa_column=sa.Column(JSONB, nullable=False, server_default=sa.text("'[]'::jsonb")))
    sentences_removed: int = Field(default=0, sa_column=sa.Column(sa.Integer, nullable=False, server_default="0"))
    offline_parts: list[str] = Field(
        default_factory=list, sa_column=sa.Column(JSONB, nullable=False, server_default=sa.text("'[]'::jsonb")))
    council: list[dict[str, Any]] = Field(
        default_factory=list, sa_column=sa.Column(JSONB, nullable=False, server_default=sa.text("'[]'::jsonb")))
    # What the checks did (shared.research.events.VerificationSummary): sentences and claims by
    # check level, removals by reason, whether the entailment judge ran. None for
    # results stored before levels were recorded (migration 0010).
    verification: dict[str, Any] | None = Field(default=None, sa_column=sa.Column(JSONB, nullable=True))
    # The research memory the report was written from (insights, open gaps, contradictions,
    # searches); also the memory of the job's trace.
    memory: dict[str, Any] | None = Field(default=None, sa_column=sa.Column(JSONB, nullable=True))
    confidence: dict[str, Any] = Field(sa_column=sa.Column(JSONB, nullable=False))
    token_usage: dict[str, Any] = Field(sa_column=sa.Column(JSONB, nullable=False))
    engine: str = Field(max_length=40)
    partial: bool = False
    partial_reason: str | None = None
    created_at: datetime = Field(sa_column=sa.Column(_tz(), nullable=False))


class SourceRow(SQLModel, table=True):
    """One row per source per job, every scoring dimension in its own column."""

    __tablename__ = "research_sources"
    __table_args__ = (sa.UniqueConstraint("job_id", "source_id"),)

    id: int | None = Field(default=None, primary_key=True)
    job_id: str = Field(sa_column=sa.Column(sa.String(36), sa.ForeignKey("research_jobs.id", ondelete="CASCADE"), index=True, nullable=False))
    source_id: str = Field(max_length=64)
    url: str
    title: str
    retrieval_method: str = Field(max_length=20)
    credibility_tier: str = Field(max_length=20)
    domain_authority: int
    published_at: datetime | None = Field(default=None, sa_column=sa.Column(_tz(), nullable=True))
    relevance_score: float
    authority_score: float
    recency_score: float
    relevance_component: float
    credibility_score: float
    composite_score: float
    text_hash: str = Field(max_length=80)
    excerpt: str = Field(sa_column=sa.Column(sa.Text, nullable=False))
    digest: dict[str, Any] | None = Field(default=None, sa_column=sa.Column(JSONB, nullable=True))
    fidelity: dict[str, Any] | None = Field(default=None, sa_column=sa.Column(JSONB, nullable=True))  # digest stage's record
    created_at: datetime = Field(sa_column=sa.Column(_tz(), nullable=False))
