"""Plan review: the plan as a user sees and edits it, and the user's edit applied to it.

When a request sets ``review_plan``, planning hands its first plan to the gateway
instead of going on to retrieval, and the job waits (AWAITING_INPUT) for the user to
approve it, as it is or edited. The user sees :class:`ReviewPlan`: the refined
question, the scope, the checklist (``id``, ``description``) and the steps (``id``,
``text``, ``kind``, ``depends_on``). An item or step sent without an id is new.

An edited plan passes the rules a model's plan passes (:class:`ReviewPlan` refuses it
otherwise, naming the field): a refined question that is not blank, at most
:data:`CHECKLIST_MAX` checklist items (at least one: a user may narrow the brief's
three down, not empty it), 1 to :data:`MAX_STEPS` steps, no duplicate id, and a step
graph that can be executed (:func:`shared.research.steps.graph_problem`: no unknown
dependency, no step depending on itself, no cycle).

:func:`apply_review` turns the original plan and the user's version into the plan
research continues with, and the list of what the user changed (the trace keeps it).
Steps the user left as they were keep their queries; a new or reworded step has none
yet, and planning writes them before retrieval (services/decomposition/review.py).
Planning and the gateway both read these rules, and services do not import each
other, so they live here.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from shared.research.envelope import ChecklistItem, Plan, StepKind, SubQuestion
from shared.research.steps import graph_problem

__all__ = [
    "CHECKLIST_MAX",
    "CHECKLIST_MIN",
    "MAX_STEPS",
    "PlanChange",
    "PlanScope",
    "ReviewItem",
    "ReviewPlan",
    "ReviewStep",
    "apply_review",
    "review_of",
]

CHECKLIST_MIN = 3  # a model's brief: 3 to 7 items
CHECKLIST_MAX = 7
MAX_STEPS = 8  # sub-questions in a plan, the original question included
# Room for every plan the planner makes: the offline refined question is the question
# (up to 20 000 characters) with the context (as long) appended as its scope.
TEXT_MAX_CHARS = 50_000


def _text(field: str, value: str) -> str:
    """Whitespace normalized; refused when empty or not storable (NUL, a lone surrogate)."""
    if "\x00" in value:
        raise ValueError(f"{field} contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{field} contains an unpaired surrogate") from exc
    value = " ".join(value.split())
    if not value:
        raise ValueError(f"{field} must not be empty")
    return value


def _id(value: str | None) -> str | None:
    if value is None:
        return None
    value = _text("id", value)
    if len(value) > 40:
        raise ValueError(f"id {value[:40]!r}... is longer than 40 characters")
    return value


class _Review(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReviewItem(_Review):
    """A checklist item: what a complete answer must address. No id: a new item."""

    id: str | None = Field(None, description="The item's id; leave it out for a new item")
    description: str = Field(max_length=TEXT_MAX_CHARS)

    @field_validator("id")
    @classmethod
    def _item_id(cls, v: str | None) -> str | None:
        return _id(v)

    @field_validator("description")
    @classmethod
    def _description(cls, v: str) -> str:
        return _text("description", v)


class ReviewStep(_Review):
    """A step of the plan. ``depends_on`` names the steps whose findings it needs."""

    id: str | None = Field(None, description="The step's id; leave it out for a new step")
    text: str = Field(max_length=TEXT_MAX_CHARS, description="The sub-question the step researches")
    kind: StepKind = Field(StepKind.INDEPENDENT, description="independent (searched at once), hybrid (searched "
                           "once its dependencies have findings) or dependent (analysed from them, not searched)")
    depends_on: list[str] = Field(default_factory=list, max_length=MAX_STEPS)

    @field_validator("id")
    @classmethod
    def _step_id(cls, v: str | None) -> str | None:
        return _id(v)

    @field_validator("text")
    @classmethod
    def _step_text(cls, v: str) -> str:
        return _text("text", v)

    @field_validator("depends_on")
    @classmethod
    def _deps(cls, v: list[str]) -> list[str]:
        return list(dict.fromkeys(_text("depends_on", d) for d in v))


class PlanScope(_Review):
    in_scope: list[str] = Field(default_factory=list, max_length=10)
    out_of_scope: list[str] = Field(default_factory=list, max_length=10)

    @field_validator("in_scope", "out_of_scope")
    @classmethod
    def _lines(cls, v: list[str]) -> list[str]:
        return list(dict.fromkeys(_text("scope", s) for s in v))


class ReviewPlan(_Review):
    """The plan as a user reviews it (``GET …/jobs/{id}`` while the job waits, and the
    body of ``POST …/jobs/{id}/plan``)."""

    refined_question: str = Field(min_length=1, max_length=TEXT_MAX_CHARS)
    scope: PlanScope = Field(default_factory=PlanScope)
    checklist: list[ReviewItem] = Field(min_length=1, max_length=CHECKLIST_MAX,
                                        description=f"1 to {CHECKLIST_MAX} items a complete answer must address")
    steps: list[ReviewStep] = Field(min_length=1, max_length=MAX_STEPS, description=f"1 to {MAX_STEPS} steps")

    @field_validator("refined_question")
    @classmethod
    def _question(cls, v: str) -> str:
        return _text("refined_question", v)

    @field_validator("checklist")
    @classmethod
    def _checklist(cls, v: list[ReviewItem]) -> list[ReviewItem]:
        ids = [i.id for i in v if i.id is not None]
        if dupes := sorted({i for i in ids if ids.count(i) > 1}):
            raise ValueError(f"duplicate checklist id {', '.join(dupes)}")
        return v

    @field_validator("steps")
    @classmethod
    def _steps(cls, v: list[ReviewStep]) -> list[ReviewStep]:
        """The graph rules of a model's plan; a new step (no id yet) can name others but
        cannot be named. An independent step with dependencies needs earlier results:
        it is hybrid, as in a model's plan."""
        graph = [(s.id if s.id is not None else f"(new step {n})", s.depends_on) for n, s in enumerate(v, start=1)]
        if problem := graph_problem(graph):
            raise ValueError(problem)
        for step in v:
            if step.kind is StepKind.INDEPENDENT and step.depends_on:
                step.kind = StepKind.HYBRID
        return v


