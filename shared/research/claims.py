"""What the scoring and synthesis stages both need to know about claims.

Scoring decides which checklist items a claim answers and how confident the job is;
synthesis re-checks coverage after the model writes and reports the same confidence.
The rules live here so the two stages cannot drift apart: the coverage rule
(:func:`item_terms`, :func:`claim_matches_item`, :func:`answering_claims`), the gaps a checklist leaves
(:func:`knowledge_gaps`), the indices a model's claim may use (:func:`valid_indices`)
and the job's confidence (:class:`JobConfidenceCalculator`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from shared.research.envelope import ChecklistItem, Claim, CoverageStatus, JobConfidence, ScoredSource
from shared.research.text import terms

__all__ = [
    "FULL_CONFIDENCE_SOURCES",
    "META_TERMS",
    "JobConfidenceCalculator",
    "answering_claims",
    "clamp",
    "claim_matches_item",
    "copied",
    "copy_key",
    "defines",
    "item_terms",
    "knowledge_gaps",
    "leans_on_context",
    "states_of",
    "valid_indices",
]

FULL_CONFIDENCE_SOURCES = 10

# Words that say what kind of information is wanted rather than what it is about:
# "Definition of threads" is about threads. Stemmed by shared.research.text.terms itself, so
# the set follows the stemmer.
META_TERMS = frozenset(terms("""
    definition meant mechanism advantage limitation risk evidence example comparison
    versus choose open question key fact scope work aspect overview role main
    detail information specific differ difference compare purpose
