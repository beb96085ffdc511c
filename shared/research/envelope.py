"""The job envelope: the one message that travels from stage to stage.

It carries what later stages need (request, plan, checklist, sources with bounded
excerpts and text hashes, claims, usage, deadline) and never raw page bodies: NATS
refuses payloads over 1 MiB, so canonical texts live in the object store and the
envelope holds their ``sha256-…`` key.

The source object, claims and job confidence use camelCase field names on the wire
(the tool's public output format); the digest payload uses snake_case (``digest/v1``).
docs/architecture.md, "The job envelope", walks through every field.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from shared.research.memory import ResearchMemory
from shared.subjects import Stage

ENVELOPE_VERSION = 1
EXCERPT_MAX_CHARS = 2_000
DEADLINE_NOTE = "deadline reached"  # in envelope.notes when the time budget ran out
# The iteration of the context search before the brief and of the brief written from
# it: before the first research iteration, so their commands, stage events and trace
# rows never share (stage, iteration) with iteration 0's.
CONTEXT_ITERATION = -1


def utcnow() -> datetime:
    return datetime.now(UTC)


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _CamelWire(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=True,
    )


class CredibilityTier(StrEnum):
    PRIMARY_SOURCE = "PRIMARY_SOURCE"
    AUTHORITATIVE = "AUTHORITATIVE"
    SECONDARY = "SECONDARY"
    UNVERIFIED = "UNVERIFIED"
    FLAGGED = "FLAGGED"


# The credibility score of each tier (SourceScorer, docs/research-method.md); the digest stage ranks by it too.
TIER_SCORES: dict[CredibilityTier, float] = {
    CredibilityTier.PRIMARY_SOURCE: 1.0,
    CredibilityTier.AUTHORITATIVE: 0.85,
    CredibilityTier.SECONDARY: 0.65,
    CredibilityTier.UNVERIFIED: 0.3,
    CredibilityTier.FLAGGED: 0.0,
}


class RetrievalMethod(StrEnum):
    RAG = "rag"
    WEB = "web"
    PUBMED = "pubmed"


class StepKind(StrEnum):
    """How a plan step is researched: searched alone, searched with earlier results, or analysis only."""

    INDEPENDENT = "independent"  # searchable on its own
    HYBRID = "hybrid"  # searchable, but needs earlier results
    DEPENDENT = "dependent"  # analysis only, no search


class CoverageStatus(StrEnum):
    SATISFIED = "satisfied"
    PARTIAL = "partial"
    UNSATISFIED = "unsatisfied"


# -- request and plan ----------------------------------------------------------


# How much the report says (services/synthesis/depth.py): "brief" a one-screen answer,
# "standard" the full report, "detailed" every placed claim and a model call per section.
ReportDepth = Literal["brief", "standard", "detailed"]
REPORT_DEPTHS: tuple[str, ...] = ("brief", "standard", "detailed")


class ResearchRequest(_Wire):
    question: str
    context: str | None = None
    max_iterations: int = 10
    corpora: list[str] | None = None  # None: every indexed corpus
    providers: list[RetrievalMethod] | None = None  # None: every configured provider
    clarify: bool = False  # ask clarifying questions when the question is ambiguous
    clarification: str | None = None  # the user's answer to them
    reuse: bool = True  # may start from a similar job of the same user that completed recently
    time_budget_s: float | None = None  # the job's own deadline (seconds from its start); None: RESEARCH_JOB_DEADLINE_S
    max_cost_usd: float | None = Field(None, gt=0)  # the job's cost limit in USD; None: RESEARCH_MAX_COST_USD
    report_depth: ReportDepth = "standard"  # how much the report says (services/synthesis/depth.py)
    review_plan: bool = False  # the user approves (or edits) the first plan before research goes on


class ChecklistItem(_Wire):
    id: str
    description: str
    status: CoverageStatus = CoverageStatus.UNSATISFIED
    evidence: list[str] = Field(default_factory=list)  # claim ids that address it
    reason: str | None = None  # one line: why it has this status


class SubQuestion(_Wire):
    """A step of the plan. ``depends_on`` names the steps whose verified findings it
    needs (acyclic, checked when the plan is made): an independent step searches at
    once, a hybrid step searches once its dependencies have claims (with queries
    written from them), a dependent step is analysed from them without searching."""

    id: str = ""  # stable within the plan ("q1", "q2"...); the Plan gives a blank one its position's id
    text: str
    kind: StepKind = StepKind.INDEPENDENT
    depends_on: list[str] = Field(default_factory=list)
    ran_in_iteration: int | None = None  # the iteration it searched in (or was analysed in); None: not yet
    searched: list[str] = Field(default_factory=list)  # query texts run for it: its sources' found_by name them
    answered_by: str | None = None  # a follow-up's step its parent's claims answer: that job's id; not searched


class SearchQuery(_Wire):
    provider: RetrievalMethod
    text: str
    iteration: int = 0


class ContextHit(_Wire):
    """One result of the quick search before the brief: a title and a snippet, no text."""

    provider: RetrievalMethod
    title: str
    snippet: str
    url: str = ""


class Plan(_Wire):
    refined_question: str
    sub_questions: list[SubQuestion]
    checklist: list[ChecklistItem]
    queries: list[SearchQuery] = Field(default_factory=list)  # this iteration's queries
    in_scope: list[str] = Field(default_factory=list)  # the research brief's scope boundaries
    out_of_scope: list[str] = Field(default_factory=list)
    key_terms: list[str] = Field(default_factory=list)
    engine: str = "offline"  # what wrote the plan: "offline" or "provider:model"
    step_order: list[str] = Field(default_factory=list)  # step ids in the order they ran (for the trace)

    @model_validator(mode="after")
    def _number_steps(self) -> Plan:
        """A step without an id gets ``q<position>`` (one not already taken)."""
        taken = {s.id for s in self.sub_questions if s.id}
        for n, step in enumerate(self.sub_questions, start=1):
            if not step.id:
                step.id = next(i for i in (f"q{n}", *(f"q{n}.{k}" for k in range(1, 99))) if i not in taken)
                taken.add(step.id)
        return self


# -- sources -------------------------------------------------------------------


class EvidenceSnippet(_Wire):
    """An exact quotation: ``canonical_text[start:end] == text`` for its locator."""

    text: str
    locator: str
    relevance_score: float


class DigestPayload(_Wire):
    """The ``digest/v1`` payload of a digested source (docs/research-method.md, "Digests and locators")."""

    version: str = "1.0"
    content_type: Literal["digest/v1"] = "digest/v1"
    query_hash: str
    summary: str
    key_points: list[str]
    evidence_snippets: list[EvidenceSnippet]
    original_chars: int
    digest_chars: int
    compression_ratio: float
    source_text_hash: str


class FidelityRecord(_Wire):
    """The fidelity record: what a phase did to a source's size, in tokens
    estimated as characters / 4. ``reason`` is ``digest_compression`` for a digest,
    ``digest_skipped:<why>`` for a source that passed through intact."""

    source_id: str
    phase: str = "digest"
    original_tokens: int
    final_tokens: int
    reason: str


class Source(_CamelWire):
    """A retrieved source (what any provider returns, normalized), plus the references later stages need."""

    id: str
    text: str  # bounded excerpt; the whole canonical text is in the object store
    excerpt_start: int | None = None  # offset of `text` in the canonical text (None: unknown)
    url: str
    title: str
    published_at: datetime | None = None
    relevance_score: float
    credibility_tier: CredibilityTier
    domain_authority: int
    retrieval_method: RetrievalMethod
    text_hash: str  # "sha256-<hex>" of the canonical text; object-store key
    text_chars: int
    corpus: str | None = None
    page_starts: list[int] | None = None  # PDF: offset of each page (1-based pages) in the canonical text
    metadata: dict[str, str] = Field(default_factory=dict)  # provider details: pmid, doi, journal, authors...
    matched_spans: list[tuple[int, int]] = Field(default_factory=list)
    digest: DigestPayload | None = None
    fidelity: FidelityRecord | None = None  # what the digest stage did to it
    found_by: list[str] = Field(default_factory=list)  # queries that returned it


class ScoredSource(Source):
    authority_score: float
    recency_score: float
    relevance_component: float
    credibility_score: float
    composite_score: float


class Citation(_CamelWire):
    source_id: str
    locator: str
    quote: str


# How far a claim or report sentence was checked against its quotes:
# ``quoted``: its text is a quote (exactly, up to spacing and footnote marks);
# ``entailed``: it passed the deterministic meaning checks and the verifier model
# judged its quotes to entail it; ``supported``: it passed the deterministic checks
# only (no verifier ran). Nothing is called "verified" without one of these.
Level = Literal["quoted", "entailed", "supported"]
LEVELS: tuple[Level, ...] = ("quoted", "entailed", "supported")


class Claim(_CamelWire):
    id: str
    text: str
    supporting_indices: list[int]
    contradicting_indices: list[int] = Field(default_factory=list)
    support_strength: float = 0.0
    contradiction_flag: bool = False
    confidence_score: float = 0.0
    checklist_item_ids: list[str] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    level: Level | None = None  # None: not yet checked (a claim made before levels existed)
    # The contradicting sources' passages that code found to state the opposite of the
    # claim (shared.verification.meaning.contradicts), one per source where it has one: what the
    # report quotes beside the claim under Contradictions.
    counter_citations: list[Citation] = Field(default_factory=list)


MAX_REJECTED_CLAIMS = 20  # kept per job (the latest); bounds the envelope
REJECTED_TEXT_MAX_CHARS = 300
REJECTED_REASON_MAX_CHARS = 200


class RejectedClaim(_CamelWire):
    """A claim proposed (by the model, or the offline engine) that the deterministic
    check refused: unknown snippet ids, a quote that does not verify, or text its
    quotes do not support. Kept so that what was dropped, and why, stays visible."""

    text: str
    reason: str
    iteration: int = 0
    engine: str = "offline"  # what proposed it
    cited: list[str] = Field(default_factory=list)  # the snippet ids it cited
    category: str | None = None  # the check that refused it, in one word (see shared.verification.grounding)

    @classmethod
    def of(cls, text: str, reason: str, *, iteration: int, engine: str, cited: list[str] | None = None,
           category: str | None = None) -> RejectedClaim:
        """A rejected claim with every field cut to its bound (a model may send anything)."""
        return cls(text=_cut(text, REJECTED_TEXT_MAX_CHARS), reason=_cut(reason, REJECTED_REASON_MAX_CHARS),
                   iteration=iteration, engine=engine, cited=[_cut(c, 40) for c in (cited or [])[:10]],
                   category=category)


def _cut(value: str, limit: int) -> str:
    value = " ".join(value.split())
    return value if len(value) <= limit else value[: limit - 1] + "…"


class JobConfidence(_CamelWire):
    confidence: float
    claim_count: int
    source_count: int
    has_contradictions: bool


# -- usage ---------------------------------------------------------------------


class StageUsage(_Wire):
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0
    latency_s: float = 0.0  # summed over the stage's model calls
    models: list[str] = Field(default_factory=list)
    # Calls the offline engine answered because the provider was unavailable (see Degraded).
    degraded_calls: int = 0
    # What the stage's calls cost in USD at the configured prices (shared/llm/pricing.py);
    # calls of the models in ``unpriced_models`` count 0 (their price is not known, not 0).
    cost_usd: float = 0.0
    unpriced_models: list[str] = Field(default_factory=list)


class Usage(_Wire):
    """Token usage per stage (the result's ``tokenUsage``); zero while every stage runs offline."""

    by_stage: dict[str, StageUsage] = Field(default_factory=dict)

    @property
    def calls(self) -> int:
        return sum(u.calls for u in self.by_stage.values())

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def input_tokens(self) -> int:
        return sum(u.input_tokens for u in self.by_stage.values())

    @property
    def output_tokens(self) -> int:
        return sum(u.output_tokens for u in self.by_stage.values())

    @property
    def cost_usd(self) -> float:
        """What the job's calls cost at the configured prices (unpriced models count 0)."""
        return round(sum(u.cost_usd for u in self.by_stage.values()), 6)

    @property
    def unpriced_models(self) -> list[str]:
        """Models the job called that no price is configured for."""
        return list(dict.fromkeys(m for u in self.by_stage.values() for m in u.unpriced_models))


# -- the envelope --------------------------------------------------------------


class ReusedWork(_Wire):
    """What a job took over from an earlier, similar job of the same user: that job's
    sources (digested, with their claims) were not searched, digested or extracted again."""

    job_id: str
    similarity: float  # of the two questions' stemmed content terms (services/gateway/reuse.py)
    sources: int
    claims: int
    source_ids: list[str] = Field(default_factory=list)
    covered: bool = False  # its checklist already covered the question: straight to synthesis
    # A follow-up question of that job (services/gateway/followup.py), not a similar one;
    # ``question`` is then that job's refined question, which the new plan builds on.
    follow_up: bool = False
    question: str | None = None


class Degraded(_Wire):
    """The model provider was unavailable after the client's retries (overloaded,
    failing, unreachable, too slow): from this stage of this iteration on, the job's
    model work was done by the offline engine, and later stages do not wait on the
    provider again (shared/llm/engine.py)."""

    stage: str
    iteration: int = 0
    reason: str  # the provider's error, in one line


class JobEnvelope(_Wire):
    version: Literal[1] = ENVELOPE_VERSION
    job_id: str
    user_id: str
    stage: Stage
    iteration: int = 0
    request: ResearchRequest
    created_at: datetime = Field(default_factory=utcnow)
    deadline_at: datetime
    plan: Plan | None = None
    queries_run: list[str] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)
    new_source_ids: list[str] = Field(default_factory=list)  # found by this iteration
    scored_sources: list[ScoredSource] = Field(default_factory=list)
    claims: list[Claim] = Field(default_factory=list)
    confidence: JobConfidence | None = None
    knowledge_gaps: list[str] = Field(default_factory=list)
    memory: ResearchMemory = Field(default_factory=ResearchMemory)  # shared/research/memory.py
    rejected_claims: list[RejectedClaim] = Field(default_factory=list)  # at most MAX_REJECTED_CLAIMS
    usage: Usage = Field(default_factory=Usage)
    notes: list[str] = Field(default_factory=list)  # e.g. "deadline reached"
    provider_errors: list[str] = Field(default_factory=list)
    # The hop before the brief (at CONTEXT_ITERATION): "context" on the retrieve command
    # of the quick context search, "brief" on the plan command it answers with; None on
    # every other command; "reviewed" on the plan command that carries the plan the user
    # approved (shared/research/plan_review.py): planning writes its queries, no new plan.
    phase: Literal["context", "brief", "reviewed"] | None = None
    context_hits: list[ContextHit] = Field(default_factory=list)  # what the context search found
    # Dependent steps' verified claims (ids "<step id>.a<n>"), kept across passes: scoring
    # extracts the other claims afresh each pass, but an analysis runs once.
    analysis_claims: list[Claim] = Field(default_factory=list)
    resumes: int = 0  # how many times the job was resumed: part of every message id
    reused: ReusedWork | None = None  # what it took over from an earlier job
    degraded: Degraded | None = None  # since when the model provider was unavailable: offline from there on

    @property
    def msg_id(self) -> str:
        """The deterministic Nats-Msg-Id of this envelope's command: the context hop's
        two commands carry their phase, so they never collide with iteration 0's. A
        resumed job runs stages again: its resume count keeps JetStream's duplicate
        window from dropping them as copies of an earlier run's commands."""
        base = f"{self.job_id}:{self.stage.value}:{self.iteration}"
        base = f"{base}:{self.phase}" if self.phase else base
        return f"{base}:r{self.resumes}" if self.resumes else base

    def outcome_msg_id(self, kind: str) -> str:
        """The Nats-Msg-Id of the job's ``completed`` or ``failed`` event: one per run."""
        return f"{self.job_id}:{kind}" + (f":r{self.resumes}" if self.resumes else "")

    def advance(self, stage: Stage, **changes: object) -> JobEnvelope:
        """The envelope for the next stage; ``changes`` replace fields."""
        return self.model_copy(update={"stage": stage, **changes})

    def deadline_passed(self, now: datetime | None = None) -> bool:
        return (now or utcnow()) >= self.deadline_at


def new_job_id() -> str:
    return str(uuid.uuid4())
