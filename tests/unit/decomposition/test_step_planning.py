"""Plans whose steps depend on each other, against the loopback Anthropic fake (the
real SDK): an unexecutable plan is re-asked once with the reason, then replaced by the
offline steps; hybrid steps get their queries only once their dependencies have
verified claims, written from those claims."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from services.decomposition.hybrid import hybrid_queries, offline_step_queries
from services.decomposition.plan import first_plan
from services.decomposition.planner import plan_first
from shared.research.envelope import (
    ChecklistItem,
    Citation,
    Claim,
    CredibilityTier,
    JobEnvelope,
    Plan,
    ResearchRequest,
    RetrievalMethod,
    ScoredSource,
    StepKind,
    SubQuestion,
    Usage,
    utcnow,
)
from shared.llm.engine import make_engine
from shared.settings import StageSettings
from shared.research.steps import mark_ran
from shared.subjects import Stage
from shared.research.text import normalize_query
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.llm import text_of

Q = "How do heat pumps compare with gas boilers for home heating?"
BRIEF = {"refined_question": Q, "key_terms": ["heat pump", "gas boiler"],
         "checklist": ["How heat pumps work", "How gas boilers work", "Running costs of each"]}


def _step(sid: str, question: str, kind: str = "independent", deps: list[str] | None = None) -> dict[str, Any]:
    return {"id": sid, "question": question, "kind": kind, "depends_on": deps or [],
            "web_queries": [question.lower().rstrip("?")], "pubmed_queries": []}


VALID = {"sub_questions": [
    _step("a", Q),
    _step("b", "How efficient are heat pumps?"),
    _step("c", "How efficient are gas boilers?"),
    _step("d", "Which is cheaper to run?", "hybrid", ["b", "c"]),
    _step("e", "Recommend one for a cold climate", "dependent", ["d"]),
]}
CYCLIC = {"sub_questions": [
    _step("a", Q),
    _step("b", "How efficient are heat pumps?", "hybrid", ["c"]),
    _step("c", "How efficient are gas boilers?", "hybrid", ["b"]),
]}
UNKNOWN = {"sub_questions": [_step("a", Q), _step("b", "Which is cheaper to run?", "hybrid", ["zz"])]}


@pytest.fixture
def anthropic() -> Iterator[AnthropicFake]:
    with AnthropicFake() as fake:
        yield fake


def _llm(fake: AnthropicFake):  # noqa: ANN202
    settings = StageSettings(**{k.lower(): v for k, v in {**fake.env(), "LLM_MAX_RETRIES": "0"}.items()})
    return make_engine(settings).bind("plan", Usage())


async def test_a_cyclic_plan_is_re_asked_with_the_reason_and_the_answer_is_used(anthropic: AnthropicFake) -> None:
    anthropic.tool(BRIEF).tool(CYCLIC).tool(VALID)
    notes: list[str] = []
    plan = await plan_first(ResearchRequest(question=Q), _llm(anthropic), max_sub_questions=8, notes=notes)
    brief, first, reask = anthropic.delivered
    assert first.forced_tool == reask.forced_tool == "record_sub_questions"
    correction = text_of(reask.body["messages"][-1]["content"])
    assert "dependency cycle b -> c -> b" in correction, correction
    assert notes == []
    assert [(s.id, s.kind, s.depends_on) for s in plan.sub_questions] == [
        ("a", StepKind.INDEPENDENT, []), ("b", StepKind.INDEPENDENT, []), ("c", StepKind.INDEPENDENT, []),
        ("d", StepKind.HYBRID, ["b", "c"]), ("e", StepKind.DEPENDENT, ["d"])]
    # Only the independent steps search now, and they are recorded as run first.
    assert plan.step_order == ["a", "b", "c"]
    assert {normalize_query(q.text) for q in plan.queries if q.provider is RetrievalMethod.WEB} == {
        normalize_query(Q.rstrip("?")), "how efficient are heat pumps", "how efficient are gas boilers"}


@pytest.mark.parametrize(("bad", "reason"), [(UNKNOWN, "step b depends on unknown step zz"),
                                             (CYCLIC, "dependency cycle")])
async def test_a_plan_wrong_twice_gives_way_to_the_offline_steps(anthropic: AnthropicFake, bad: dict[str, Any],
                                                                 reason: str) -> None:
    anthropic.tool(BRIEF).tool(bad).tool(bad)
    notes: list[str] = []
    plan = await plan_first(ResearchRequest(question=Q), _llm(anthropic), max_sub_questions=8, notes=notes)
    assert len(anthropic.delivered) == 3  # the brief, the plan, the one re-ask
    assert reason in text_of(anthropic.delivered[2].body["messages"][-1]["content"])
    offline = first_plan(ResearchRequest(question=Q))
    assert [s.text for s in plan.sub_questions] == [s.text for s in offline.sub_questions]
    assert [c.description for c in plan.checklist] == BRIEF["checklist"]  # the model's brief still counts
    assert len(notes) == 1 and notes[0].startswith("steps: offline (the model's plan was unusable")


# -- hybrid steps ---------------------------------------------------------------------------


def _source(sid: str, found_by: list[str]) -> ScoredSource:
    return ScoredSource(id=sid, text="t", url=f"https://e.org/{sid}", title=sid, relevance_score=0.5,
                        credibility_tier=CredibilityTier.SECONDARY, domain_authority=50,
                        retrieval_method=RetrievalMethod.WEB, text_hash="sha256-" + "0" * 64, text_chars=1,
                        found_by=found_by, authority_score=0.5, recency_score=0.5, relevance_component=0.5,
                        credibility_score=0.5, composite_score=0.5)


CLAIM = Claim(id="cl1", text="Heat pumps reach a seasonal coefficient of performance near 3.2 in mild climates.",
              supporting_indices=[0], confidence_score=0.8,
              citations=[Citation(source_id="s1", locator="char:0-10", quote="Heat pumps")])


def _envelope(claims: list[Claim]) -> JobEnvelope:
    plan = Plan(refined_question=Q, checklist=[ChecklistItem(id="c1", description="Running costs")], sub_questions=[
        SubQuestion(id="b", text="How efficient are heat pumps?"),
        SubQuestion(id="d", text="Which is cheaper to run?", kind=StepKind.HYBRID, depends_on=["b"]),
    ])
    plan = mark_ran(plan, ["b"], 0, searched={"b": ["heat pump efficiency"]})
    return JobEnvelope(job_id="j", user_id="u", stage=Stage.PLAN, iteration=1, request=ResearchRequest(question=Q),
                       deadline_at=utcnow() + timedelta(minutes=5), plan=plan, claims=claims,
                       scored_sources=[_source("s1", ["heat pump efficiency"])], queries_run=["heat pump efficiency"])


async def test_a_hybrid_step_gets_no_queries_until_its_dependencies_have_claims() -> None:
    offline = make_engine(StageSettings(llm_provider="offline")).bind("plan", Usage())
    plan, queries = await hybrid_queries(_envelope([]), offline)
    assert queries == [] and plan.sub_questions[1].ran_in_iteration is None and plan.step_order == ["b"]

    plan, queries = await hybrid_queries(_envelope([CLAIM]), offline)
    hybrid = plan.sub_questions[1]
    assert hybrid.ran_in_iteration == 1 and plan.step_order == ["b", "d"]
    rag = [q.text for q in queries if q.provider is RetrievalMethod.RAG]
    # Offline, the claims' key terms are added to the step's own text.
    assert rag == ["Which is cheaper to run heat pumps reach seasonal"]
    assert all(q.iteration == 1 for q in queries) and set(hybrid.searched) == {q.text for q in queries}


def test_offline_step_queries_add_only_terms_the_step_lacks() -> None:
    step = SubQuestion(id="d", text="Are heat pumps cheaper to run?", kind=StepKind.HYBRID)
    queries = offline_step_queries(step, [CLAIM], iteration=2)
    assert queries[0].text == "Are heat pumps cheaper to run reach seasonal coefficient performance"


async def test_the_model_writes_hybrid_queries_from_the_claims_as_data(anthropic: AnthropicFake) -> None:
    anthropic.tool({"steps": [{"step_id": "d", "web_queries": ["heat pump COP 3.2 running cost vs gas boiler"]}]})
    plan, queries = await hybrid_queries(_envelope([CLAIM]), _llm(anthropic))
    (request,) = anthropic.delivered
    assert request.forced_tool == "record_step_queries"
    assert f'<finding step="b">\n{CLAIM.text}\n</finding>' in request.prompt
    assert '<step id="d">\nWhich is cheaper to run?\n</step>' in request.prompt
    web = [q.text for q in queries if q.provider is RetrievalMethod.WEB]
    assert web == ["heat pump COP 3.2 running cost vs gas boiler"]
    assert plan.sub_questions[1].ran_in_iteration == 1
