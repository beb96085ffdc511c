"""Offline claim extraction and checklist coverage.

This module stands in for seed 000's LLM claim extraction (and seed 001's step 3d
completeness check) while the engine runs without an LLM. It produces what that LLM
is asked for, ``text`` + ``supportingIndices`` + ``contradictingIndices``, plus exact
citations, and is deterministic.

Guarantees:

* Every claim is a sentence quoted from a source: each citation's ``quote`` is an
  evidence snippet verbatim (so its ``char:s-e`` locator still verifies), and the
  claim text is that quote with whitespace collapsed and footnote markers such as
  "[3]" removed (so a report can print it without inventing citation numbers).
* Indices point into the ``scored_sources`` list given; a source never both supports
  and contradicts the same claim.
* At most ``max_claims`` claims, ids ``cl1``, ``cl2``... in order of relevance.

Terms are shared.text.terms (which keeps -ss/-us/-is words whole, so "process"
and "processes" meet).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from shared.envelope import ChecklistItem, Citation, Claim, CoverageStatus, ScoredSource
from shared.locators import locate
from shared.text import has_negation, is_statement, jaccard, sentence_spans, terms, words

MAX_CLAIMS = 20
DUPLICATE_JACCARD = 0.5
SAME_SUBJECT_JACCARD = 0.35
MIN_WORDS = 3

# Words that say what kind of information is wanted rather than what it is about:
# "Definition of threads" is about threads. Stemmed by shared.text.terms itself, so
# the set follows the stemmer.
META_TERMS = frozenset(terms("""
    definition meant mechanism advantage limitation risk evidence example comparison
    versus choose context open question key fact scope work aspect overview role main
    detail information specific
