"""Structured-output schemas of the digest stage's model calls."""

from __future__ import annotations

from pydantic import BaseModel, Field


class DraftEvidence(BaseModel):
    text: str = Field(description="A passage copied verbatim from the source, character for character")
    relevance: float = Field(ge=0.0, le=1.0, description="How directly it answers the question, 0 to 1")


class DigestDraft(BaseModel):
    """Record a query-conditioned digest of the source document."""

    summary: str = Field(description="A condensed summary of what the source says about the question")
    key_points: list[str] = Field(description="The source's key points for the question, most important first")
    evidence: list[DraftEvidence] = Field(default_factory=list, description="Verbatim quotations that support the key points")