def review_of(plan: Plan) -> ReviewPlan:
    """What the user sees of ``plan``."""
    return ReviewPlan(
        refined_question=plan.refined_question,
        scope=PlanScope(in_scope=plan.in_scope, out_of_scope=plan.out_of_scope),
        checklist=[ReviewItem(id=c.id, description=c.description) for c in plan.checklist],
        steps=[ReviewStep(id=s.id, text=s.text, kind=s.kind, depends_on=s.depends_on) for s in plan.sub_questions],
    )


class PlanChange(BaseModel):
    """One thing the user changed in the plan."""

    part: Literal["refined_question", "scope", "checklist", "step"]
    action: Literal["added", "removed", "changed"]
    id: str | None = None  # the item's or step's id
    before: str | None = None
    after: str | None = None


def _free_id(prefix: str, taken: set[str]) -> str:
    n = 1
    while f"{prefix}{n}" in taken:
        n += 1
    taken.add(f"{prefix}{n}")
    return f"{prefix}{n}"


def _step_line(s: SubQuestion | ReviewStep) -> str:
    deps = f" (after {', '.join(s.depends_on)})" if s.depends_on else ""
    return f"{s.text} [{s.kind.value}]{deps}"


def apply_review(plan: Plan, review: ReviewPlan) -> tuple[Plan, list[PlanChange]]:
    """The plan research continues with, and what the user changed. Items and steps
    keep their ids; a new one gets the next free ``c<n>`` / ``q<n>`` (never the id of
    one the user removed) unless it came with an id of its own. A step whose text or
    kind changed, or that is new, has not run: its queries are written before
    retrieval; the queries of removed and changed steps are dropped. Raises
    ValueError when the steps, their ids now given, cannot be executed."""
    changes: list[PlanChange] = []
    if review.refined_question != plan.refined_question:
        changes.append(PlanChange(part="refined_question", action="changed",
                                  before=plan.refined_question, after=review.refined_question))
    if (review.scope.in_scope, review.scope.out_of_scope) != (plan.in_scope, plan.out_of_scope):
        changes.append(PlanChange(part="scope", action="changed",
                                  before=_scope_line(plan.in_scope, plan.out_of_scope),
                                  after=_scope_line(review.scope.in_scope, review.scope.out_of_scope)))
    checklist = _apply_checklist(plan.checklist, review.checklist, changes)
    steps = _apply_steps(plan.sub_questions, review.steps, changes)
    if problem := graph_problem([(s.id, s.depends_on) for s in steps]):
        raise ValueError(problem)
    kept_searched = {q for s in steps for q in s.searched}
    ran = {s.id for s in steps if s.ran_in_iteration is not None}
    return plan.model_copy(update={
        "refined_question": review.refined_question,
        "in_scope": review.scope.in_scope, "out_of_scope": review.scope.out_of_scope,
        "checklist": checklist, "sub_questions": steps,
        "queries": [q for q in plan.queries if q.text in kept_searched],
        "step_order": [i for i in plan.step_order if i in ran],
    }), changes


