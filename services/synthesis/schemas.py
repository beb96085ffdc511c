"""Structured-output schemas of the synthesis stage's model calls.

The model writes prose only: every sentence comes with the ids of the claims it rests
on, and the code decides what survives (see verify.py) and how it is cited (render.py).
Headings, citation numbers, Verified Findings and the Sources list are never the
model's to write.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

__all__ = ["DraftParagraph", "DraftSection", "DraftSentence", "ReportDraft", "SentenceFix", "SentenceFixes"]


class DraftSentence(BaseModel):
    text: str = Field(min_length=1, max_length=2_000, description="One sentence of prose, without citation markers")
    claim_ids: list[str] = Field(default_factory=list, max_length=12,
                                 description="Ids of the given claims this sentence rests on; empty only for a connective sentence")


class DraftParagraph(BaseModel):
    sentences: list[DraftSentence] = Field(min_length=1, max_length=20)


class DraftSection(BaseModel):
    checklist_item_id: str = Field(description="The id of the checklist item this section answers")
    paragraphs: list[DraftParagraph] = Field(default_factory=list, max_length=8)


class ReportDraft(BaseModel):
    """Record the research report: an executive summary and one section per checklist item, sentence by sentence, each sentence with the claim ids it rests on."""

    executive_summary: list[DraftParagraph] = Field(min_length=1, max_length=3)
    sections: list[DraftSection] = Field(default_factory=list, max_length=12)


class SentenceFix(BaseModel):
    number: int = Field(description="The number of the sentence being rewritten, as listed")
    text: str = Field(default="", max_length=2_000, description="The rewritten sentence; empty to drop it")
    claim_ids: list[str] = Field(default_factory=list, max_length=12)


class SentenceFixes(BaseModel):
    """Record a rewrite (or a drop) of each listed sentence so that it rests only on the given claims."""

    fixes: list[SentenceFix] = Field(default_factory=list)
