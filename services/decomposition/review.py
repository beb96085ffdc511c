"""Plan review, planning's side: the first plan handed to the user, and the plan the
user approved made ready for retrieval.

With ``review_plan`` on the request, the first plan goes to the gateway in a
``plan_review`` event instead of on to retrieval (:func:`review_request`). The user's
approved plan comes back on a plan command with ``phase="reviewed"``; it is not planned
again: steps the user left as they were keep their queries, and each new or reworded
independent step gets the offline planner's queries for its text
(:func:`schedule_reviewed`), searched in iteration 0 like the first plan's.
"""

from __future__ import annotations

from shared.research.envelope import JobEnvelope, Plan, StepKind
from shared.research.events import PlanReviewRequested
from shared.research.plan_review import review_of
from shared.research.steps import default_dependencies, mark_ran
from shared.runtime.stage import StageContext

from services.decomposition.plan import dedupe_queries, queries_for

__all__ = ["review_request", "schedule_reviewed"]


async def review_request(envelope: JobEnvelope, plan: Plan, ctx: StageContext) -> PlanReviewRequested:
    """The event that puts the job on hold with ``plan`` for the user to review; its
    envelope (this stage's usage and notes applied) is what research continues from."""
    held = ctx.llm.apply(envelope.model_copy(update={"plan": plan, "phase": None, "iteration": 0}))
    await ctx.progress(1.0, "research plan ready for review", sub_questions=len(plan.sub_questions),
                       checklist_items=len(plan.checklist), queries=len(plan.queries))
    return PlanReviewRequested(job_id=envelope.job_id, plan=review_of(plan), envelope=held, usage=held.usage)


def schedule_reviewed(plan: Plan) -> Plan:
    """The approved plan for iteration 0: a hybrid or dependent step that names no
    dependency gets the earlier steps (as in a first plan), and every independent step
    that has not run (new, or reworded by the user) gets one query per provider and
    is marked as run. The queries of the steps the user kept stay as they were."""
    steps = default_dependencies(plan.sub_questions)
    todo = [s for s in steps if s.kind is StepKind.INDEPENDENT and s.ran_in_iteration is None]
    per_step = {s.id: queries_for(s.text, iteration=0) for s in todo}
    plan = plan.model_copy(update={
        "sub_questions": steps,
        "queries": dedupe_queries([*plan.queries, *(q for s in todo for q in per_step[s.id])]),
    })
    return mark_ran(plan, [s.id for s in todo], 0, searched={i: [q.text for q in qs] for i, qs in per_step.items()})