def _scope_line(in_scope: Iterable[str], out_of_scope: Iterable[str]) -> str:
    return f"in: {'; '.join(in_scope) or '-'} | out: {'; '.join(out_of_scope) or '-'}"


def _apply_checklist(original: list[ChecklistItem], edited: list[ReviewItem],
                     changes: list[PlanChange]) -> list[ChecklistItem]:
    by_id = {c.id: c for c in original}
    taken = set(by_id) | {i.id for i in edited if i.id is not None}
    out: list[ChecklistItem] = []
    for item in edited:
        before = by_id.get(item.id) if item.id is not None else None
        if before is None:
            new_id = item.id or _free_id("c", taken)
            out.append(ChecklistItem(id=new_id, description=item.description))
            changes.append(PlanChange(part="checklist", action="added", id=new_id, after=item.description))
            continue
        if item.description != before.description:
            changes.append(PlanChange(part="checklist", action="changed", id=before.id,
                                      before=before.description, after=item.description))
            before = before.model_copy(update={"description": item.description})
        out.append(before)
    kept = {c.id for c in out}
    changes.extend(PlanChange(part="checklist", action="removed", id=c.id, before=c.description)
                   for c in original if c.id not in kept)
    return out


def _apply_steps(original: list[SubQuestion], edited: list[ReviewStep], changes: list[PlanChange]) -> list[SubQuestion]:
    by_id = {s.id: s for s in original}
    taken = set(by_id) | {s.id for s in edited if s.id is not None}
    out: list[SubQuestion] = []
    for step in edited:
        before = by_id.get(step.id) if step.id is not None else None
        if before is None:
            new = SubQuestion(id=step.id or _free_id("q", taken), text=step.text, kind=step.kind,
                              depends_on=step.depends_on)
            out.append(new)
            changes.append(PlanChange(part="step", action="added", id=new.id, after=_step_line(new)))
            continue
        if (step.text, step.kind, step.depends_on) == (before.text, before.kind, before.depends_on):
            out.append(before)
            continue
        # Reworded or of another kind: it runs afresh. Only its dependencies changed:
        # what it already searched still stands.
        fresh = step.text != before.text or step.kind is not before.kind
        after = before.model_copy(update={
            "text": step.text, "kind": step.kind, "depends_on": step.depends_on,
            **({"ran_in_iteration": None, "searched": []} if fresh else {}),
        })
        changes.append(PlanChange(part="step", action="changed", id=before.id,
                                  before=_step_line(before), after=_step_line(after)))
        out.append(after)
    kept = {s.id for s in out}
    changes.extend(PlanChange(part="step", action="removed", id=s.id, before=_step_line(s))
                   for s in original if s.id not in kept)
    return out
