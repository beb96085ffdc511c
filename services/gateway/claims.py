"""The claims listing of a completed job (``GET /api/research/jobs/{job_id}/claims``):
the kept claims with their check level, confidence, citations and checklist items, and
the rejected ones with the reason the deterministic check gave (and its category)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from shared.research.envelope import Claim, Level, RejectedClaim

__all__ = ["ClaimCitation", "ClaimEntry", "ClaimsListing", "claims_listing"]


class ClaimCitation(BaseModel):
    source_id: str
    locator: str  # verified against the archived source text: text[start:end] == quote
    quote: str


class ClaimEntry(BaseModel):
    id: str | None  # verified claims only (cl1, cl2...): the ids the report and the checklist use
    status: Literal["verified", "rejected"]  # "verified": kept by the claim check, at ``level``
    text: str
    # How far a kept claim was checked: "quoted" (its text is a source's words),
    # "entailed" (a verifier model judged its quotes to entail it) or "supported" (code
    # checks only); None for a rejected claim, or one stored before levels existed.
    level: Level | None = None
    reason: str | None = None  # why the check rejected it
    category: str | None = None  # that reason in one word (negation, number, name, ...)
    confidence: float | None = None
    citations: list[ClaimCitation] = Field(default_factory=list)
    checklist_item_ids: list[str] = Field(default_factory=list)
    contradicted: bool = False
    iteration: int | None = None  # the research pass that rejected it
    engine: str | None = None  # what proposed a rejected claim: "model" or "offline"
    cited: list[str] = Field(default_factory=list)  # the snippet ids a rejected claim cited


class ClaimsListing(BaseModel):
    job_id: str
    verified: int
    rejected: int
    claims: list[ClaimEntry]


def claims_listing(job_id: str, claims: Sequence[dict[str, Any]], rejected: Sequence[dict[str, Any]]) -> ClaimsListing:
    """The listing from a stored result's ``claims`` and ``rejected_claims`` columns."""
    entries = [
        ClaimEntry(id=c.id, status="verified", text=c.text, level=c.level, confidence=c.confidence_score,
                   citations=[ClaimCitation(source_id=x.source_id, locator=x.locator, quote=x.quote) for x in c.citations],
                   checklist_item_ids=c.checklist_item_ids, contradicted=c.contradiction_flag)
        for c in (Claim.model_validate(d) for d in claims)
    ]
    entries += [
        ClaimEntry(id=None, status="rejected", text=r.text, reason=r.reason, category=r.category, iteration=r.iteration,
                   engine=r.engine, cited=r.cited)
        for r in (RejectedClaim.model_validate(d) for d in rejected)
    ]
    return ClaimsListing(job_id=job_id, verified=len(claims), rejected=len(rejected), claims=entries)
