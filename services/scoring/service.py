"""The scoring service.

Consumes ``research.stage.score``; emits ``research.stage.plan`` (a refinement pass)
or ``research.stage.synthesize``.
Scores every source (SourceScorer: authority, recency, relevance, credibility); has
claims proposed (by the model when one is configured, else by the offline engine) and
keeps only those whose snippet ids exist, whose quotes verify against the archived source texts and whose
text is grounded in its quotes (services/scoring/model_claims.py), and checks claims
carried from an earlier job or pass the same way again; scores them with
ClaimScorer, computes the job confidence, and judges the checklist's coverage against
the verified claims (services/scoring/coverage.py). Dependent plan steps whose
dependencies now have verified claims are analysed here, without a search, and their
claims verified the same way (services/scoring/analysis.py). Rejected claims travel on
with their reasons; parts done offline because the model failed are noted for the report.
It loops back to planning only while iterations remain (``max_iterations``, one more
for a detailed report while checklist items are open) and the deadline has not passed,
and either items remain open and the last iteration found new sources (otherwise
another pass could not learn anything new), or a hybrid step's dependencies now have
claims and its search is still to be written.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import TypeVar

from services.scoring.analysis import run_dependent_steps
from services.scoring.coverage import judge_coverage
from services.scoring.engine import ClaimScorer, SourceScorer
from services.scoring.judged import judge_claims
from services.scoring.memory import updated_memory
from services.scoring.claims import MAX_CLAIMS
from services.scoring.contradictions import cross_contradictions
from services.scoring.model_claims import extract_verified_claims, load_canonical_texts
from services.scoring.claim_checks import Verifier
from services.scoring.reused import claims_with_reuse
from shared.research.claims import JobConfidenceCalculator, knowledge_gaps
from shared.research.envelope import (
    DEADLINE_NOTE,
    MAX_REJECTED_CLAIMS,
    Claim,
    CoverageStatus,
    JobEnvelope,
    RejectedClaim,
    StepKind,
    utcnow,
)
from shared.platform.errors import PermanentError
from shared.research.events import TraceChecklistItem, TraceJudge
from shared.verification.judge import Judge, make_verifier_engine
from shared.verification.clauses import warm_up
from shared.llm.budget import BUDGET_NOTE, COST_NOTE
from shared.llm.engine import JobLLM
from shared.settings import StageSettings
from shared.runtime.app import stage_app
from shared.runtime.stage import StageContext
from shared.research.steps import claims_by_step, ready_steps
from shared.subjects import Stage

T = TypeVar("T")
# 20 claims at the longest the checks allow (400 characters, 4 citations of 400): the
# envelope's worst case, next to 40 sources at their own bounds, stays under 1 MiB.
MAX_CLAIMS_BYTES = 96_000

settings = StageSettings()
broker, app, runner = stage_app(Stage.SCORE, settings)
# The entailment judge's engine (RESEARCH_VERIFIER_MODEL; empty: the job's own model).
verifier_engine = make_verifier_engine(settings, runner.llm)
warm_up()  # the meaning checks' tables, loaded before the first job rather than during it


def rank_claims(claims: Sequence[Claim], *, limit: int = MAX_CLAIMS) -> list[Claim]:
    """At most ``limit`` scored claims, and at most ``MAX_CLAIMS_BYTES`` of them as JSON
    (the most confident; ties and order otherwise as proposed), numbered cl1, cl2... in
    that order. Claims are usually a sentence with a citation or two, so ``limit`` is
    what binds; the byte bound holds the envelope under NATS's message limit when every
    claim is as long as the checks allow."""
    keep: list[int] = []
    size = 0
    for i in sorted(range(len(claims)), key=lambda i: (-claims[i].confidence_score, i))[:limit]:
        size += len(claims[i].model_dump_json(by_alias=True).encode())
        if size > MAX_CLAIMS_BYTES:
            break
        keep.append(i)
    return [claims[i].model_copy(update={"id": f"cl{n}"}) for n, i in enumerate(sorted(keep), start=1)]


def merge_rejected(earlier: Sequence[RejectedClaim], new: Sequence[RejectedClaim]) -> list[RejectedClaim]:
    """Earlier passes' rejections plus this pass's, one per (text, reason), the latest
    MAX_REJECTED_CLAIMS."""
    out: dict[tuple[str, str], RejectedClaim] = {}
    for r in [*earlier, *new]:
        out.pop((r.text, r.reason), None)
        out[(r.text, r.reason)] = r
    return list(out.values())[-MAX_REJECTED_CLAIMS:]


async def _until_deadline(ctx: StageContext, work: Callable[[JobLLM], Awaitable[T]], *, cut: str) -> T:
    """``work`` with the job's model, cut at the job's deadline and done again by the
    offline engine (CPU work over what is already here: it takes no model call)."""
    return await ctx.deadline.model_or_offline(ctx.llm, work, cut=cut)


@runner.work  # up to RESEARCH_STAGE_CONCURRENCY at once; routes: shared/runtime/routing.py
async def score_job(envelope: JobEnvelope, ctx: StageContext) -> JobEnvelope:
    plan = envelope.plan
    if plan is None:
        raise PermanentError("score command without a plan")
    now = utcnow()
    scorer = SourceScorer()
    scored = sorted((scorer.score(s, now=now) for s in envelope.sources), key=lambda s: (-s.composite_score, s.id))
    await ctx.progress(0.2, "sources scored", sources=len(scored))

    texts = await load_canonical_texts(ctx.texts.get, [s.text_hash for s in scored])
    verifier = Verifier(scored, texts, min_jaccard=ctx.settings.grounding_quote_min_jaccard,
                        min_support=ctx.settings.grounding_min_support)
    # A job seeded from an earlier one extracts, on its first pass, from its own new sources only.
    outcome = await claims_with_reuse(envelope, scored, texts, verifier, lambda sources, check: _until_deadline(
        ctx, lambda llm: extract_verified_claims(envelope.request.question, [sq.text for sq in plan.sub_questions],
                                                 plan.checklist, sources, llm, check, iteration=envelope.iteration),
        cut="score: the model's claim extraction (the offline engine's claims instead)"))
    judged, vetoed, judging = await _until_deadline(ctx, lambda llm: judge_claims(
        outcome.claims, None if llm.offline or verifier_engine is None else Judge(llm, verifier_engine),
        iteration=envelope.iteration), cut="score: the entailment judge (claims left as checked by code)")
    outcome.rejected = [*outcome.rejected, *vetoed]
    # Batches never meet: two claims of different batches that disagree are paired here.
    claims = rank_claims(ClaimScorer().score_all(cross_contradictions(judged, scored), scored))
    steps = await _until_deadline(ctx, lambda llm: run_dependent_steps(
        envelope.request.question, plan, claims, scored, envelope.analysis_claims, llm, verifier,
        iteration=envelope.iteration), cut="score: dependent steps' analysis (combined offline instead)")
    analysis, vetoed, judging_steps = await _until_deadline(ctx, lambda llm: judge_claims(
        steps.claims, None if llm.offline or verifier_engine is None else Judge(llm, verifier_engine),
        iteration=envelope.iteration), cut="score: the entailment judge on the steps' analysis")
    steps.claims, steps.rejected = analysis, [*steps.rejected, *vetoed]
    # The dependent steps' claims count within MAX_CLAIMS: the most confident others fill the rest.
    plan, claims = steps.plan, [*rank_claims(claims, limit=MAX_CLAIMS - len(steps.claims)),
                                *ClaimScorer().score_all(steps.claims, scored)]
    outcome.rejected, outcome.notes = [*outcome.rejected, *steps.rejected], [*outcome.notes, *steps.notes]
    await ctx.progress(0.6, "claims verified", claims=len(claims), rejected=len(outcome.rejected))
    confidence = JobConfidenceCalculator().calculate(claims, scored)
    checklist, coverage_notes = await _until_deadline(ctx, lambda llm: judge_coverage(
        plan.refined_question or envelope.request.question, plan.checklist, claims, llm,
    ), cut="score: the model's coverage judgement (the offline rule instead)")
    gaps = knowledge_gaps(checklist)
    satisfied = sum(item.status == CoverageStatus.SATISFIED for item in checklist)
    await ctx.progress(
        1.0, "claims scored and checklist assessed",
        claims=len(claims), rejected_claims=len(outcome.rejected),
        checklist_satisfied=satisfied, checklist_items=len(checklist), gaps=len(gaps),
    )
    notes = list(dict.fromkeys([*envelope.notes, *outcome.notes, *coverage_notes]))
    memory = updated_memory(envelope.memory, claims, checklist, iteration=envelope.iteration)
    ctx.trace.update(
        checklist=[TraceChecklistItem(id=i.id, description=i.description, status=i.status.value) for i in checklist],
        claims_kept=len(claims), claims_rejected=len(outcome.rejected), memory=memory,
    )
    if judging is not None or judging_steps is not None:
        ctx.trace["judge"] = (judging or TraceJudge()).plus(judging_steps).model_dump()
    scored_envelope = envelope.advance(
        Stage.SYNTHESIZE,
        plan=plan.model_copy(update={"checklist": checklist}),
        scored_sources=scored,
        claims=claims,
        confidence=confidence,
        knowledge_gaps=gaps,
        memory=memory,
        rejected_claims=merge_rejected(envelope.rejected_claims, outcome.rejected),
        notes=notes,
        analysis_claims=steps.claims,
    )
    waiting = bool(ready_steps(plan, StepKind.HYBRID, claims_by_step(plan, claims, scored, steps.claims)))
    return _next_pass(envelope, scored_envelope, ctx, now=now, hybrid_waiting=waiting)


def iteration_limit(envelope: JobEnvelope) -> int:
    """The passes a job may make: its request's ``max_iterations``, and one more for a
    detailed report (``report_depth``) while the plan's checklist has open items."""
    extra = envelope.request.report_depth == "detailed" and bool(envelope.knowledge_gaps)
    return envelope.request.max_iterations + (1 if extra else 0)


