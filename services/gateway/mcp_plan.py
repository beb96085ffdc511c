"""Plan review over MCP: a ``deep_research`` call with ``review_plan`` asks the user to
approve the research plan through the client (MCP elicitation), where the client
supports it; otherwise the plan is approved as it is and research proceeds.

Elicitation forms hold only plain fields, so the plan is offered as text: the refined
question, and the checklist and the steps one per line. A line the user kept keeps its
item (its id, and a step's kind and dependencies); a new line is a new item or an
independent step; a line removed removes it. A plan the gateway refuses (an empty
checklist...) is asked again with the reason, up to :data:`ASKS` times, then the
planner's plan goes ahead. Declining the form approves the plan as it is; cancelling
it cancels the research.
"""

from __future__ import annotations

import logging
from typing import Any

from mcp import types
from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field, create_model

from services.gateway.mcp_backend import ResearchBackend
from shared.platform.errors import PermanentError

__all__ = ["ASKS", "PlanAnswer", "edited_plan", "review_over_mcp"]

log = logging.getLogger(__name__)

ASKS = 3


class PlanAnswer(BaseModel):
    """The research plan: edit it, or accept it as it is."""

    refined_question: str = Field(description="The question the research answers")
    checklist: str = Field(description="What a complete answer must address, one item per line")
    steps: str = Field(description="The research steps, one per line")


def _lines(text: str) -> list[str]:
    return list(dict.fromkeys(" ".join(line.split()) for line in text.splitlines() if line.strip()))


def _form(values: PlanAnswer) -> type[PlanAnswer]:
    """The form with ``values`` as its defaults: what the client shows to be edited."""
    fields: dict[str, Any] = {
        name: (str, Field(getattr(values, name), description=info.description))
        for name, info in PlanAnswer.model_fields.items()
    }
    return create_model("PlanAnswer", __base__=PlanAnswer, __doc__=PlanAnswer.__doc__, **fields)


def _values(plan: dict[str, Any]) -> PlanAnswer:
    return PlanAnswer(refined_question=plan["refined_question"],
                      checklist="\n".join(i["description"] for i in plan["checklist"]),
                      steps="\n".join(s["text"] for s in plan["steps"]))


def _message(values: PlanAnswer, why: str) -> str:
    lines = [f"The plan was refused: {why}", ""] if why else []
    lines += ["Review the research plan, edit it (one checklist item or step per line) and accept; "
              "decline to go ahead with it as it is, cancel to stop the research.", "",
              f"Refined question: {values.refined_question}", "Checklist:",
              *(f"- {line}" for line in _lines(values.checklist)), "Steps:", *(f"- {line}" for line in _lines(values.steps))]
    return "\n".join(lines)


def edited_plan(plan: dict[str, Any], answer: PlanAnswer) -> dict[str, Any]:
    """The body of ``POST …/plan`` from the user's answer to the form."""
    items = {" ".join(i["description"].split()): i for i in plan["checklist"]}
    steps = {" ".join(s["text"].split()): s for s in plan["steps"]}
    kept_steps = [dict(steps[t]) if t in steps else {"text": t} for t in _lines(answer.steps)]
    kept_ids = {s["id"] for s in kept_steps if "id" in s}
    for step in kept_steps:  # a dependency on a removed step goes with it
        if "depends_on" in step:
            step["depends_on"] = [d for d in step["depends_on"] if d in kept_ids]
    return {
        "refined_question": answer.refined_question,
        "scope": plan.get("scope") or {},
        "checklist": [dict(items[t]) if t in items else {"description": t} for t in _lines(answer.checklist)],
        "steps": kept_steps,
    }


def _can_elicit(ctx: Context) -> bool:
    try:
        return bool(ctx.session.check_client_capability(types.ClientCapabilities(elicitation=types.ElicitationCapability())))
    except Exception as exc:  # noqa: BLE001 - no session to ask (a nested call): the plan is approved as it is; logged
        log.warning("cannot tell whether the MCP client supports elicitation (%s: %s): approving the plan as it is",
                    type(exc).__name__, exc)
        return False


async def review_over_mcp(backend: ResearchBackend, ctx: Context, job_id: str, plan: dict[str, Any]) -> str | None:
    """Have the plan approved: what became of it, in a line; None when the user
    cancelled the research instead."""
    if not _can_elicit(ctx):
        await _approve(backend, job_id, plan)
        return "research plan approved as it is (the client cannot ask for a review)"
    values, why = _values(plan), ""
    for _ in range(ASKS):
        answer = await ctx.elicit(_message(values, why), _form(values))
        if answer.action == "cancel":
            return None
        if answer.action == "decline":
            break
        values = answer.data
        refusal = await backend.review_plan(job_id, edited_plan(plan, values))
        if refusal is None:
            return "research plan approved with the user's changes"
        why = refusal
    await _approve(backend, job_id, plan)
    return "research plan approved as it is"


async def _approve(backend: ResearchBackend, job_id: str, plan: dict[str, Any]) -> None:
    refusal = await backend.review_plan(job_id, plan)
    if refusal is not None:  # the planner's own plan: a refusal is a bug, not the user's
        raise PermanentError(f"the gateway refused job {job_id}'s own plan: {refusal}")
