"""Plan review without servers: the rules a user's edit passes, what it changes, and
the approved plan made ready for retrieval (shared/research/plan_review.py,
services/decomposition/review.py)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from services.decomposition.plan import first_plan
from services.decomposition.review import schedule_reviewed
from shared.research.envelope import ResearchRequest, StepKind
from shared.research.plan_review import ReviewItem, ReviewPlan, ReviewStep, apply_review, review_of

QUESTION = "How do lighthouses use Fresnel lenses and how did they change navigation?"


def _plan():  # noqa: ANN202
    return first_plan(ResearchRequest(question=QUESTION))


def test_approving_as_is_changes_nothing_and_keeps_the_queries() -> None:
    plan = _plan()
    same, changes = apply_review(plan, review_of(plan))
    assert changes == []
    assert same.queries == plan.queries and same.sub_questions == plan.sub_questions
    assert schedule_reviewed(same).queries == plan.queries


def test_an_edit_is_applied_and_listed() -> None:
    plan = _plan()
    review = review_of(plan)
    removed = review.checklist.pop(0)
    review.checklist.append(ReviewItem(description="Which lighthouses still use them today"))
    review.refined_question = "How did Fresnel lenses change lighthouse navigation?"
    review.steps.append(ReviewStep(text="Fresnel lens manufacturing in France"))
    edited, changes = apply_review(plan, review)
    assert removed.id not in {c.id for c in edited.checklist}
    added = edited.checklist[-1]
    assert added.id not in {c.id for c in plan.checklist} and added.description == "Which lighthouses still use them today"
    assert edited.refined_question == review.refined_question
    seen = {(c.part, c.action) for c in changes}
    assert seen == {("checklist", "removed"), ("checklist", "added"), ("refined_question", "changed"), ("step", "added")}
    new_step = edited.sub_questions[-1]
    assert new_step.ran_in_iteration is None
    ready = schedule_reviewed(edited)
    step = next(s for s in ready.sub_questions if s.id == new_step.id)
    assert step.ran_in_iteration == 0 and step.searched
    assert {q.text for q in ready.queries} >= set(step.searched)
    assert all(q in ready.queries for q in plan.queries)


def test_a_reworded_step_searches_afresh_and_a_removed_one_no_more() -> None:
    plan = _plan()
    assert len(plan.sub_questions) >= 2
    review = review_of(plan)
    gone = review.steps.pop()
    review.steps[0].text = "Fresnel lens optics"
    edited, changes = apply_review(plan, review)
    ready = schedule_reviewed(edited)
    texts = {q.text for q in ready.queries}
    assert "Fresnel lens optics" in texts
    assert not texts & set(next(s for s in plan.sub_questions if s.id == gone.id).searched) - {
        t for s in edited.sub_questions for t in s.searched}
    assert ("step", "changed") in {(c.part, c.action) for c in changes}


@pytest.mark.parametrize(("edit", "field"), [
    (lambda r: r.update(checklist=[]), "checklist"),
    (lambda r: r.update(steps=[{"id": "a", "text": "x", "depends_on": ["b"]}, {"id": "b", "text": "y", "depends_on": ["a"]}]),
     "steps"),
    (lambda r: r.update(steps=[{"id": "a", "text": "x", "depends_on": ["zz"]}]), "steps"),
    (lambda r: r.update(refined_question="  "), "refined_question"),
    (lambda r: r.update(checklist=[{"id": "c1", "description": "a"}, {"id": "c1", "description": "b"}]), "checklist"),
])
def test_a_broken_plan_is_refused_naming_the_field(edit, field: str) -> None:  # noqa: ANN001
    body = review_of(_plan()).model_dump(mode="json")
    edit(body)
    with pytest.raises(ValidationError) as info:
        ReviewPlan.model_validate(body)
    assert info.value.errors()[0]["loc"][0] == field


def test_an_independent_step_with_dependencies_is_hybrid() -> None:
    review = ReviewPlan.model_validate({"refined_question": "abc", "checklist": [{"description": "x"}],
                                        "steps": [{"id": "a", "text": "x"}, {"text": "y", "depends_on": ["a"]}]})
    assert review.steps[1].kind is StepKind.HYBRID
