"""The research memory after a scoring pass (the model is in ``shared/research/memory.py``).

Scoring keeps every pass's claims over all the job's sources, so the memory's
insights and contradictions are rebuilt from this pass's verified claims (an insight
keeps the pass that first found it); its gaps are the checklist items still open,
each with the searches so far that match it by the coverage rule (shared.research.claims); what was searched
is recorded by retrieval and passes through unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.research.claims import claim_matches_item, item_terms
from shared.research.envelope import ChecklistItem, Claim, CoverageStatus
from shared.research.memory import (
    MAX_CONTRADICTIONS,
    MAX_GAP_TRIED,
    MAX_INSIGHTS,
    TEXT_MAX_CHARS,
    Contradiction,
    Gap,
    Insight,
    ResearchMemory,
)
from shared.research.text import normalize_query, terms

__all__ = ["updated_memory"]


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TEXT_MAX_CHARS else text[: TEXT_MAX_CHARS - 1] + "…"


def _insights(previous: ResearchMemory, claims: Sequence[Claim], iteration: int) -> list[Insight]:
    """One insight per distinct verified claim text (the claims that state it and
    their best confidence), the most confident MAX_INSIGHTS."""
    first_seen = {normalize_query(i.text): i.first_iteration for i in previous.insights}
    by_text: dict[str, Insight] = {}
    for c in claims:
        key = normalize_query(c.text)
        found = by_text.get(key)
        if found is None:
            by_text[key] = Insight(text=_cut(c.text), confidence=round(c.confidence_score, 4), claim_ids=[c.id],
                                   checklist_item_ids=list(c.checklist_item_ids),
                                   first_iteration=first_seen.get(key, iteration))
            continue
        found.claim_ids.append(c.id)
        found.confidence = max(found.confidence, round(c.confidence_score, 4))
        found.checklist_item_ids = list(dict.fromkeys([*found.checklist_item_ids, *c.checklist_item_ids]))
    ranked = sorted(by_text.values(), key=lambda i: -i.confidence)  # stable: claim order on ties
    return ranked[:MAX_INSIGHTS]


def _gaps(previous: ResearchMemory, checklist: Sequence[ChecklistItem], iteration: int) -> list[Gap]:
    since = {g.item_id: g.open_since for g in previous.gaps}
    searched = list(dict.fromkeys(s.text for s in previous.searched))
    out = []
    for item in checklist:
        if item.status is CoverageStatus.SATISFIED:
            continue
        subject = item_terms(item.description)
        tried = [q for q in searched if claim_matches_item(set(terms(q)), subject)]
        out.append(Gap(item_id=item.id, description=_cut(item.description), status=item.status.value,
                       tried=tried[-MAX_GAP_TRIED:], open_since=since.get(item.id, iteration)))
    return out


def _contradictions(claims: Sequence[Claim]) -> list[Contradiction]:
    flagged = [c for c in claims if c.contradiction_flag]
    return [Contradiction(claim_id=c.id, text=_cut(c.text), supporting_indices=list(c.supporting_indices),
                          contradicting_indices=list(c.contradicting_indices))
            for c in flagged[:MAX_CONTRADICTIONS]]


def updated_memory(previous: ResearchMemory, claims: Sequence[Claim], checklist: Sequence[ChecklistItem], *,
                   iteration: int) -> ResearchMemory:
    """The memory after pass ``iteration`` has verified ``claims`` and judged ``checklist``."""
    return previous.model_copy(update={
        "insights": _insights(previous, claims, iteration),
        "gaps": _gaps(previous, checklist, iteration),
        "contradictions": _contradictions(claims),
    })
