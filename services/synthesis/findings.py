"""Verified Findings: the strongest verified claims, chosen and worded by code.

A finding is a claim whose check level is ``quoted`` (its text is its quote) or
``entailed`` (it passed the deterministic meaning checks and the verifier model
judged its quotes to entail it): a claim checked by code alone is never shown here.
Its every shown quote carries a locator into its source's canonical text (so ``GET …/sources/{id}/verify`` can re-check it), whose supporting
sources are real, and which no source contradicts (a disputed claim belongs in the
Contradictions section, not among the findings a reader can rely on). The strongest
``RESEARCH_VERIFIED_FINDINGS_MAX`` by confidence are kept, earliest first on ties. The
model never sees this selection as something to edit: it is built from the claims
alone, so it is the same whatever the model writes elsewhere.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.research.envelope import Claim, ScoredSource
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


def verified_findings(claims: Sequence[Claim], sources: Sequence[ScoredSource], *, limit: int) -> list[VerifiedFinding]:
    """Up to ``limit`` findings, strongest first."""
    source_ids = {s.id for s in sources}
    candidates: list[VerifiedFinding] = []
    for claim in claims:
        if claim.contradiction_flag or claim.level not in FINDING_LEVELS:
            continue
        citations = _located(claim, source_ids)
        if not citations:
            continue
        candidates.append(VerifiedFinding(
            claim_id=claim.id, text=claim.text, confidence=claim.confidence_score, citations=citations,
        ))
    candidates.sort(key=lambda f: -f.confidence)  # stable: extraction order on ties
    return candidates[:max(0, limit)]
