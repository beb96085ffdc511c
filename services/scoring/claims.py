"""Offline claim extraction.

This module stands in for the model's claim extraction while the engine runs
without an LLM (its checklist coverage is :func:`services.scoring.coverage.assess_coverage`). It produces what that LLM
is asked for, ``text`` + ``supportingIndices`` + ``contradictingIndices``, plus exact
citations, and is deterministic.

Guarantees:

* Every claim is a sentence quoted from a source: each citation's ``quote`` is an
  evidence snippet or an excerpt sentence verbatim (so its ``char:s-e`` locator still
  verifies), and the claim text is that quote with whitespace collapsed and footnote
  markers such as "[3]" removed (so a report can print it without inventing citation
  numbers).
* Indices point into the ``scored_sources`` list given; a source never both supports
  and contradicts the same claim, and contradicts it only with a sentence on the same
  subject that shared.verification.meaning.contradicts finds states the opposite.
* At most ``max_claims`` claims, ids ``cl1``, ``cl2``... best first.
* Each claim's ``checklist_item_ids`` are the items it answers by the coverage rule
  (:func:`claim_matches_item`), the same rule offline coverage (services.scoring.coverage) applies, so a
  SATISFIED item always has claims that answer it.

Candidates are a source's digest snippets, the sentences of the passages chosen from
its whole canonical text for the job's questions (:mod:`services.scoring.passages`) and,
when the excerpt's place in the canonical text is known, the excerpt's own sentences:
the excerpt is the passage the search matched, the digest the best sentences of the
whole document for the question, the passages the best for each question still open. Terms are
shared.research.text.terms (Snowball stems: "processes" and "process" meet).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from services.scoring.claim_relevance import (Candidate, answer_score, aspect_cue, expand_acronyms, idf_weights,
                                              may_answer, question_relevance, weight)
from services.scoring.codelike import looks_like_code
from services.scoring.passages import Passage, example_end, heading_before
from shared.research.claims import META_TERMS, claim_matches_item, copied, item_terms
from shared.research.envelope import ChecklistItem, Citation, Claim, ScoredSource
from shared.research.locators import locate
from shared.verification.meaning import contradicts
from shared.research.text import has_negation, is_statement, jaccard, sentence_spans, terms, words

# Kept per pass, by either engine (the most confident; scoring's rank_claims): room for a
# report that answers every item with more than its opening facts; bounds the envelope.
MAX_CLAIMS = 30
DUPLICATE_JACCARD = 0.5
REDUNDANT_JACCARD = 0.4  # a chosen claim mostly repeating another's terms says little new
SAME_SUBJECT_JACCARD = 0.35
# shared.verification.meaning.contradicts takes milliseconds a pair: it is asked about the chosen
# claims only, and at most this many times for each, so the cost follows the claims kept.
CONTRADICTION_CHECKS = 8  # groups checked against each chosen claim, the most alike first
MEMBER_CHECKS = 8  # distinct sentences of a chosen group checked against its representative
MIN_WORDS = 3
# An item's answers are ranked by how squarely they answer it plus this much of how well
# they answer the question: of two answers to "How to stop a commit", the one that also
# says what the question asks about (hooks) comes first.
ITEM_RELEVANCE = 1.0
# Longer "sentences" are tables, lists or code run together by the splitter: they state
# too much to be one finding.
MAX_WORDS = 80

_FOOTNOTE = re.compile(r"\s*\[\d+\]")
_PILCROW = "¶"  # a heading's permalink mark, quoted with a term (see _pieces)


@dataclass
class _Group:
    members: list[Candidate] = field(default_factory=list)
    contradicting: set[int] = field(default_factory=set)
    # source index -> the passage of that source found to state the opposite
    counter: dict[int, Candidate] = field(default_factory=dict)

    def contradicted_by(self, member: Candidate) -> None:
        self.contradicting.add(member.source_index)
        self.counter.setdefault(member.source_index, member)

    @property
    def negated(self) -> bool:
        return self.members[0].negated

    @property
    def supporting(self) -> list[int]:
        return sorted({m.source_index for m in self.members})


def claim_text(quote: str) -> str:
    return " ".join(_FOOTNOTE.sub("", quote).replace(_PILCROW, " ").split())


def _pieces(source: ScoredSource, passages: Sequence[Passage] = ()) -> list[tuple[str, str, float, str]]:
    """(quote, locator, relevance, heading) of a source's candidate sentences: its
    digest snippets, then the sentences of the passages chosen for the job's questions
    from its whole text; a source without passages offers its excerpt's sentences
    instead (located through the excerpt's offset; without that offset, only when it has
    no digest either, unlocated). Each comes with the heading it opens the section of,
    when known. The passages replace the excerpt rather than add to it: they are chosen
    from the whole text for the same questions the search ran, and more sentences
    saying the same thing would crowd out the ones that add something."""
    at = source.excerpt_start
    snippets = source.digest.evidence_snippets if source.digest is not None else []
    excerpt = [(source.text[s:e], s) for s, e in sentence_spans(source.text)]
    headings = {quote: heading_before(source.text, s) for quote, s in excerpt}
    pieces = [(e.text, e.locator, e.relevance_score, headings.get(e.text, "")) for e in snippets]
    seen = {e.text for e in snippets}
    for passage in passages:
        for n, (s, e) in enumerate(sentence_spans(passage.text) if not passage.term else
                                   _after_term(passage.text, passage.term)):
            if not is_statement(passage.text[s:e]):
                continue
            # "... by executing the command venv:" comes with its command; the first
            # sentence of a passage that opens with the code term it describes
            # ("--rebase[=false|true]  When true, rebase ..."), with the term.
            s = 0 if n == 0 and passage.term else s
            quote = passage.text[s:example_end(passage.text, e) or e]
            if quote in seen:
                continue
            seen.add(quote)
            start = passage.start + s
            pieces.append((quote, locate(start, start + len(quote), source.page_starts),
                           source.relevance_score, passage.heading if n == 0 else ""))
    if (snippets or passages) and at is None:
        return pieces
    for quote, s in excerpt:
        if quote in seen or not is_statement(quote):
            continue
        seen.add(quote)
        locator = locate(at + s, at + len(quote) + s, source.page_starts) if at is not None else ""
        pieces.append((quote, locator, source.relevance_score, headings[quote]))
    return pieces


def _after_term(text: str, term: int) -> list[tuple[int, int]]:
    """The sentence spans of a passage's ``text`` after its first ``term`` characters."""
    return [(s + term, e + term) for s, e in sentence_spans(text[term:])]