"""))

_FOOTNOTE = re.compile(r"\s*\[\d+\]")


@dataclass
class _Candidate:
    source_index: int
    order: int  # position among all candidates, for stable tie-breaking
    quote: str
    locator: str
    snippet_relevance: float
    text: str
    terms: frozenset[str]
    negated: bool


@dataclass
class _Group:
    members: list[_Candidate] = field(default_factory=list)
    contradicting: set[int] = field(default_factory=set)

    @property
    def negated(self) -> bool:
        return self.members[0].negated

    @property
    def supporting(self) -> list[int]:
        return sorted({m.source_index for m in self.members})


def claim_text(quote: str) -> str:
    return " ".join(_FOOTNOTE.sub("", quote).split())


def item_terms(description: str) -> set[str]:
    """The subject terms of a checklist item (META_TERMS removed)."""
    return set(terms(description)) - META_TERMS


def claim_matches_item(claim_terms: set[str], item: set[str]) -> bool:
    """The coverage rule: a claim addresses an item when they share at least
    min(2, number of item terms) terms; an item with no subject terms matches nothing."""
    if not item:
        return False
    return len(claim_terms & item) >= min(2, len(item))


def _candidates(scored_sources: Sequence[ScoredSource]) -> list[_Candidate]:
    out: list[_Candidate] = []
    for index, source in enumerate(scored_sources):
        if source.digest is not None and source.digest.evidence_snippets:
            pieces = [(e.text, e.locator, e.relevance_score) for e in source.digest.evidence_snippets]
        else:
            # No digest (too short for DIGEST_POLICY=auto, or skipped): the excerpt's
            # sentences, located in the canonical text through the excerpt's offset.
            # A source that does not know that offset gives quotes without locator.
            at = source.excerpt_start
            pieces = [(source.text[s:e], locate(at + s, at + e, source.page_starts) if at is not None else "",
                       source.relevance_score)
                      for s, e in sentence_spans(source.text) if is_statement(source.text[s:e])]
        for quote, locator, relevance in pieces:
            text = claim_text(quote)
            if len(words(text)) < MIN_WORDS:
                continue
            term_set = frozenset(terms(text))
            if not term_set:
                continue
            out.append(_Candidate(index, len(out), quote, locator, relevance, text,
                                  term_set, has_negation(text)))
    return out


def _group(candidates: list[_Candidate]) -> list[_Group]:
    """Near-duplicates (term Jaccard >= 0.5, same polarity) become one group; a
    candidate joins the group holding its closest member, the earliest on ties."""
    groups: list[_Group] = []
    for cand in candidates:
        best: _Group | None = None
        best_score = DUPLICATE_JACCARD
        for group in groups:
            if group.negated != cand.negated:
                continue
            score = max(jaccard(cand.terms, m.terms) for m in group.members)
            if score >= best_score and (best is None or score > best_score):
                best, best_score = group, score
        if best is None:
            groups.append(_Group(members=[cand]))
        else:
            best.members.append(cand)
    return groups


def _representative(group: _Group, scored_sources: Sequence[ScoredSource]) -> _Candidate:
    """The best-supported member: from the highest-scoring source, then the most
    relevant snippet, then the earliest."""
    return min(group.members, key=lambda m: (-scored_sources[m.source_index].composite_score,
                                             -m.snippet_relevance, m.order))


def _mark_contradictions(groups: list[_Group], reps: list[_Candidate]) -> None:
    for i, g in enumerate(groups):
        for j in range(i + 1, len(groups)):
            h = groups[j]
            if g.negated == h.negated:
                continue
            if jaccard(reps[i].terms, reps[j].terms) < SAME_SUBJECT_JACCARD:
                continue
            g.contradicting.update(set(h.supporting) - set(g.supporting))
            h.contradicting.update(set(g.supporting) - set(h.supporting))


def extract_claims(
    question: str,
    sub_questions: Sequence[str],
    checklist: Sequence[ChecklistItem],
    scored_sources: Sequence[ScoredSource],
    *,
    max_claims: int = MAX_CLAIMS,
) -> list[Claim]:
    """Claims from the sources' evidence, unscored (ClaimScorer scores them).

    Relevance: a claim is kept when it shares a subject term (META_TERMS aside) with
    the question or a sub-question, and ranked by 2 x terms shared with the question
    + terms shared with the sub-questions + number of supporting sources + their mean
    composite score; ties keep extraction order.
    """
    candidates = _candidates(scored_sources)
    groups = _group(candidates)
    reps = [_representative(g, scored_sources) for g in groups]
    _mark_contradictions(groups, reps)

    q_terms = set(terms(question)) - META_TERMS
    s_terms = set().union(*(terms(s) for s in sub_questions)) - META_TERMS
    ranked: list[tuple[float, int, _Group, _Candidate]] = []
    for order, (group, rep) in enumerate(zip(groups, reps, strict=True)):
        if not rep.terms & (q_terms | s_terms):
            continue
        supporting = group.supporting
        mean_composite = sum(scored_sources[i].composite_score for i in supporting) / len(supporting)
        score = (2 * len(rep.terms & q_terms) + len(rep.terms & s_terms)
                 + len(supporting) + mean_composite)
        ranked.append((-score, order, group, rep))
    ranked.sort(key=lambda r: (r[0], r[1]))

    subjects = [(item.id, item_terms(item.description)) for item in checklist]
    claims: list[Claim] = []
    for n, (_, _, group, rep) in enumerate(ranked[:max_claims], start=1):
        citations: list[Citation] = []
        for index in group.supporting:
            # Per source, its most relevant member; the representative when it is one.
            members = [m for m in group.members if m.source_index == index]
            best = rep if any(m is rep for m in members) else min(members, key=lambda m: (-m.snippet_relevance, m.order))
            citations.append(Citation(source_id=scored_sources[index].id,
                                      locator=best.locator, quote=best.quote))
        claims.append(Claim(
            id=f"cl{n}",
            text=rep.text,
            supporting_indices=group.supporting,
            contradicting_indices=sorted(group.contradicting),
            checklist_item_ids=[iid for iid, it in subjects if claim_matches_item(set(rep.terms), it)],
            citations=citations,
        ))
    return claims


def assess_coverage(checklist: Sequence[ChecklistItem], claims: Sequence[Claim]) -> list[ChecklistItem]:
    """Seed 001 step 3d offline: SATISFIED with two or more matching claims, PARTIAL
    with one, UNSATISFIED with none (see :func:`claim_matches_item`); ``evidence``
    lists the matching claim ids. The items given are not modified."""
    claim_terms = [(c.id, set(terms(c.text))) for c in claims]
    out: list[ChecklistItem] = []
    for item in checklist:
        subject = item_terms(item.description)
        evidence = [cid for cid, ct in claim_terms if claim_matches_item(ct, subject)]
        status = (CoverageStatus.SATISFIED if len(evidence) >= 2
                  else CoverageStatus.PARTIAL if evidence
                  else CoverageStatus.UNSATISFIED)
        out.append(item.model_copy(update={"status": status, "evidence": evidence}))
    return out


def knowledge_gaps(checklist: Sequence[ChecklistItem]) -> list[str]:
    """Descriptions of the items not satisfied; partial ones say so (seed 001's
    "item3 - partial coverage")."""
    gaps: list[str] = []
    for item in checklist:
        if item.status is CoverageStatus.PARTIAL:
            gaps.append(f"{item.description} - partial coverage")
        elif item.status is CoverageStatus.UNSATISFIED:
            gaps.append(item.description)
    return gaps
