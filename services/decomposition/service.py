"""The decomposition (planning) service.

Consumes ``research.stage.plan``; emits ``research.stage.retrieve``, or a
``clarification`` event when the request allowed clarifying questions and the question
needs them (the gateway then holds the job in AWAITING_INPUT until the user answers).
Before the first plan, when a model writes the brief and RESEARCH_CONTEXT_SEARCH is on,
the job takes one hop to retrieval for a quick context search (``phase="context"``,
iteration -1) and comes back (``phase="brief"``) with titles and snippets the brief is
written from; iteration 0 then starts as usual.
With ``review_plan`` on the request, the first plan goes to the gateway in a
``plan_review`` event (the job waits in AWAITING_INPUT for the user); the approved plan
comes back with ``phase="reviewed"`` and goes on to retrieval without being planned
again, its new and reworded steps given queries (review.py).
First pass (iteration 0): research brief (refined question, scope, key terms,
checklist), 1-8 sub-questions (parsed by plan.parse_sub_questions), step kinds and
dependencies (shared/research/steps.py), and the independent steps' per-provider queries.
Refinement passes (iteration > 0, sent by scoring): new queries aimed only at the
checklist items still open, never repeating a query already run for the job, plus
the queries of hybrid steps whose dependencies now have verified claims (hybrid.py).
Model work goes through the LLM layer (planner.py); the offline engine is plan.py.
With a council configured (RESEARCH_COUNCIL_MODELS), each member reviews the first
plan: a ``council`` event per verdict, carried to the report in the envelope's notes.
"""

from __future__ import annotations


from services.decomposition.hybrid import hybrid_queries
from services.decomposition.parent_research import count_parent_claims, planning_request
from services.decomposition.plan import dedupe_queries
from services.decomposition.planner import clarifying_questions, plan_first, plan_refinement
from services.decomposition.review import review_request, schedule_reviewed
from shared.llm.council import Council, brief_review_notes
from shared.research.envelope import CONTEXT_ITERATION, JobEnvelope, Plan, Usage
from shared.research.events import ClarificationRequested, CouncilReviewed, PlanReviewRequested
from shared.llm.engine import LLMEngine
from shared.settings import StageSettings
from shared.runtime.app import stage_app
from shared.runtime.stage import StageContext
from shared.subjects import Stage

settings = StageSettings()
broker, app, runner = stage_app(Stage.PLAN, settings)
council = Council.from_settings(settings)  # RESEARCH_COUNCIL_MODELS; empty: no review


@runner.work  # up to RESEARCH_STAGE_CONCURRENCY at once; routes: shared/runtime/routing.py
async def plan_job(envelope: JobEnvelope, ctx: StageContext) -> JobEnvelope | ClarificationRequested | PlanReviewRequested:
    bounded = ctx.deadline.model_or_offline  # model work cut at the job's deadline; the offline answer then
    if envelope.phase == "reviewed" and envelope.plan is not None:  # the plan the user approved: not planned again
        plan = schedule_reviewed(envelope.plan)
        message = "reviewed plan ready"
    elif envelope.plan is None:
        if envelope.phase is None:  # not yet back from the context search
            if questions := await bounded(ctx.llm, lambda llm: clarifying_questions(envelope.request, llm),
                                          cut="plan: the model's clarifying questions (none asked)"):
                await ctx.progress(1.0, "the question needs clarification", questions=len(questions))
                return ClarificationRequested(job_id=envelope.job_id, questions=questions, usage=ctx.llm.usage())
            if wants_context_search(settings, offline=ctx.llm.offline) and not ctx.deadline.passed:
                await ctx.progress(1.0, "a quick search for context before the brief")
                return envelope.advance(Stage.RETRIEVE, phase="context", iteration=CONTEXT_ITERATION)
        notes: list[str] = []
        plan = await bounded(ctx.llm, lambda llm: plan_first(
            planning_request(envelope, llm), llm, max_sub_questions=settings.research_max_sub_questions,
            context_hits=envelope.context_hits, notes=notes,
        ), cut="plan: the model's research plan (the offline plan instead)")
        envelope = envelope.model_copy(update={"notes": [*envelope.notes, *notes]})
        plan, answered = count_parent_claims(envelope, plan)  # a follow-up's parent's claims
        message = "research plan ready" + (f"; {answered} step(s) already answered by the parent job" if answered else "")
        if council:
            envelope = await _council_review(envelope, plan, ctx)
        if envelope.request.review_plan:  # the user approves it first (services/decomposition/review.py)
            return await review_request(envelope, plan, ctx)
    else:
        queries = await bounded(ctx.llm, lambda llm: plan_refinement(envelope, llm),
                                cut="plan: the model's refinement queries (the offline ones instead)")
        plan, step_queries = await bounded(ctx.llm, lambda llm: hybrid_queries(envelope, llm),
                                           cut="plan: the model's queries for steps that build on others")
        plan = plan.model_copy(update={"queries": dedupe_queries([*step_queries, *queries])})
        message = "refinement queries ready" if plan.queries else "no new queries: every open item was already searched"
    await ctx.progress(
        1.0, message,
        sub_questions=len(plan.sub_questions), checklist_items=len(plan.checklist), queries=len(plan.queries),
        steps_run=len(plan.step_order),
    )
    # Back from the context search (iteration -1), research starts at iteration 0.
    return envelope.advance(Stage.RETRIEVE, plan=plan, phase=None, iteration=max(envelope.iteration, 0))


@runner.on_deadline  # the runner cut plan_job past the deadline (RESEARCH_DEADLINE_GRACE_S)
async def plan_at_deadline(envelope: JobEnvelope, ctx: StageContext) -> JobEnvelope:
    """On to retrieval with the offline plan (first pass) or no new queries (later ones)."""
    if envelope.phase == "reviewed" and envelope.plan is not None:
        plan = schedule_reviewed(envelope.plan)
    elif envelope.plan is None:
        offline = LLMEngine(None).bind(Stage.PLAN.value, Usage())
        plan = await plan_first(envelope.request, offline, max_sub_questions=settings.research_max_sub_questions)
        plan = count_parent_claims(envelope, plan)[0]
    else:
        plan = envelope.plan.model_copy(update={"queries": []})
    return envelope.advance(Stage.RETRIEVE, plan=plan, phase=None, iteration=max(envelope.iteration, 0))


def wants_context_search(s: StageSettings, *, offline: bool) -> bool:
    """RESEARCH_CONTEXT_SEARCH, when a model writes the brief: the offline brief is
    made from the question's own words and would not read what the search found."""
    return s.research_context_search and not offline


async def _council_review(envelope: JobEnvelope, plan: Plan, ctx: StageContext) -> JobEnvelope:
    """The council's verdicts on the plan, published as events and carried in the
    envelope's notes to the report. Advisory: research goes ahead either way."""
    reviews = await ctx.deadline.bounded(council.review_brief(envelope, plan, ctx.llm), default=list,
                                         cut="plan: the council's review of the plan")
    for n, review in enumerate(reviews):
        await ctx.event(CouncilReviewed(job_id=envelope.job_id, stage=Stage.PLAN, review=review),
                        f"{envelope.msg_id}:council:brief:{n}")
    return envelope.model_copy(update={"notes": [*envelope.notes, *brief_review_notes(reviews)]})