def _candidates(scored_sources: Sequence[ScoredSource], passages: Mapping[int, Sequence[Passage]]) -> list[Candidate]:
    out: list[Candidate] = []
    # A sentence copied word for word into several sources (copied) is offered by the
    # first of them, the best scored: the copies are no further support.
    offered: dict[str, int] = {}
    for index, source in enumerate(scored_sources):
        for quote, locator, relevance, heading in _pieces(source, passages.get(index, ())):
            text = claim_text(quote)
            n_words = len(words(text))
            if n_words < MIN_WORDS or n_words > MAX_WORDS:
                continue
            if copied(text, index, offered):
                continue
            term_set = frozenset(terms(text))
            # A question states nothing; a sentence ending in ":" announces a list or
            # code that the finding would not show. The code term a description is
            # quoted with (see _pieces) is code by design: the sentence is judged alone.
            lead = claim_text(heading)
            said = text[len(lead):] if lead and text.startswith(lead) else text
            if not term_set or looks_like_code(said) or text.endswith(("?", ":")):
                continue
            out.append(Candidate(index, len(out), quote, locator, relevance, text,
                                  term_set, has_negation(text), term_set | frozenset(terms(heading))))
    return out


def _group(candidates: list[Candidate]) -> list[_Group]:
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


def _representative(group: _Group, scored_sources: Sequence[ScoredSource]) -> Candidate:
    """The best-supported member: from the highest-scoring source, then the most
    relevant snippet, then the earliest."""
    return min(group.members, key=lambda m: (-scored_sources[m.source_index].composite_score,
                                             -m.snippet_relevance, m.order))


def _drop_opposites(group: _Group, rep: Candidate) -> None:
    """Near-duplicates share most terms, not always their meaning ("Latency increases
    under load" and "Latency decreases under load"): a member that
    shared.verification.meaning.contradicts finds states the opposite of the representative leaves
    the group, and its source, unless another member of it stays, contradicts the claim."""
    texts = list(dict.fromkeys(m.text for m in group.members if m.text != rep.text))[:MEMBER_CHECKS]
    opposite = {t for t in texts if contradicts(rep.text, t) is not None}
    if opposite:
        gone = [m for m in group.members if m.text in opposite]
        group.members = [m for m in group.members if m.text not in opposite]
        for member in gone:
            if member.source_index not in group.supporting:
                group.contradicted_by(member)


