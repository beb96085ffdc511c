"""The research model of :mod:`tests.fakes.research_model`, planning steps that depend
on each other, for the loopback LLM fakes.

* ``record_sub_questions``: first a plan with a dependency cycle (which planning must
  refuse and ask again), then on the re-ask a valid one: two independent steps, a
  hybrid step and two dependent ones (see :data:`STEPS`);
* ``record_step_queries``: per ``<step>`` block, one web query naming the step;
* ``record_analysis``: a sentence its evidence does not support, then for each of
  the first three ``<evidence>`` blocks the quotation itself as a claim citing it
  (these verify);
* anything else: the research model.

The prompts of the brief, the analyses and the hybrid queries are kept in order, so
a test can check what each call was given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.fakes.llm import RecordedRequest, Step, ToolCall, text_of
from tests.fakes.report_writer import blocks
from tests.fakes.research_model import ResearchModel

__all__ = ["STEPS", "UNSUPPORTED", "StepModel"]

# (id, question, kind, depends_on); the first question is the job's own.
STEPS = [
    ("q1", None, "independent", []),
    ("q2", "How do Fresnel lenses concentrate the light of a lamp?", "independent", []),
    ("q3", "How did the keeper's nightly watch compare with remote monitoring?", "hybrid", ["q1"]),
    ("q4", "Summarize what automation changed for lighthouse keepers", "dependent", ["q1"]),
    ("q5", "Recommend what a museum about keepers should explain", "dependent", ["q3", "q4"]),
]
UNSUPPORTED = "Automation made every lighthouse keeper a millionaire by 1950."


@dataclass
class StepModel(ResearchModel):
    briefs: list[str] = field(default_factory=list)
    decompositions: list[RecordedRequest] = field(default_factory=list)
    step_queries: list[str] = field(default_factory=list)
    analyses: list[str] = field(default_factory=list)

    def __call__(self, request: RecordedRequest) -> Step:
        tool = request.forced_tool or ""
        messages = request.body.get("messages") or []
        users = [text_of(m.get("content")) for m in messages if m.get("role") == "user"]
        prompt = users[0] if users else request.prompt
        if tool == "record_brief":
            self.briefs.append(prompt)
        elif tool == "record_sub_questions":
            self.decompositions.append(request)
            return ToolCall(input=self.plan(prompt, valid=len(messages) > 1))
        elif tool == "record_step_queries":
            self.step_queries.append(prompt)
            return ToolCall(input={"steps": [
                {"step_id": attrs.get("id", ""), "web_queries": [text.rstrip("?") + " lighthouse"], "pubmed_queries": []}
                for attrs, text in blocks(prompt, "step")]})
        elif tool == "record_analysis":
            self.analyses.append(prompt)
            evidence = blocks(prompt, "evidence")
            claims = [{"text": UNSUPPORTED, "supporting": [evidence[0][0]["id"]], "contradicting": []}] if evidence else []
            claims += [{"text": " ".join(text.split()), "supporting": [attrs["id"]], "contradicting": [],
                        "checklist_item_ids": []} for attrs, text in evidence[:3]]
            return ToolCall(input={"claims": claims})
        return super().__call__(request)

    def plan(self, prompt: str, *, valid: bool) -> dict[str, Any]:
        question = self._question(prompt)
        steps = [{"id": sid, "question": text or question, "kind": kind, "depends_on": deps,
                  "web_queries": [] if kind == "dependent" else [self._topic(text or question)], "pubmed_queries": []}
                 for sid, text, kind, deps in STEPS]
        if not valid:  # q1 <-> q3: a cycle
            steps[0] = {**steps[0], "kind": "hybrid", "depends_on": ["q3"]}
        return {"sub_questions": steps}
