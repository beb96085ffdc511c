"""Contradictions across all of a job's claims, each pair checked.

Claims are proposed in batches (a model call sees at most a few sources; the offline
engine groups near-duplicates), so two claims that disagree can come from different
batches and never meet. Here every pair of the job's claims about the same thing —
sharing at least ``MIN_SHARED_TERMS`` content terms (the two things a comparison names
and what it says of them: "threads use less memory than processes" and "threads are
cheaper to create than processes" compare the same two things on different counts and
do not disagree), the most alike first, at most
``CHECKS_PER_CLAIM`` partners per claim so the cost follows the claims kept — is given
to shared.verification.meaning.contradicts: a pair is marked only when one states the
opposite of the other (negated, another quantifier or direction, other figures), never
because two sentences share a word. Each marked claim gets the other's supporting
sources (those not supporting both) as contradicting sources, and the other's citations
as its counter-citations, so the report can show exactly which passage disputes it.
"""

from __future__ import annotations

from collections.abc import Sequence

from shared.research.envelope import Claim, ScoredSource
from shared.research.text import jaccard, terms
from shared.verification.meaning import contradicts

__all__ = ["CHECKS_PER_CLAIM", "MIN_SHARED_TERMS", "cross_contradictions"]

MIN_SHARED_TERMS = 3
CHECKS_PER_CLAIM = 8


def _partners(own: Sequence[frozenset[str]], i: int) -> list[int]:
    """The claims sharing enough subject with claim ``i``, the most alike first."""
    alike = [(-jaccard(own[i], own[j]), j) for j in range(len(own))
             if j != i and len(own[i] & own[j]) >= min(MIN_SHARED_TERMS, len(own[i]), len(own[j]))]
    return [j for _, j in sorted(alike)[:CHECKS_PER_CLAIM]]


def cross_contradictions(claims: Sequence[Claim], scored: Sequence[ScoredSource]) -> list[Claim]:
    """``claims`` with the contradictions found between any two of them added."""
    own = [frozenset(terms(c.text)) for c in claims]
    disputed: dict[int, set[int]] = {}
    checked: set[tuple[int, int]] = set()
    for i in range(len(claims)):
        for j in _partners(own, i):
            pair = (min(i, j), max(i, j))
            a, b = claims[pair[0]], claims[pair[1]]
            if pair in checked or set(a.supporting_indices) == set(b.supporting_indices):
                continue
            checked.add(pair)
            if contradicts(a.text, b.text) is not None:
                disputed.setdefault(pair[0], set()).add(pair[1])
                disputed.setdefault(pair[1], set()).add(pair[0])
    return [_disputed_by(claim, [claims[j] for j in sorted(disputed.get(i, ()))], scored)
            for i, claim in enumerate(claims)]


def _disputed_by(claim: Claim, others: Sequence[Claim], scored: Sequence[ScoredSource]) -> Claim:
    if not others:
        return claim
    support = set(claim.supporting_indices)
    against = set(claim.contradicting_indices)
    counter = list(claim.counter_citations)
    ids = {s.id: n for n, s in enumerate(scored)}
    for other in others:
        for citation in other.citations:
            index = ids.get(citation.source_id)
            if index is None or index in support:
                continue
            against.add(index)
            if all((c.source_id, c.locator) != (citation.source_id, citation.locator) for c in counter):
                counter.append(citation)
    return claim.model_copy(update={"contradicting_indices": sorted(against), "counter_citations": counter})
