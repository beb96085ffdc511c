"""A source longer than one model call's context window, digested in parts.

The model's window (``LLM_CONTEXT_TOKENS``, or the provider's) bounds what one digest
call may send: the source's text with the question, the instructions and room for the
answer. A longer text is cut into consecutive parts at paragraph or sentence ends, each
digested in its own call, and the parts' drafts merged (:func:`merge_drafts`); at most
``DIGEST_MAX_PARTS`` parts are read, and the text after them is not (the last part's
prompt and the log say so). A quote from any part is then located in the whole text
like any other, so the digest's locators verify whichever part it came from.
"""

from __future__ import annotations

from collections.abc import Sequence

from services.digest.evidence import KEY_POINTS
from services.digest.schemas import DigestDraft, DraftEvidence

__all__ = ["MIN_PART_CHARS", "SUMMARY_MAX_CHARS", "merge_drafts", "split_text"]

MIN_PART_CHARS = 800  # a window leaving less room than this for the text is too small to digest in
SUMMARY_MAX_CHARS = 1_500  # as much of a digest's summary as the claim step reads
_BREAKS = ("\n\n", "\n", ". ", "? ", "! ", "; ", " ")


def split_text(text: str, size: int, *, most: int) -> list[tuple[int, int]]:
    """``text`` as consecutive spans of at most ``size`` characters, each ending at the
    last paragraph, line, sentence or word end it holds (a hard cut when none is past its
    middle), at most ``most`` spans: the first ones; what follows them is not covered."""
    spans: list[tuple[int, int]] = []
    start = 0
    while start < len(text) and len(spans) < most:
        end = min(len(text), start + size)
        if end < len(text):
            for mark in _BREAKS:
                at = text.rfind(mark, start + size // 2, end)
                if at != -1:
                    end = at + len(mark)
                    break
        spans.append((start, end))
        start = end
    return spans


def merge_drafts(drafts: Sequence[DigestDraft]) -> DigestDraft:
    """One draft from the parts' drafts, in the text's order: the summaries joined (cut at
    a sentence end to what the claim step reads), the key points taken in turn from each
    part (most important first within each), every quote (the best are kept later)."""
    summary = " ".join(d.summary.strip() for d in drafts if d.summary.strip())
    if len(summary) > SUMMARY_MAX_CHARS:
        cut = summary.rfind(". ", 0, SUMMARY_MAX_CHARS)
        summary = summary[: cut + 1] if cut > 0 else summary[:SUMMARY_MAX_CHARS]
    points: list[str] = []
    for n in range(max((len(d.key_points) for d in drafts), default=0)):
        for d in drafts:
            if n < len(d.key_points) and d.key_points[n].strip() and d.key_points[n] not in points:
                points.append(d.key_points[n])
    evidence: list[DraftEvidence] = [e for d in drafts for e in d.evidence]
    return DigestDraft(summary=summary, key_points=points[:KEY_POINTS], evidence=evidence)
