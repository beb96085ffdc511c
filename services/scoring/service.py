"""The scoring service.

Consumes ``research.stage.score``; emits ``research.stage.plan`` (a refinement pass)
or ``research.stage.synthesize``.
Scores every source (SourceScorer: authority, recency, relevance, credibility); has
claims proposed (by the model when one is configured, else by the offline engine) and
keeps only those whose snippet ids exist, whose quotes verify against the archived source texts and whose
text is grounded in its quotes (services/scoring/model_claims.py); scores them with
ClaimScorer, computes the job confidence, and judges the checklist's coverage against
the verified claims (services/scoring/coverage.py). Rejected claims travel on with
their reasons; parts done offline because the model failed are noted for the report.
It loops back to planning only while items remain open, iterations remain, the
deadline has not passed, and the last iteration found new sources (otherwise another
pass could not learn anything new).
"""

from __future__ import annotations

from collections.abc import Sequence

from services.scoring.coverage import judge_coverage
from services.scoring.engine import ClaimScorer, SourceScorer
from services.scoring.model_claims import Verifier, extract_verified_claims, load_canonical_texts
from shared.claims import JobConfidenceCalculator, knowledge_gaps
from shared.envelope import (
    DEADLINE_NOTE,
    MAX_REJECTED_CLAIMS,
    Claim,
    CoverageStatus,
    JobEnvelope,
    RejectedClaim,
    utcnow,
)
from shared.errors import PermanentError
from shared.llm import BUDGET_NOTE
from shared.settings import StageSettings
from shared.stage import StageContext, stage_app
from shared.subjects import Stage

MAX_CLAIMS = 20  # kept per pass (the most confident), as the offline engine; bounds the envelope

settings = StageSettings()
broker, app, runner = stage_app(Stage.SCORE, settings)


def rank_claims(claims: Sequence[Claim], *, limit: int = MAX_CLAIMS) -> list[Claim]:
    """At most ``limit`` scored claims (the most confident; ties and order otherwise as
    proposed), numbered cl1, cl2... in that order."""
    keep = sorted(range(len(claims)), key=lambda i: (-claims[i].confidence_score, i))[:limit]
    return [claims[i].model_copy(update={"id": f"cl{n}"}) for n, i in enumerate(sorted(keep), start=1)]


def merge_rejected(earlier: Sequence[RejectedClaim], new: Sequence[RejectedClaim]) -> list[RejectedClaim]:
    """Earlier passes' rejections plus this pass's, one per (text, reason), the latest
    MAX_REJECTED_CLAIMS."""
    out: dict[tuple[str, str], RejectedClaim] = {}
    for r in [*earlier, *new]:
        out.pop((r.text, r.reason), None)
        out[(r.text, r.reason)] = r
    return list(out.values())[-MAX_REJECTED_CLAIMS:]


@runner.work  # up to RESEARCH_STAGE_CONCURRENCY at once; routes: shared/routing.py
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
    outcome = await extract_verified_claims(
        envelope.request.question, [sq.text for sq in plan.sub_questions], plan.checklist, scored,
        ctx.llm, verifier, iteration=envelope.iteration,
    )
    claims = rank_claims(ClaimScorer().score_all(outcome.claims, scored))
    await ctx.progress(0.6, "claims verified", claims=len(claims), rejected=len(outcome.rejected))
    confidence = JobConfidenceCalculator().calculate(claims, scored)
    checklist, coverage_notes = await judge_coverage(plan.refined_question or envelope.request.question,
                                                     plan.checklist, claims, ctx.llm)
    gaps = knowledge_gaps(checklist)
    satisfied = sum(item.status == CoverageStatus.SATISFIED for item in checklist)
    await ctx.progress(
        1.0, "claims scored and checklist assessed",
        claims=len(claims), rejected_claims=len(outcome.rejected),
        checklist_satisfied=satisfied, checklist_items=len(checklist), gaps=len(gaps),
    )
    notes = list(dict.fromkeys([*envelope.notes, *outcome.notes, *coverage_notes]))
    scored_envelope = envelope.advance(
        Stage.SYNTHESIZE,
        plan=plan.model_copy(update={"checklist": checklist}),
        scored_sources=scored,
        claims=claims,
        confidence=confidence,
        knowledge_gaps=gaps,
        rejected_claims=merge_rejected(envelope.rejected_claims, outcome.rejected),
        notes=notes,
    )
    if envelope.deadline_passed(now):
        return scored_envelope.model_copy(update={"notes": list(dict.fromkeys([*notes, DEADLINE_NOTE]))})
    if BUDGET_NOTE in notes or ctx.llm.budget_spent:
        # The token budget is spent: stop researching, synthesize what we have.
        return scored_envelope.model_copy(update={"notes": notes if BUDGET_NOTE in notes else [*notes, BUDGET_NOTE]})
    next_iteration = envelope.iteration + 1
    if gaps and envelope.new_source_ids and next_iteration < envelope.request.max_iterations:
        return scored_envelope.advance(Stage.PLAN, iteration=next_iteration, new_source_ids=[])
    return scored_envelope
