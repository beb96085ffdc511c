"""Deterministic checks that a statement rests on its sources.

Two checks, used wherever text proposed by a model is kept only if the sources bear
it out (claims in scoring, report sentences in synthesis):

* :func:`verify_quote`: a quote is the canonical text. It verifies at its locator
  (``canonical[start:end] == quote``); otherwise it is relocated (the exact text
  elsewhere, then the same text with whitespace and typographic quotes/dashes
  normalized, as the digest relocates its snippets); otherwise it is accepted as
  *near-verbatim* when some window of the canonical text has a token Jaccard with it
  of at least ``GROUNDING_QUOTE_MIN_JACCARD`` (0.8: the text must share four fifths
  of their combined vocabulary, so re-spacing, a dropped or swapped word pass, a
  paraphrase does not). Whatever passes is reported with the locator and the exact
  canonical text at it, never with the caller's wording.
* :func:`check_grounding`: a sentence is ``quoted`` when it is one of its quotes;
  otherwise ``supported`` only when each of its clauses is anchored to one quote
  (its figures, names and words come from it: ``shared.verification.meaning_anchor``), enough of
  its content terms occur in the quotes (``GROUNDING_MIN_SUPPORT``), and it agrees
  with the quote clause it restates in polarity, quantifiers, certainty, direction,
  roles and conditions (``shared.verification.meaning``). Sharing words is not agreeing: "rows are
  removed" and "rows are not removed" share every content word.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from shared.research.locators import locate as locate_span
from shared.verification.clauses import is_quoted
from shared.verification.meaning import compare
from shared.verification.figure_binding import Failure
from shared.verification.idioms import plain_wording
from shared.verification.meaning_anchor import anchor_all
from shared.research.locators import page_of, parse_locator
from shared.research.relocate import Match
from shared.research.relocate import locate as relocate

__all__ = ["MIN_SUPPORT", "QUOTE_MIN_JACCARD", "Grounding", "QuoteCheck", "check_grounding", "verify_quote"]

QUOTE_MIN_JACCARD = 0.8
# Share of a sentence's content terms that must occur in its quotes (a synonym from
# WordNet counts). A faithful restatement keeps the quote's subject words and may
# rephrase the rest (stop words do not count at all), so half leaves room for a
# reworded predicate; a sentence that brings in subject matter of its own has most of
# its terms unsupported and fails, and a phrase of new matter (three new content
# words in a row) fails whatever the share. Numbers and names are checked separately
# (see module doc), so this share need not be strict enough to catch a single changed figure.
MIN_SUPPORT = 0.5

# The tokens of shared.research.text.words, with their spans: letters/digits, with inner
# apostrophes and hyphens.
_TOKEN = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")


# -- quotes ----------------------------------------------------------------------------


@dataclass(frozen=True)
class QuoteCheck:
    """The outcome of :func:`verify_quote`. When ``ok``, ``locator`` and ``text`` are
    the verified place and the canonical text exactly as it stands there."""

    ok: bool
    locator: str | None = None
    text: str | None = None
    how: Literal["locator", "exact", "normalized", "near_verbatim"] | None = None
    jaccard: float | None = None  # for near-verbatim quotes (and the best rejected one)
    reason: str | None = None


def _tokens(text: str) -> list[tuple[str, int, int]]:
    return [(m.group().lower(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def _best_window(canonical: str, quote: str, cutoff: float) -> tuple[float, int, int] | float:
    """(Jaccard, start, end) of the canonical window whose token set is closest to the
    quote's; windows are runs of tokens from 0.8 to 1.25 times the quote's length, the
    range within which a Jaccard of 0.8 is reachable. When no window can reach
    ``cutoff`` because too few of the quote's words occur in the text at all, just the
    share of them that does (no scan)."""
    q = _tokens(quote)
    q_set = {t for t, _, _ in q}
    doc = _tokens(canonical)
    # A window's Jaccard is at most the share of the quote's words it holds, which is
    # at most the share the whole text holds.
    present = len(q_set & {t for t, _, _ in doc}) / len(q_set) if q_set else 0.0
    if present < cutoff or not doc:
        return present
    n = len(q)
    sizes = sorted({max(1, min(len(doc), round(n * f))) for f in (0.8, 0.9, 1.0, 1.1, 1.25)})
    best = (0.0, 0, 0)
    for size in sizes:
        counts: Counter[str] = Counter()
        inside = 0  # distinct window tokens that are in the quote
        for i, (tok, _, _) in enumerate(doc):
            counts[tok] += 1
            if counts[tok] == 1 and tok in q_set:
                inside += 1
            if i >= size:
                old = doc[i - size][0]
                counts[old] -= 1
                if counts[old] == 0:
                    del counts[old]
                    if old in q_set:
                        inside -= 1
            if i >= size - 1:
                score = inside / (len(q_set) + len(counts) - inside)
                if score > best[0]:
                    best = (score, doc[i - size + 1][1], doc[i][2])
    return best


def verify_quote(
    canonical: str,
    quote: str,
    locator: str | None,
    page_starts: Sequence[int] | None = None,
    *,
    min_jaccard: float = QUOTE_MIN_JACCARD,
) -> QuoteCheck:
    """Check ``quote`` against the canonical text it claims to come from (see the
    module doc for the three ways it can pass)."""
    if not quote or not quote.strip():
        return QuoteCheck(ok=False, reason="empty quote")
    if locator:
        try:
            page, start, end = parse_locator(locator)
        except ValueError:
            page, start, end = None, -1, -1
        at_locator = 0 <= start <= end <= len(canonical) and canonical[start:end] == quote
        right_page = page is None or not page_starts or page_of(page_starts, start) == page
        if at_locator and right_page:
            return QuoteCheck(ok=True, locator=locator, text=quote, how="locator")
    found = relocate(canonical, quote, fuzzy=False)
    if found is not None:
        start, end, match = found
        how: Literal["exact", "normalized"] = "exact" if match is Match.EXACT else "normalized"
        return QuoteCheck(ok=True, locator=locate_span(start, end, page_starts),
                          text=canonical[start:end], how=how)
    best = _best_window(canonical, quote, min_jaccard)
    if isinstance(best, float):
        return QuoteCheck(ok=False, reason=f"quote not found in the source (only {best:.0%} of its words occur in it)")
    score, start, end = best
    if score >= min_jaccard:
        return QuoteCheck(ok=True, locator=locate_span(start, end, page_starts), text=canonical[start:end],
                          how="near_verbatim", jaccard=round(score, 3))
    return QuoteCheck(
        ok=False, jaccard=round(score, 3),
        reason=f"quote not found in the source (closest passage has token Jaccard {score:.2f} < {min_jaccard:.2f})",
    )


# -- grounding -------------------------------------------------------------------------


@dataclass(frozen=True)
class Grounding:
    """The outcome of :func:`check_grounding`: ``support`` is the share of the
    sentence's content terms found in its quotes; ``missing`` lists the numbers and
    names (and, when support is short, terms) the quotes do not have."""

    ok: bool
    support: float
    reason: str | None = None
    missing: tuple[str, ...] = field(default_factory=tuple)
    # Why it failed, as one word: "empty", "terms", "number", "name", "negation",
    # "quantifier", "modality", "comparative", "role", "scope", "merge".
    category: str | None = None
    # When ok: "quoted" (the sentence is one of its quotes) or "supported".
    level: str | None = None


def check_grounding(
    sentence: str,
    quotes: Sequence[str],
    *,
    min_support: float = MIN_SUPPORT,
) -> Grounding:
    """Whether ``sentence`` says no more, and nothing other, than ``quotes`` do (see
    the module doc): ``level`` "quoted" when it is one of them, "supported" when it
    passes every check, else ``category`` and ``reason`` say the first that failed."""
    quotes = [q for q in quotes if q and q.strip()]
    if not quotes:
        return Grounding(ok=False, support=0.0, reason="no quotes to ground it in", category="empty")
    if is_quoted(sentence, quotes):
        return Grounding(ok=True, support=1.0, level="quoted")
    sentence = plain_wording(sentence, quotes)  # ("unless configured otherwise" for the quote's "by default")
    anchored = anchor_all(sentence, quotes, min_support=min_support)
    if isinstance(anchored, Failure):
        return Grounding(ok=False, support=anchored.support, reason=anchored.reason, missing=anchored.missing,
                         category=anchored.category)
    sentence_forms = {f for readings in anchored.pairs for f in readings[0][0].forms}
    for readings in anchored.pairs:
        problems = [compare(said, source, whole, sentence=sentence_forms) for said, source, whole in readings]
        if all(p is not None for p in problems):
            category, reason = problems[0]  # type: ignore[misc]
            return Grounding(ok=False, support=anchored.support, reason=reason, category=category)
    return Grounding(ok=True, support=anchored.support, level="supported")
