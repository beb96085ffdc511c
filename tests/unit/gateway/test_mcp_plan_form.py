"""The plan review form over MCP (services/gateway/mcp_plan.py): lines back to a plan."""

from __future__ import annotations

from mcp.server.elicitation import render_elicitation_schema

from services.gateway.mcp_plan import PlanAnswer, _form, _values, edited_plan
from shared.research.plan_review import ReviewPlan

PLAN = {
    "refined_question": "How do lighthouses work?",
    "scope": {"in_scope": ["optics"], "out_of_scope": []},
    "checklist": [{"id": "c1", "description": "Lenses"}, {"id": "c2", "description": "Lamps"}],
    "steps": [{"id": "q1", "text": "How do lighthouses work?", "kind": "independent", "depends_on": []},
              {"id": "q2", "text": "Lamp history", "kind": "hybrid", "depends_on": ["q1"]}],
}


def test_the_form_offers_the_plan_as_its_defaults() -> None:
    schema = render_elicitation_schema(_form(_values(PLAN)))
    assert schema["properties"]["checklist"]["default"] == "Lenses\nLamps"
    assert schema["properties"]["steps"]["default"] == "How do lighthouses work?\nLamp history"
    assert all(p["type"] == "string" for p in schema["properties"].values())


def test_kept_lines_keep_their_items_and_new_lines_are_new() -> None:
    answer = PlanAnswer(refined_question="How do lighthouse lenses work?", checklist="Lamps\n\n  Keepers  \n",
                        steps="Lamp history\nFog signals")
    body = edited_plan(PLAN, answer)
    assert body["checklist"] == [{"id": "c2", "description": "Lamps"}, {"description": "Keepers"}]
    # q2 depended on q1, which is gone: the dependency goes with it.
    assert body["steps"] == [{"id": "q2", "text": "Lamp history", "kind": "hybrid", "depends_on": []}, {"text": "Fog signals"}]
    assert body["scope"] == PLAN["scope"] and body["refined_question"] == "How do lighthouse lenses work?"
    ReviewPlan.model_validate(body)
    assert PLAN["steps"][1]["depends_on"] == ["q1"]  # the plan it was made from is left as it was


def test_unchanged_answers_give_the_plan_back() -> None:
    assert edited_plan(PLAN, _values(PLAN)) == PLAN
