"""The methodology's lines about the plan's steps: in the order they ran, with kind,
dependencies and iteration (counted from 1), and those that never ran last."""

from __future__ import annotations

from shared.research.envelope import Plan, StepKind, SubQuestion
from shared.research.steps import mark_ran
from services.synthesis.steps import step_lines


def test_steps_are_listed_in_the_order_they_ran_and_unrun_ones_last() -> None:
    plan = Plan(refined_question="q", checklist=[], sub_questions=[
        SubQuestion(id="q1", text="What is A?"),
        SubQuestion(id="q2", text="How do A and B compare?", kind=StepKind.HYBRID, depends_on=["q1"]),
        SubQuestion(id="q3", text="Summarize", kind=StepKind.DEPENDENT, depends_on=["q1"]),
        SubQuestion(id="q4", text="Recommend", kind=StepKind.DEPENDENT, depends_on=["q2"]),
    ])
    plan = mark_ran(mark_ran(mark_ran(plan, ["q1"], 0), ["q3"], 0), ["q2"], 1)
    assert step_lines(plan) == [
        "Step q1 (independent): searched in iteration 1. What is A?",
        "Step q3 (dependent, after q1): analysed in iteration 1 from its dependencies' checked claims, "
        "without a search. Summarize",
        "Step q2 (hybrid, after q1): searched in iteration 2, with queries written from its dependencies' "
        "checked claims. How do A and B compare?",
        "Step q4 (dependent, after q2): not run: research ended before every step it depends on had checked "
        "claims (or with no pass left to run it). Recommend",
    ]
    assert step_lines(None) == []
