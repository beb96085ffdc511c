"""What the report quotes from a source besides its claims' own citations.

A source cited without a passage of its own (only as contradicting a claim) is shown
with one of its passages: :func:`disputing_quote` looks for the passage that code finds
to state the opposite of the claim (``shared.verification.meaning.contradicts``), among the closest
ones in terms, and says when it found none.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.research.envelope import Claim, ScoredSource
from shared.research.locators import locate
from shared.verification.meaning import contradicts
from shared.research.text import jaccard, sentence_spans, terms

__all__ = ["CONTRADICTION_CANDIDATES", "disputing_quote", "fallback_quote"]

CONTRADICTION_CANDIDATES = 8  # a disputing source's passages, closest first, checked to contradict


def fallback_quote(source: ScoredSource, claims: Sequence[Claim]) -> tuple[str, str]:
    """A quote for a source cited without one of its own (e.g. only as contradicting):
    one of its citations elsewhere, else its first evidence snippet, else the first
    sentence of its excerpt, located in the canonical text when the excerpt's offset is known."""
    for claim in claims:
        for citation in claim.citations:
            if citation.source_id == source.id:
                return citation.locator, citation.quote
    if source.digest is not None and source.digest.evidence_snippets:
        snippet = source.digest.evidence_snippets[0]
        return snippet.locator, snippet.text
    spans = sentence_spans(source.text)
    if not spans:
        return "", source.text
    start, end = spans[0]
    where = locate(source.excerpt_start + start, source.excerpt_start + end, source.page_starts) \
        if source.excerpt_start is not None else ""
    return where, source.text[start:end]


def passages(source: ScoredSource, all_claims: Sequence[Claim]) -> list[tuple[str, str]]:
    """(locator, text) of what the report can quote from ``source``: its passages cited
    by any claim, its digest's evidence snippets, its excerpt's sentences."""
    out = [(c.locator, c.quote) for claim in all_claims for c in claim.citations if c.source_id == source.id]
    if source.digest is not None:
        out += [(e.locator, e.text) for e in source.digest.evidence_snippets]
    if source.excerpt_start is not None:
        at = source.excerpt_start
        out += [(locate(at + a, at + b, source.page_starts), source.text[a:b]) for a, b in sentence_spans(source.text)]
    return list(dict.fromkeys(out))


def disputing_quote(claim: Claim, source: ScoredSource, all_claims: Sequence[Claim]) -> tuple[str, str, bool]:
    """See :func:`_searched`; the passage scoring found and checked comes first."""
    recorded = next((c for c in claim.counter_citations if c.source_id == source.id), None)
    if recorded is not None:
        return recorded.locator, recorded.quote, True
    return _searched(claim, source, all_claims)


def _searched(claim: Claim, source: ScoredSource, all_claims: Sequence[Claim]) -> tuple[str, str, bool]:
    """What the disputing source says: (locator, passage, whether code found that this
    passage states the opposite of the claim). The closest passage in terms that
    ``shared.verification.meaning.contradicts`` confirms; when none does, the closest one, unconfirmed."""
    own = set(terms(claim.text))
    ranked = sorted(passages(source, all_claims), key=lambda p: -jaccard(own, set(terms(p[1]))))
    for locator, text in ranked[:CONTRADICTION_CANDIDATES]:
        if contradicts(claim.text, text):
            return locator, text, True
    if ranked:
        return ranked[0][0], ranked[0][1], False
    locator, text = fallback_quote(source, all_claims)
    return locator, text, False
