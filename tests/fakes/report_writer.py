"""Scripted answers of a model for the synthesis stage's tools (and the council's),
for the loopback LLM fakes: a responder that reads the real prompt the service sent
and answers the way a careful model would, or an adversarial one.

* ``write_report``: a sentence per claim, each the claim's own text citing its id;
  an executive summary from the first claims; a section per checklist item from the
  claims its ``evidence`` attribute names.
* ``revise_sentences``: a careful model drops every rejected sentence; an
  adversarial one rewrites each into another invented fact.
* ``record_review`` (council): agrees, or disagrees with a fixed reason; per model
  name when ``disagreeing`` names some (a council member shares its provider's fake).
* ``record_claims`` / ``record_coverage`` (scoring), so that a whole job has verified
  claims: one claim per evidence snippet, its text the snippet's own, answering every
  checklist item; each item satisfied by the claims shown that share its subject
  (open when none does).

With ``adversarial=True`` every text field of the report also carries invented
material: an uncited invented sentence, a sentence citing a claim id that does not
exist, a sentence citing a real claim but stating a figure its quotes do not have,
and model-written ``[7]`` markers. Anything else falls through to ``schema_responder``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from shared.research.claims import answering_claims
from shared.research.envelope import ChecklistItem, Claim
from tests.fakes.llm import RecordedRequest, Step, ToolCall, schema_responder

__all__ = ["INVENTED", "ReportTools", "ReportWriter", "blocks", "claims_of", "sections_of"]

_BLOCK = re.compile(r"<(?P<tag>[a-z_]+)(?P<attrs>(?:\s+[a-z_]+=\"[^\"]*\")*)>\n(?P<text>.*?)\n</(?P=tag)>", re.S)
_ATTR = re.compile(r"([a-z_]+)=\"([^\"]*)\"")

# Sentences no source says; each would fail the verification pass for its own reason.
INVENTED = (
    "The Zorblatt Institute measured a 97% improvement in 2031.",  # uncited, a fact
    "Quantum lighthouses were patented by Ada Lovelace in 1843.",  # cites a bogus id
    "Every keeper earned 4,500 dollars a year from the Northern Board.",  # cites a real claim it is not in
)


def blocks(prompt: str, tag: str) -> list[tuple[dict[str, str], str]]:
    """(attributes, text) of every ``<tag …>`` data block in ``prompt``."""
    return [(dict(_ATTR.findall(m.group("attrs"))), m.group("text"))
            for m in _BLOCK.finditer(prompt) if m.group("tag") == tag]


def claims_of(prompt: str) -> list[tuple[str, str]]:
    """(id, text) of every claim block; a block is the claim's text, then its quotes
    ("Quote: ..."), one a line."""
    return [(a["id"], text.split("\nQuote: ", 1)[0]) for a, text in blocks(prompt, "claim")]


def sections_of(prompt: str) -> list[tuple[str, list[str]]]:
    """(checklist item id, the claim ids its ``evidence`` attribute names)."""
    out = []
    for attrs, _ in blocks(prompt, "checklist_item"):
        ids = [i.strip() for i in attrs.get("evidence", "").split(",") if i.strip() and i.strip() != "none"]
        out.append((attrs["id"], ids))
    return out


@dataclass
class ReportTools:
    """A responder for the synthesis stage's two tools, ``write_report`` and
    ``revise_sentences`` (subclasses write ``report`` and ``revise``); any other tool
    goes to :meth:`other`, by default the schema-driven answer."""

    seen: list[str] = field(default_factory=list, kw_only=True)  # tool names answered

    def __call__(self, request: RecordedRequest) -> Step:
        tool = request.forced_tool or ""
        self.seen.append(tool)
        if tool == "write_report":
            return ToolCall(input=self.report(request.prompt))
        if tool == "revise_sentences":
            return ToolCall(input=self.revise(request.prompt))
        return self.other(tool, request)

    def report(self, prompt: str) -> dict[str, Any]:
        raise NotImplementedError

    def revise(self, prompt: str) -> dict[str, Any]:
        raise NotImplementedError

    def other(self, tool: str, request: RecordedRequest) -> Step:
        return schema_responder(request)


@dataclass
class ReportWriter(ReportTools):
    adversarial: bool = False
    agree: bool = True
    reason: str = "The checklist misses the cost of keeping the lights."
    disagreeing: tuple[str, ...] = ()  # model names that disagree whatever ``agree`` says

    def other(self, tool: str, request: RecordedRequest) -> Step:
        if tool == "record_review":
            agree = self.agree and request.body.get("model") not in self.disagreeing
            return ToolCall(input={"agree": agree, "reasons": [] if agree else [self.reason]})
        if tool == "record_claims":
            return ToolCall(input=self.claims(request.prompt))
        if tool == "record_coverage":
            return ToolCall(input=self.coverage(request.prompt))
        return schema_responder(request)

    @staticmethod
    def _items(prompt: str) -> list[str]:
        listed = "\n".join(text for _, text in blocks(prompt, "checklist"))
        return [line.split(":", 1)[0].strip() for line in listed.splitlines() if ":" in line]

    def claims(self, prompt: str) -> dict[str, Any]:
        items = self._items(prompt)
        return {"claims": [{"text": text, "supporting": [a["id"]], "checklist_item_ids": items}
                           for a, text in blocks(prompt, "snippet")]}

    def coverage(self, prompt: str) -> dict[str, Any]:
        """Each item satisfied by the claims shown that answer it (the claims that share
        its subject, as a careful model would judge), open when none does."""
        claims = [Claim(id=cid, text=text, supporting_indices=[]) for cid, text in claims_of(prompt)]
        listed = "\n".join(text for _, text in blocks(prompt, "checklist"))
        items = [line.split(":", 1) for line in listed.splitlines() if ":" in line]
        out = []
        for item_id, description in items:
            item = ChecklistItem(id=item_id.strip(), description=description.strip())
            ids = answering_claims(item, claims, judged=True)[:3]
            out.append({"item_id": item.id, "status": "satisfied" if ids else "open", "claim_ids": ids,
                        "reason": "the claims shown answer it" if ids else "no claim shown answers it"})
        return {"items": out}

    def _sentence(self, text: str, ids: list[str]) -> dict[str, Any]:
        return {"text": text + (" [7]" if self.adversarial else ""), "claim_ids": ids}

    def _lies(self, real_id: str | None) -> list[dict[str, Any]]:
        if not self.adversarial:
            return []
        return [
            {"text": INVENTED[0], "claim_ids": []},
            {"text": INVENTED[1], "claim_ids": ["cl999"]},
            {"text": INVENTED[2], "claim_ids": [real_id] if real_id else ["cl998"]},
        ]

    def report(self, prompt: str) -> dict[str, Any]:
        claims = claims_of(prompt)
        summary = [self._sentence(text, [cid]) for cid, text in claims[:2]]
        first = claims[0][0] if claims else None
        if not summary:
            summary = [{"text": "The sources say little about this question.", "claim_ids": []}]
        text_of = dict(claims)
        sections = []
        for item, ids in sections_of(prompt):
            sentences = [self._sentence(text_of[i], [i]) for i in ids if i in text_of] + self._lies(first)
            sections.append({"checklist_item_id": item,
                             "paragraphs": [{"sentences": sentences}] if sentences else []})
        return {"executive_summary": [{"sentences": summary + self._lies(first)}], "sections": sections}

    def revise(self, prompt: str) -> dict[str, Any]:
        fixes = []
        for attrs, _ in blocks(prompt, "sentence"):
            if self.adversarial:
                fixes.append({"number": int(attrs["number"]), "text": "It was 12 times safer, said the Smith report.",
                              "claim_ids": ["cl1"]})
            else:
                fixes.append({"number": int(attrs["number"]), "text": "", "claim_ids": []})
        return {"fixes": fixes}