"""))

_IN_CONTEXT_OF = re.compile(r"\bin the context of\b", re.IGNORECASE)

# A trailing qualifier narrows an item without being its subject: "a decorator in
# Python" is about decorators, and a sentence of Python's documentation about them
# need not say "Python".
_QUALIFIER = re.compile(r"\s+(?:in|for|on|under|with|within)\s+(?:an?\s+|the\s+)?[^\s]+(?:\s+[^\s]+)?$",
                        re.IGNORECASE)


def clamp(value: float, low: float = 0.0, high: float = 1.0) -> float:
    if math.isnan(value):
        return low
    return max(low, min(high, value))


def item_terms(description: str) -> set[str]:
    """The subject terms of a checklist item: META_TERMS and a trailing qualifier
    ("... in Python", "... for a class") removed, unless nothing would be left."""
    text = _IN_CONTEXT_OF.sub(" ", description)
    full = set(terms(text)) - META_TERMS
    core = set(terms(_QUALIFIER.sub("", text.rstrip(" ?.")))) - META_TERMS
    return core or full


def claim_matches_item(claim_terms: set[str], item: set[str]) -> bool:
    """The coverage rule: a claim addresses an item when they share at least
    min(2, n) of the item's n subject terms, and half of them for a long item ("How
    PostgreSQL protects against transaction ID wraparound" is not answered by a
    sentence about transaction IDs); an item with no subject terms matches nothing."""
    if not item:
        return False
    return len(claim_terms & item) >= max(min(2, len(item)), math.ceil(len(item) / 2))


def answering_claims(item: ChecklistItem, claims: Sequence[Claim], *, judged: bool = False) -> list[str]:
    """The ids of ``claims`` that answer ``item`` by the coverage rule, in their order:
    the claim's terms against the item's subject terms. ``judged``: the claims a model
    judged to answer it, checked to be about its subject (at least min(2, n) of its n
    subject terms) rather than held to the offline rule, which must find answers by
    words alone."""
    subject = item_terms(item.description)
    if judged:
        return [c.id for c in claims if subject and len(set(terms(c.text)) & subject) >= min(2, len(subject))]
    return [c.id for c in claims if claim_matches_item(set(terms(c.text)), subject)]


# A sentence about the text it is in rather than its subject ("This guide summarises the
# trade-offs...", "The table below lists...") answers nothing; one that opens by pointing
# back ("It...", "These...") or rests on "this difference" leans on a sentence the
# reader of a finding does not see. Choosing claims and placing them in the report both
# pass over such sentences for one that stands alone, unless nothing else says the thing.
_ABOUT_THE_TEXT = re.compile(r"\b(?:this|the following|the next|the previous|below|above)\s+"
                             r"(?:guide|page|article|document|section|chapter|tutorial|post|paper|manual|"
                             r"table|figure|list)s?\b|\b(?:summari[sz]es|introduces|covers)\b", re.IGNORECASE)
_POINTS_BACK = re.compile(r"^(?:it|this|that|these|those|they|such|its|their)\b|"
                          r"\b(?:this|these|that|those)\s+(?:\w+\s+)?(?:difference|point|guarantee|approach|"
                          r"problem|reason|case|way)s?\b", re.IGNORECASE)


def states_of(text: str, subject: set[str], verbs: re.Pattern[str], *, within: int = 5) -> bool:
    """Whether a sentence opens by stating something of ``subject`` itself: the words
    before its first of ``verbs``, within its first ``within`` words, are the subject's
    ("Tuples are immutable", "A context manager is an object"), not a thing named
    after it ("The tuple values are initialized...")."""
    verb = verbs.search(" ".join(text.split(" ")[:within]))
    before = terms(text[:verb.start()]) if verb else []
    return bool(before) and set(before) <= subject


# "is a", "are the", "means", "refers to": saying what a thing is, not how it compares
# ("Threads are always cheaper to create than processes").
_DEFINING = re.compile(r"\b(?:(?:is|are)\s+(?:a|an|the|one)\b|means\b|refers to\b)", re.IGNORECASE)


def defines(text: str, subject: set[str]) -> bool:
    """Whether a sentence says what ``subject`` is ("A thread is an independent flow of
    execution inside a process", for threads)."""
    return states_of(text, subject, _DEFINING, within=7)  # (room for "is a" after a subject of four words)


def leans_on_context(text: str) -> int:
    """0, 1 or 2: whether a sentence is about its own text, and whether it points back."""
    return int(bool(_ABOUT_THE_TEXT.search(text))) + int(bool(_POINTS_BACK.search(text)))


def knowledge_gaps(checklist: Sequence[ChecklistItem]) -> list[str]:
    """Descriptions of the items not satisfied; partial ones say so (as in
    "item3 - partial coverage")."""
    gaps: list[str] = []
    for item in checklist:
        if item.status is CoverageStatus.PARTIAL:
            gaps.append(f"{item.description} - partial coverage")
        elif item.status is CoverageStatus.UNSATISFIED:
            gaps.append(item.description)
    return gaps


# A sentence found word for word in several sources is one statement copied (a page
# included in others, a syndicated article), not several sources agreeing: it supports
# a claim once. Short sentences ("Threads share memory.") may be written alike
# independently, so only those this long count as copies.
COPY_MIN_WORDS = 8


def copy_key(quote: str) -> str | None:
    """What a word-for-word copy of ``quote`` has in common with it (case and spacing
    aside), or None for a sentence too short to tell a copy from a coincidence."""
    said = quote.split()
    return " ".join(said).casefold() if len(said) >= COPY_MIN_WORDS else None


def copied(quote: str, source_index: int, first_source: dict[str, int]) -> bool:
    """Whether another source gave ``quote`` word for word before (:func:`copy_key`).
    ``first_source`` maps each copy key seen so far to the source that gave it first,
    the best scored when sources are taken in score order, and is updated here."""
    key = copy_key(quote)
    return key is not None and first_source.setdefault(key, source_index) != source_index


def valid_indices(indices: Sequence[int], size: int) -> list[int]:
    """``indices`` that point into a list of ``size`` items, first occurrence only.
    Negative indices are out of range: Python's wrap-around is not what a model means."""
    seen: set[int] = set()
    out: list[int] = []
    for i in indices:
        if 0 <= i < size and i not in seen:
            seen.add(i)
            out.append(i)
    return out


class JobConfidenceCalculator:
    """The mean claim confidence, scaled down when the job has fewer than 10 sources."""

    def calculate(self, claims: Sequence[Claim], scored_sources: Sequence[ScoredSource]) -> JobConfidence:
        source_count = len(scored_sources)
        if claims:
            average = sum(c.confidence_score for c in claims) / len(claims)
            confidence = clamp(average * min(source_count / FULL_CONFIDENCE_SOURCES, 1.0))
        else:
            confidence = 0.0
        return JobConfidence(
            confidence=confidence,
            claim_count=len(claims),
            source_count=source_count,
            has_contradictions=any(c.contradiction_flag for c in claims),
        )
