"""Finding a quotation in the canonical text, so that its locator is right.

Used by the digest (which relocates the model's evidence snippets before emitting
them) and by shared.verification.grounding (which verifies the quotes claims rest on).

A model asked to quote verbatim still paraphrases now and then: it re-spaces text,
swaps typographic quotes and dashes, drops a word. Such a snippet is located in the
canonical text and replaced by the passage actually there; one that cannot be
located is dropped, never emitted with a wrong locator. Three steps, cheapest first:

1. exact: the first occurrence of the quote;
2. normalized: whitespace runs collapsed and typographic quotes/dashes folded on both
   sides, mapped back to canonical offsets;
3. fuzzy: the best window of one to three consecutive sentences by rapidfuzz's
   ``fuzz.ratio`` (normalized Indel similarity, C++), accepted at ``FUZZY_MIN_SCORE``
   and above. rapidfuzz rather than difflib: ``process.extractOne`` scores the few
   thousand windows of a long document in milliseconds where difflib's
   SequenceMatcher takes seconds. Windows are whole sentences, so a relocated snippet
   is always a clean quotation rather than a fragment cut mid-word.
"""

from __future__ import annotations

import unicodedata
from enum import StrEnum

from rapidfuzz import fuzz, process, utils

from shared.research.text import sentence_spans

__all__ = ["FUZZY_MIN_SCORE", "MAX_WINDOW_SENTENCES", "Match", "locate", "normalized"]

FUZZY_MIN_SCORE = 85.0
MAX_WINDOW_SENTENCES = 3

_FOLD = str.maketrans({"‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"', "„": '"',
                       "–": "-", "—": "-", "‑": "-", "−": "-", "\u00a0": " "})


class Match(StrEnum):
    EXACT = "exact"
    NORMALIZED = "normalized"
    FUZZY = "fuzzy"


def normalized(text: str) -> tuple[str, list[int]]:
    """``text`` with whitespace runs as one space and quotes/dashes folded, and for
    each character of the result the offset of the character it came from."""
    out: list[str] = []
    where: list[int] = []
    folded = text.translate(_FOLD)
    for i, ch in enumerate(folded):
        if ch.isspace():
            if out and out[-1] == " ":
                continue
            ch = " "
        out.append(ch)
        where.append(i)
    return "".join(out), where


def locate(text: str, quote: str, *, spans: list[tuple[int, int]] | None = None,
           fuzzy: bool = True) -> tuple[int, int, Match] | None:
    """(start, end, how) of ``quote`` in ``text``, or None. ``spans`` are the text's
    sentence spans when the caller already has them; ``fuzzy=False`` stops after the
    exact and normalized steps (for a caller with its own similarity rule)."""
    quote = unicodedata.normalize("NFC", quote).strip()
    if not quote:
        return None
    at = text.find(quote)
    if at >= 0:
        return at, at + len(quote), Match.EXACT

    norm_text, where = normalized(text)
    norm_quote = normalized(quote)[0].strip()
    at = norm_text.find(norm_quote) if norm_quote else -1
    if at >= 0:
        return where[at], where[at + len(norm_quote) - 1] + 1, Match.NORMALIZED
    if not fuzzy:
        return None

    spans = sentence_spans(text) if spans is None else spans
    windows = [
        (spans[i][0], spans[j][1])
        for i in range(len(spans))
        for j in range(i, min(i + MAX_WINDOW_SENTENCES, len(spans)))
    ]
    if not windows:
        return None
    best = process.extractOne(
        quote, [text[s:e] for s, e in windows], scorer=fuzz.ratio,
        processor=utils.default_process, score_cutoff=FUZZY_MIN_SCORE,
    )
    if best is None:
        return None
    start, end = windows[best[2]]
    return start, end, Match.FUZZY
