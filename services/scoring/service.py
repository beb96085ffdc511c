"""The scoring service.

Consumes ``research.stage.score``; emits ``research.stage.plan`` (a refinement pass)
or ``research.stage.synthesize``.
Scores every source with seed 000's SourceScorer, extracts claims (offline engine
for now), scores them with ClaimScorer, computes the job confidence, and assesses the
checklist's coverage (seed 001 step 3d). It loops back to planning only while items
remain open, iterations remain, the deadline has not passed, and the last iteration
found new sources (otherwise another pass could not learn anything new).
"""

from __future__ import annotations

from faststream.nats import NatsMessage

from services.scoring.claims import assess_coverage, extract_claims, knowledge_gaps
from services.scoring.engine import ClaimScorer, JobConfidenceCalculator, SourceScorer
from shared import subjects
from shared.envelope import DEADLINE_NOTE, CoverageStatus, JobEnvelope, utcnow
from shared.errors import PermanentError
from shared.llm import BUDGET_NOTE
from shared.settings import StageSettings
from shared.stage import StageContext, stage_app
from shared.subjects import Stage

settings = StageSettings()
broker, app, runner = stage_app(Stage.SCORE, settings)


@broker.subscriber(subjects.SCORE, **runner.subscriber_options())
async def on_score(msg: NatsMessage) -> None:
    await runner.handle(msg, score_job)


async def score_job(envelope: JobEnvelope, ctx: StageContext) -> JobEnvelope:
    plan = envelope.plan
    if plan is None:
        raise PermanentError("score command without a plan")
    now = utcnow()
    scorer = SourceScorer()
    scored = sorted((scorer.score(s, now=now) for s in envelope.sources), key=lambda s: (-s.composite_score, s.id))
    await ctx.progress(0.3, "sources scored", sources=len(scored))
    claims = extract_claims(
        envelope.request.question, [sq.text for sq in plan.sub_questions], plan.checklist, scored
    )
    claims = ClaimScorer().score_all(claims, scored)
    confidence = JobConfidenceCalculator().calculate(claims, scored)
    checklist = assess_coverage(plan.checklist, claims)
    gaps = knowledge_gaps(checklist)
    satisfied = sum(item.status == CoverageStatus.SATISFIED for item in checklist)
    await ctx.progress(
        1.0, "claims scored and checklist assessed",
        claims=len(claims), checklist_satisfied=satisfied, checklist_items=len(checklist), gaps=len(gaps),
    )
    scored_envelope = envelope.advance(
        Stage.SYNTHESIZE,
        plan=plan.model_copy(update={"checklist": checklist}),
        scored_sources=scored,
        claims=claims,
        confidence=confidence,
        knowledge_gaps=gaps,
    )
    if envelope.deadline_passed(now):
        return scored_envelope.model_copy(update={"notes": [*envelope.notes, DEADLINE_NOTE]})
    if BUDGET_NOTE in envelope.notes or ctx.llm.budget_spent:
        # The token budget is spent: stop researching, synthesize what we have.
        notes = envelope.notes if BUDGET_NOTE in envelope.notes else [*envelope.notes, BUDGET_NOTE]
        return scored_envelope.model_copy(update={"notes": notes})
    next_iteration = envelope.iteration + 1
    if gaps and envelope.new_source_ids and next_iteration < envelope.request.max_iterations:
        return scored_envelope.advance(Stage.PLAN, iteration=next_iteration, new_source_ids=[])
    return scored_envelope
