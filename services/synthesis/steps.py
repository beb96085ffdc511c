"""The methodology's account of the plan's steps: one line per step, in the order
the steps ran (those that never ran last), with its kind, what it waited for and
when it ran. Iterations are counted from 1, as in the rest of the report."""

from __future__ import annotations

from shared.research.envelope import Plan, StepKind, SubQuestion

__all__ = ["step_lines"]

_QUESTION_CHARS = 120


def _after(step: SubQuestion) -> str:
    return f", after {', '.join(step.depends_on)}" if step.depends_on else ""


def _what(step: SubQuestion) -> str:
    if step.ran_in_iteration is None:
        return ("not run: research ended before every step it depends on had checked claims "
                "(or with no pass left to run it)")
    when = f"iteration {step.ran_in_iteration + 1}"
    if step.answered_by is not None:
        return f"not searched: the verified claims of job {step.answered_by}, which this job follows up, answer it"
    if step.kind is StepKind.INDEPENDENT:
        return f"searched in {when}"
    if step.kind is StepKind.HYBRID:
        return f"searched in {when}, with queries written from its dependencies' checked claims"
    return f"analysed in {when} from its dependencies' checked claims, without a search"


def step_lines(plan: Plan | None) -> list[str]:
    if plan is None or not plan.sub_questions:
        return []
    by_id = {s.id: s for s in plan.sub_questions}
    ran = [by_id[i] for i in plan.step_order if i in by_id]
    order = ran + [s for s in plan.sub_questions if s.id not in plan.step_order]
    lines = []
    for step in order:
        text = " ".join(step.text.split())
        if len(text) > _QUESTION_CHARS:
            text = text[: _QUESTION_CHARS - 1] + "…"
        lines.append(f"Step {step.id} ({step.kind.value}{_after(step)}): {_what(step)}. {text}")
    return lines
