"""The plan's steps as a graph: what a plan must pass when it is made, and which steps
can run once others have verified claims."""

from __future__ import annotations

import pytest

from shared.research.envelope import Citation, Claim, CredibilityTier, Plan, RetrievalMethod, ScoredSource, StepKind, SubQuestion
from shared.research.steps import (
    claims_by_step,
    default_dependencies,
    graph_problem,
    mark_ran,
    ready_steps,
    topological_order,
)


@pytest.mark.parametrize(("steps", "problem"), [
    ([("q1", []), ("q2", ["q1"]), ("q3", ["q1", "q2"])], None),
    ([("q1", ["q3"]), ("q2", []), ("q3", [])], None),  # a dependency on a later step is fine
    ([("q1", []), ("q2", ["q3"]), ("q3", ["q2"])], "dependency cycle q2 -> q3 -> q2"),
    ([("a", ["c"]), ("b", ["a"]), ("c", ["b"])], "dependency cycle a -> c -> b -> a"),
    ([("q1", []), ("q2", ["q2"])], "step q2 depends on itself"),
    ([("q1", []), ("q2", ["q9"])], "step q2 depends on unknown step q9"),
    ([("q1", []), ("q1", [])], "duplicate step id q1"),
    ([("q1", []), (" ", [])], "every step needs an id"),
])
def test_graph_problem(steps: list[tuple[str, list[str]]], problem: str | None) -> None:
    assert graph_problem(steps) == problem


def test_a_long_chain_is_checked_without_recursion() -> None:
    chain = [(f"s{n}", [f"s{n + 1}"]) for n in range(5_000)] + [("s5000", [])]
    assert graph_problem(chain) is None
    assert graph_problem([*chain[:-1], ("s5000", ["s0"])]).startswith("dependency cycle s0 -> s1 -> s2")


def _steps() -> list[SubQuestion]:
    return [
        SubQuestion(id="q1", text="What is A?"),
        SubQuestion(id="q2", text="What is B?"),
        SubQuestion(id="q3", text="How do A and B compare?", kind=StepKind.HYBRID),
        SubQuestion(id="q4", text="Summarize", kind=StepKind.DEPENDENT),
        SubQuestion(id="q5", text="Recommend", kind=StepKind.DEPENDENT, depends_on=["q4"]),
    ]


def test_default_dependencies_are_the_earlier_steps_a_kind_needs() -> None:
    deps = {s.id: s.depends_on for s in default_dependencies(_steps())}
    assert deps == {"q1": [], "q2": [], "q3": ["q1", "q2"], "q4": ["q1", "q2", "q3"], "q5": ["q4"]}


def test_default_dependencies_never_make_a_cycle() -> None:
    # q1 names q3 (later); q3 names nothing: it must not get q1, which already needs it.
    steps = [SubQuestion(id="q1", text="a", kind=StepKind.HYBRID, depends_on=["q3"]),
             SubQuestion(id="q2", text="b"),
             SubQuestion(id="q3", text="c", kind=StepKind.HYBRID)]
    out = default_dependencies(steps)
    assert [s.depends_on for s in out] == [["q3"], [], ["q2"]]
    assert graph_problem([(s.id, s.depends_on) for s in out]) is None


def test_topological_order_puts_dependencies_first() -> None:
    steps = [SubQuestion(id="x", text="x", kind=StepKind.DEPENDENT, depends_on=["y"]), SubQuestion(id="y", text="y")]
    assert [s.id for s in topological_order(steps)] == ["y", "x"]


def _scored(sid: str, found_by: list[str]) -> ScoredSource:
    return ScoredSource(id=sid, text="t", url=f"https://e.org/{sid}", title=sid, relevance_score=0.5,
                        credibility_tier=CredibilityTier.SECONDARY, domain_authority=50,
                        retrieval_method=RetrievalMethod.RAG, text_hash="sha256-" + "0" * 64, text_chars=1,
                        found_by=found_by, authority_score=0.5, recency_score=0.5, relevance_component=0.5,
                        credibility_score=0.5, composite_score=0.5)


def _claim(cid: str, *indices: int) -> Claim:
    return Claim(id=cid, text=cid, supporting_indices=list(indices),
                 citations=[Citation(source_id="s", locator="char:0-1", quote="t")])


def test_a_step_has_the_claims_its_searches_found_and_becomes_ready_after_its_dependencies() -> None:
    plan = Plan(refined_question="q", sub_questions=default_dependencies(_steps()), checklist=[])
    plan = mark_ran(plan, ["q1", "q2"], 0, searched={"q1": ["what is a"], "q2": ["what is b"]})
    assert plan.step_order == ["q1", "q2"] and plan.sub_questions[0].ran_in_iteration == 0
    scored = [_scored("s1", ["what is a"]), _scored("s2", ["what is b", "other"])]
    # Only q1 has a claim: the hybrid step (needs q1 and q2) is not ready.
    have = claims_by_step(plan, [_claim("cl1", 0)], scored)
    assert [c.id for c in have["q1"]] == ["cl1"] and have["q2"] == [] and have["q3"] == []
    assert ready_steps(plan, StepKind.HYBRID, have) == []
    have = claims_by_step(plan, [_claim("cl1", 0), _claim("cl2", 1)], scored)
    assert [s.id for s in ready_steps(plan, StepKind.HYBRID, have)] == ["q3"]
    assert ready_steps(plan, StepKind.DEPENDENT, have) == []  # q4 needs q3's claims too

    plan = mark_ran(plan, ["q3"], 1, searched={"q3": ["a b compare"]})
    scored.append(_scored("s3", ["a b compare"]))
    have = claims_by_step(plan, [_claim("cl1", 0), _claim("cl2", 1), _claim("cl3", 2)], scored)
    assert [s.id for s in ready_steps(plan, StepKind.DEPENDENT, have)] == ["q4"]  # q5 waits for q4
    have = claims_by_step(plan, [_claim("cl1", 0), _claim("cl2", 1), _claim("cl3", 2)], scored,
                          analysis=[_claim("q4.a1", 2)])
    assert [c.id for c in have["q4"]] == ["q4.a1"]
    plan = mark_ran(plan, ["q4"], 1)
    assert [s.id for s in ready_steps(plan, StepKind.DEPENDENT, have)] == ["q5"]
    assert plan.step_order == ["q1", "q2", "q3", "q4"]


def test_a_plan_numbers_steps_without_an_id() -> None:
    plan = Plan(refined_question="q", checklist=[],
                sub_questions=[SubQuestion(text="a"), SubQuestion(id="q1", text="b"), SubQuestion(text="c")])
    assert [s.id for s in plan.sub_questions] == ["q1.1", "q1", "q3"]