def _mark_contradictions(groups: list[_Group], reps: list[Candidate], chosen: Sequence[int]) -> None:
    """Each chosen group against the groups sharing its subject (term Jaccard >= 0.35,
    either polarity), the most alike first, at most CONTRADICTION_CHECKS of them: when
    shared.verification.meaning.contradicts finds that one states the opposite of the other, each
    one's supporting sources (those not supporting both) become the other's
    contradicting sources."""
    checked: set[tuple[int, int]] = set()
    for i in chosen:
        alike = sorted((-score, j) for j in range(len(groups))
                       if j != i and (score := jaccard(reps[i].terms, reps[j].terms)) >= SAME_SUBJECT_JACCARD)
        for _, j in alike[:CONTRADICTION_CHECKS]:
            g, h = groups[i], groups[j]
            pair = (min(i, j), max(i, j))
            if pair in checked or set(g.supporting) == set(h.supporting):  # nothing to mark
                continue
            checked.add(pair)
            if contradicts(reps[i].text, reps[j].text) is not None:
                _mark_sources(g, h, reps[i])
                _mark_sources(h, g, reps[j])


def _mark_sources(claim: _Group, other: _Group, rep: Candidate) -> None:
    """``other``'s sources (those not supporting ``claim``) contradict ``claim`` where
    their own passage in ``other`` is found to state the opposite of ``rep``: a source
    is only counted against a claim with a passage checked to contradict it."""
    for index in sorted(set(other.supporting) - set(claim.supporting)):
        passage = next((m for m in other.members if m.source_index == index
                        and contradicts(rep.text, m.text) is not None), None)
        if passage is not None:
            claim.contradicted_by(passage)


def extract_claims(
    question: str,
    sub_questions: Sequence[str],
    checklist: Sequence[ChecklistItem],
    scored_sources: Sequence[ScoredSource],
    *,
    max_claims: int = MAX_CLAIMS,
    passages: Mapping[int, Sequence[Passage]] | None = None,
) -> list[Claim]:
    """Claims from the sources' evidence, unscored (ClaimScorer scores them).
    ``passages``: by source index, the passages chosen from each source's whole text
    for the job's questions (:mod:`services.scoring.passages`), offered with its digest
    snippets and excerpt.

    A claim is kept when it shares a subject term (META_TERMS aside) with the question
    or a sub-question. Each checklist item first gets its own best answers (claims
    that may answer it, see :func:`may_answer`, ranked by :func:`answer_score` plus ITEM_RELEVANCE
    times :func:`question_relevance`), in turns, so that every item the sources can answer
    is answered; the remaining places go to the most relevant claims that answer an item
    or the question by the coverage rule, or carry half the question's subject weight.
    Claims are then listed best first; ties keep extraction order.
    """
    candidates = _candidates(scored_sources, passages or {})
    groups = _group(candidates)
    reps = [_representative(g, scored_sources) for g in groups]

    q_terms = set(terms(question)) - META_TERMS
    s_terms = set().union(*(terms(s) for s in sub_questions)) - META_TERMS
    wanted = q_terms | s_terms
    expand_acronyms(candidates, "\n".join([question, *sub_questions]), wanted)
    idf = idf_weights([c.about for c in candidates])
    subjects = [(item.id, item_terms(item.description)) for item in checklist]
    cues = [aspect_cue(item.description) for item in checklist]

    scored: list[tuple[float, int]] = []  # (relevance, group index)
    for order, (group, rep) in enumerate(zip(groups, reps, strict=True)):
        if not rep.about & wanted:
            continue
        supporting = group.supporting
        source_relevance = max(scored_sources[i].relevance_score for i in supporting)
        value = question_relevance(rep, len(supporting), source_relevance, wanted, q_terms or wanted, idf)
        scored.append((value, order))
    by_relevance = [order for _, order in sorted(scored, key=lambda r: (-r[0], r[1]))]
    relevance = dict((order, value) for value, order in scored)

    chosen = _per_item(by_relevance, relevance, reps, subjects, cues, idf, max_claims)
    # With a checklist, the rest of the places go to claims that answer an item by the
    # coverage rule (one that only may answer an item, see :func:`may_answer`, lands
    # among the other findings, where it answers nothing), or the question, or carry at
    # least half of the question's subject weight: common words ("Python" in Python's
    # documentation) are no answer.
    asked = item_terms(question)
    eligible = [order for order in by_relevance
                if not subjects or any(claim_matches_item(set(reps[order].about), it) for _, it in subjects)
                or claim_matches_item(set(reps[order].about), asked)
                or weight(reps[order].about & q_terms, idf) >= 0.5 * weight(q_terms, idf)]
    while len(chosen) < max_claims and (pick := _next_new(eligible, chosen, reps)) is not None:
        chosen.append(pick)
    chosen.sort(key=lambda o: (-relevance[o], o))
    for order in chosen[:max_claims]:
        _drop_opposites(groups[order], reps[order])
    _mark_contradictions(groups, reps, chosen[:max_claims])
    return [_claim(f"cl{n}", groups[order], reps[order], scored_sources, subjects)
            for n, order in enumerate(chosen[:max_claims], start=1)]


