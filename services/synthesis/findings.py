"""Verified Findings: the strongest verified claims, chosen and worded by code.

A finding is a claim whose check level is ``quoted`` (its text is its quote) or
``entailed`` (it passed the deterministic meaning checks and the verifier model
judged its quotes to entail it): a claim checked by code alone is never shown here.
Its every shown quote carries a locator into its source's canonical text (so ``GET …/sources/{id}/verify`` can re-check it), whose supporting
sources are real, and which no source contradicts (a disputed claim belongs in the
Contradictions section, not among the findings a reader can rely on). Only claims
that answer the question or a checklist item are candidates (the caller's choice,
:mod:`services.synthesis.relevance`), and the ``RESEARCH_VERIFIED_FINDINGS_MAX`` kept are
chosen to cover the checklist: each item in turn gets its most squarely answering
candidate (relevance to the item, then confidence), round after round; places left go
to the candidates answering the question most squarely, then the most confident. The
model never sees this selection as something to edit: it is built from the claims
alone, so it is the same whatever the model writes elsewhere.
"""

from __future__ import annotations

from collections.abc import Sequence

from services.synthesis.relevance import addresses, relevance
from shared.research.envelope import ChecklistItem, Claim, ScoredSource
from shared.research.events import VerifiedFinding
from shared.research.locators import parse_locator

__all__ = ["FINDING_LEVELS", "verified_findings"]

FINDING_LEVELS = frozenset({"quoted", "entailed"})


def _located(claim: Claim, source_ids: set[str]) -> list:
    """The claim's citations that point at a known source with a well-formed locator."""
    out = []
    for citation in claim.citations:
        if citation.source_id not in source_ids or not citation.quote.strip():
            continue
        try:
            parse_locator(citation.locator)
        except ValueError:
            continue
        out.append(citation)
    return out


def verified_findings(claims: Sequence[Claim], sources: Sequence[ScoredSource], *, limit: int,
                      checklist: Sequence[ChecklistItem] = (), question: str = "") -> list[VerifiedFinding]:
    """Up to ``limit`` findings, covering the checklist first (see the module doc)."""
    source_ids = {s.id for s in sources}
    candidates: dict[str, tuple[Claim, VerifiedFinding]] = {}
    for claim in claims:
        if claim.contradiction_flag or claim.level not in FINDING_LEVELS:
            continue
        citations = _located(claim, source_ids)
        if not citations:
            continue
        candidates[claim.id] = (claim, VerifiedFinding(
            claim_id=claim.id, text=claim.text, confidence=claim.confidence_score, citations=citations,
        ))
    order = _covering(list(c for c, _ in candidates.values()), checklist, question, max(0, limit))
    return [candidates[claim.id][1] for claim in order]


def _covering(claims: list[Claim], checklist: Sequence[ChecklistItem], question: str, limit: int) -> list[Claim]:
    """Claims chosen item by item, round after round, then by relevance to the question
    and confidence; stable (extraction order) on ties."""
    queues = [sorted((c for c in claims if addresses(item, c)),
                     key=lambda c, item=item: (-relevance(item.description, c), -c.confidence_score))
              for item in checklist]
    chosen: list[Claim] = []
    for turn in range(max((len(q) for q in queues), default=0)):
        for queue in queues:
            pick = next((c for c in queue[turn:] if c not in chosen), None)
            if pick is not None and len(chosen) < limit:
                chosen.append(pick)
    rest = sorted((c for c in claims if c not in chosen),
                  key=lambda c: (-relevance(question, c) if question else 0.0, -c.confidence_score))
    return (chosen + rest)[:limit]
