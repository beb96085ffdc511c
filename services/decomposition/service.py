"""The decomposition (planning) service.

Consumes ``research.stage.plan``; emits ``research.stage.retrieve``.
First pass (iteration 0): refined question, checklist, 1-8 sub-questions by seed
000's rules, step kinds and search queries. Refinement passes (iteration > 0, sent by
scoring): new queries aimed only at the checklist items still open, never repeating a
query already run for the job. Offline engine for now (see plan.py).
"""

from __future__ import annotations

from faststream.nats import NatsMessage

from services.decomposition.plan import first_plan, refinement_queries
from shared import subjects
from shared.envelope import JobEnvelope
from shared.settings import StageSettings
from shared.stage import StageContext, stage_app
from shared.subjects import Stage

settings = StageSettings()
broker, app, runner = stage_app(Stage.PLAN, settings)


@broker.subscriber(subjects.PLAN, **runner.subscriber_options())
async def on_plan(msg: NatsMessage) -> None:
    await runner.handle(msg, plan_job)


async def plan_job(envelope: JobEnvelope, ctx: StageContext) -> JobEnvelope:
    if envelope.plan is None:
        plan = first_plan(envelope.request, max_sub_questions=settings.research_max_sub_questions)
        message = "research plan ready"
    else:
        queries = refinement_queries(envelope.plan, iteration=envelope.iteration, queries_run=envelope.queries_run)
        plan = envelope.plan.model_copy(update={"queries": queries})
        message = "refinement queries ready" if queries else "no new queries: every open item was already searched"
    await ctx.progress(
        1.0, message,
        sub_questions=len(plan.sub_questions), checklist_items=len(plan.checklist), queries=len(plan.queries),
    )
    return envelope.advance(Stage.RETRIEVE, plan=plan)