def _per_item(by_relevance: list[int], relevance: dict[int, float], reps: Sequence[Candidate],
              subjects: list[tuple[str, set[str]]], cues: list[re.Pattern[str] | None], idf: dict[str, float],
              max_claims: int) -> list[int]:
    """Each checklist item's best answers (groups by index), taken in turns: three
    quarters of the places go to the items this way; the rest to the most relevant
    claims, whichever items they answer."""
    chosen: list[int] = []
    if not subjects or max_claims <= 0:
        return chosen
    queues = []
    for (_, subject), cue in zip(subjects, cues, strict=True):
        answers = [order for order in by_relevance if may_answer(set(reps[order].about), subject, idf)]
        answers.sort(key=lambda o: (-answer_score(reps[o], subject, idf, cue) - ITEM_RELEVANCE * relevance[o], o))
        queues.append(answers)
    per_item = max(1, (3 * max_claims // 4) // len(subjects))
    for _ in range(per_item):
        for answers in queues:
            pick = _next_new(answers, chosen, reps)
            if pick is not None:
                chosen.append(pick)
            if len(chosen) >= max_claims:
                return chosen
    return chosen


def _next_new(ranked: Sequence[int], chosen: list[int], reps: Sequence[Candidate]) -> int | None:
    """The best of ``ranked`` not chosen yet that says something the chosen do not: one
    whose terms mostly repeat a chosen claim's (term Jaccard >= REDUNDANT_JACCARD) waits
    until nothing new is left. A page restates its subject in many sentences ("the with
    statement ... a context manager ..."); the fact that answers ("__enter__() and
    __exit__()") is often the one that adds words."""
    fresh = [o for o in ranked if o not in chosen]
    for order in fresh:
        if all(jaccard(reps[order].terms, reps[c].terms) < REDUNDANT_JACCARD for c in chosen):
            return order
    return fresh[0] if fresh else None


def _claim(claim_id: str, group: _Group, rep: Candidate, scored_sources: Sequence[ScoredSource],
           subjects: list[tuple[str, set[str]]]) -> Claim:
    """A chosen group as a claim: the representative's text, one citation per
    supporting source (its most relevant member; the representative when it is one)."""
    citations: list[Citation] = []
    for index in group.supporting:
        members = [m for m in group.members if m.source_index == index]
        best = rep if any(m is rep for m in members) else min(members, key=lambda m: (-m.snippet_relevance, m.order))
        citations.append(Citation(source_id=scored_sources[index].id, locator=best.locator, quote=best.quote))
    return Claim(
        id=claim_id,
        text=rep.text,
        supporting_indices=group.supporting,
        contradicting_indices=sorted(group.contradicting),
        # Heading-aware (``about``): a glossary entry's sentence answers the term it defines.
        checklist_item_ids=[iid for iid, it in subjects if claim_matches_item(set(rep.about), it)],
        citations=citations,
        level="quoted",  # the representative's quote itself (spacing and footnote marks aside)
        counter_citations=[Citation(source_id=scored_sources[i].id, locator=m.locator, quote=m.quote)
                           for i, m in sorted(group.counter.items()) if i in group.contradicting],
    )
