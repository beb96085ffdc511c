"""Structured answers the scoring stage asks the model for.

Deliberately lenient in shape (no caps on list lengths, free strings for ids): a
long or odd answer is cut and checked by code (services/scoring/model_claims.py and
coverage.py), which loses the offending claim or judgement rather than the whole
answer. Only an answer of the wrong shape is invalid.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

__all__ = ["ClaimDraft", "ClaimsAnswer", "CoverageAnswer", "ItemJudgement"]


class ClaimDraft(BaseModel):
    text: str = Field(description="One factual sentence, stated only as far as the cited snippets state it")
    supporting: list[str] = Field(description="Ids of the snippets that state it, e.g. s3.e2")
    contradicting: list[str] = Field(default_factory=list,
                                     description="Ids of snippets that state the opposite; usually none")
    checklist_item_ids: list[str] = Field(default_factory=list, description="Checklist items it helps answer")


class ClaimsAnswer(BaseModel):
    """Record the factual claims that the given evidence snippets support."""

    claims: list[ClaimDraft]


class ItemJudgement(BaseModel):
    item_id: str
    status: Literal["satisfied", "partial", "open"]
    claim_ids: list[str] = Field(default_factory=list, description="Ids of the claims that answer the item")
    reason: str = Field("", description="One line: why this status")


class CoverageAnswer(BaseModel):
    """Record, for each checklist item, how far the verified claims answer it."""

    items: list[ItemJudgement]