def _next_pass(envelope: JobEnvelope, scored_envelope: JobEnvelope, ctx: StageContext, *,
               now: datetime, hybrid_waiting: bool) -> JobEnvelope:
    """Synthesis, or another pass: while items are open and the last pass found sources,
    or while a hybrid step's dependencies now have claims and its search is still to be
    written; never past the deadline, the token budget or the iterations asked for."""
    notes = scored_envelope.notes
    if envelope.deadline_passed(now) or ctx.deadline.passed:  # passed before this stage, or during it
        return scored_envelope.model_copy(update={"notes": list(dict.fromkeys([*notes, DEADLINE_NOTE]))})
    if BUDGET_NOTE in notes or COST_NOTE in notes or ctx.llm.budget_spent:
        # The token budget or the cost limit is spent: stop researching, synthesize what we have.
        spent = ctx.llm.spent_notes()
        return scored_envelope.model_copy(update={"notes": list(dict.fromkeys([*notes, *spent]))})
    next_iteration = envelope.iteration + 1
    more = scored_envelope.knowledge_gaps and envelope.new_source_ids or hybrid_waiting
    if more and next_iteration < iteration_limit(scored_envelope):
        return scored_envelope.advance(Stage.PLAN, iteration=next_iteration, new_source_ids=[])
    return scored_envelope
