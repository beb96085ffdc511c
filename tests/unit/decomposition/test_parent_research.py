"""A follow-up's first plan: the parent's claims count toward its checklist, the steps
they answer do not search (the follow-up question itself always does), and a model
planner is told the parent's question and findings as context; any other job's plan is
left as it is."""

from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace

from services.decomposition.parent_research import count_parent_claims, parent_context, planning_request
from services.decomposition.plan import first_plan
from services.synthesis.steps import step_lines
from shared.research.envelope import Claim, CoverageStatus, JobEnvelope, ResearchRequest, ReusedWork, utcnow
from shared.research.memory import Insight, ResearchMemory
from shared.subjects import Stage

QUESTION = "What happened to lighthouse keepers after automation?"
CLAIMS = [
    Claim(id="cl1", text="Automation replaced lighthouse keepers with electric lamps and remote monitoring.", supporting_indices=[0]),
    Claim(id="cl2", text="The last lighthouse keepers left when automation of the lighthouse was complete.", supporting_indices=[0]),
    Claim(id="cl3", text="Bees make honey from nectar.", supporting_indices=[1]),
]


def _envelope(*, follow_up: bool = True, claims: list[Claim] = CLAIMS, context: str | None = None) -> JobEnvelope:
    reused = ReusedWork(job_id="parent-1", similarity=0.4, sources=2, claims=len(claims), source_ids=["s1", "s2"],
                        follow_up=follow_up, question="How did automation change lighthouse keeping?")
    return JobEnvelope(
        job_id="j1", user_id="u", stage=Stage.PLAN, request=ResearchRequest(question=QUESTION, context=context),
        deadline_at=utcnow() + timedelta(minutes=5), claims=claims, reused=reused,
        memory=ResearchMemory(insights=[Insight(text=c.text, confidence=0.6, claim_ids=[c.id]) for c in claims[:2]]),
    )


def test_the_parent_claims_count_toward_the_checklist_and_answered_steps_do_not_search() -> None:
    env = _envelope()
    plan = first_plan(env.request)
    counted, skipped = count_parent_claims(env, plan)
    assert skipped >= 1
    first, *rest = counted.sub_questions
    assert first.searched == plan.sub_questions[0].searched and first.searched  # the question itself searches
    assert {q.text for q in counted.queries} >= set(first.searched)
    not_searched = [s for s in rest if not s.searched]
    assert len(not_searched) == skipped and all(s.answered_by == "parent-1" for s in not_searched)
    assert first.answered_by is None
    for step in not_searched:
        before = next(s for s in plan.sub_questions if s.id == step.id)
        assert not set(before.searched) & {q.text for q in counted.queries} - set(first.searched)
    answered = [i for i in counted.checklist if i.evidence]
    assert answered and all(set(i.evidence) <= {"cl1", "cl2"} for i in answered)
    assert all(i.status in (CoverageStatus.SATISFIED, CoverageStatus.PARTIAL) and "parent-1" in (i.reason or "")
               for i in answered)


def test_any_other_plan_is_unchanged() -> None:
    for env in (_envelope(follow_up=False), _envelope(claims=[])):
        plan = first_plan(env.request)
        assert count_parent_claims(env, plan) == (plan, 0)


def test_a_model_planner_is_told_the_parent_research_as_context() -> None:
    env = _envelope(context="for a museum guide")
    offline, model = SimpleNamespace(offline=True), SimpleNamespace(offline=False)
    assert planning_request(env, offline) is env.request  # the offline plan reads the question's own words
    request = planning_request(env, model)
    assert request.question == QUESTION and request.context.startswith("for a museum guide\n\n")
    assert "parent-1" in request.context and "How did automation change lighthouse keeping?" in request.context
    assert CLAIMS[0].text in request.context and request.context.endswith(parent_context(env))
    assert planning_request(_envelope(follow_up=False), model).context is None


def test_the_methodology_says_which_steps_the_parent_answered() -> None:
    env = _envelope()
    counted, _ = count_parent_claims(env, first_plan(env.request))
    lines = step_lines(counted)
    assert lines[0].endswith(QUESTION) and "searched in iteration 1" in lines[0]
    assert any("not searched: the verified claims of job parent-1" in line for line in lines[1:]), lines
