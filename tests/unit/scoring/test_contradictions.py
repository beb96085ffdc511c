"""A source counts against a claim only when a sentence of it states the opposite
(shared.verification.meaning.contradicts), in model claims and in the offline engine alike: sharing
the claim's words, or having the other polarity, is not enough."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import pytest

import services.scoring.claims as offline_engine
from services.scoring.claims import CONTRADICTION_CHECKS, MEMBER_CHECKS, extract_claims
from services.scoring.contradictions import cross_contradictions
from services.scoring.engine import SourceScorer
from services.scoring.model_claims import build_snippets
from services.scoring.claim_checks import Verifier, check_model_claims
from services.scoring.schemas import ClaimDraft
from shared.research.envelope import (
    Citation,
    Claim,
    CredibilityTier,
    DigestPayload,
    EvidenceSnippet,
    RetrievalMethod,
    ScoredSource,
    Source,
)
from shared.verification.meaning import contradicts
from shared.research.text import canonicalize, sentence_spans, text_hash

NOW = datetime(2025, 6, 1, tzinfo=UTC)
QUESTION = "How do threads and processes compare, and how does latency change under heavy load?"
SUBS = [QUESTION, "Do threads share memory?", "How does latency change under heavy load in a thread pool?",
        "Are processes cheaper to create than threads?"]
SHARE = "Threads share memory with the other threads of their process."
NOT_SHARE = "Threads do not share memory with the other threads of their process."
NO_STACK = "Threads of one process share memory, but they do not share a stack."
UP = "Latency increases under heavy load in a thread pool."
DOWN = "Latency decreases under heavy load in a thread pool."


def _source(sid: str, text: str, *, da: int = 60, snippet: str | None = None) -> Source:
    """A digested source whose snippets are its sentences (``snippet`` replaces the
    first: a digest that misquotes its source)."""
    text = canonicalize(text)
    snippets = [EvidenceSnippet(text=text[s:e], locator=f"char:{s}-{e}", relevance_score=0.7)
                for s, e in sentence_spans(text)]
    if snippet is not None:
        snippets[0] = snippets[0].model_copy(update={"text": snippet})
    digest = DigestPayload(query_hash="0123abcd", summary=text[:60], key_points=[], evidence_snippets=snippets,
                           original_chars=len(text), digest_chars=len(text), compression_ratio=1.0,
                           source_text_hash=text_hash(text).replace("sha256-", "sha256:"))
    tier = CredibilityTier.PRIMARY_SOURCE if da > 60 else CredibilityTier.SECONDARY
    return Source(id=sid, text=text, url=f"https://example.org/{sid}", title=sid, relevance_score=0.8,
                  credibility_tier=tier, domain_authority=da, retrieval_method=RetrievalMethod.RAG,
                  text_hash=text_hash(text), text_chars=len(text), digest=digest)


def _scored(*sources: Source) -> list[ScoredSource]:
    return SourceScorer().score_all(list(sources), now=NOW)


def _index(scored: list[ScoredSource], sid: str) -> int:
    return next(i for i, s in enumerate(scored) if s.id == sid)


def _claim(claims: list[Claim], text: str) -> Claim:
    (claim,) = [c for c in claims if c.text == text]
    return claim


def test_the_meaning_check_tells_opposites_from_related_sentences() -> None:
    assert contradicts("Threads share memory.", "Threads do not share memory.") == "negation"
    assert contradicts("Latency increases under load.", "Latency decreases under load.") == "comparative"
    assert contradicts(SHARE, NO_STACK) is None
    assert contradicts(SHARE, "Bananas are a yellow fruit rich in potassium.") is None


# -- model claims --------------------------------------------------------------------------


def test_a_cited_contradiction_counts_only_when_it_verifies_and_states_the_opposite(
        caplog: pytest.LogCaptureFixture) -> None:
    scored = _scored(_source("a", SHARE), _source("b", NOT_SHARE), _source("c", NO_STACK),
                     _source("d", "Threads were added to the language later.", snippet=NOT_SHARE))
    snippets = build_snippets(scored)
    verifier = Verifier(scored, {s.text_hash: s.text for s in scored}, min_jaccard=0.8, min_support=0.6)
    label = {sid: f"s{_index(scored, sid) + 1}.e1" for sid in "abcd"}
    draft = ClaimDraft(text=SHARE, supporting=[label["a"]], contradicting=[label["b"], label["c"], label["d"]])
    with caplog.at_level(logging.INFO, logger="services.scoring.model_claims"):
        (claim,), rejected = check_model_claims([draft], snippets, verifier, [], iteration=0)
    assert rejected == []
    # b says the opposite; c shares the subject and says something else; d's quote is not its source's.
    assert claim.contradicting_indices == [_index(scored, "b")]
    # The passage that was checked travels with the claim: the report quotes it.
    assert [(c.source_id, c.quote) for c in claim.counter_citations] == [("b", NOT_SHARE)]
    log = caplog.text
    assert f"snippet {label['b']} contradicts claim" in log and "(negation)" in log
    assert f"contradicting snippet {label['c']} does not contradict claim" in log
    assert f"contradicting snippet {label['d']} of claim" in log and "does not verify: not counted" in log


def test_a_comparative_contradiction_counts() -> None:
    scored = _scored(_source("up", UP), _source("down", DOWN))
    snippets = build_snippets(scored)
    verifier = Verifier(scored, {s.text_hash: s.text for s in scored}, min_jaccard=0.8, min_support=0.6)
    up, down = (f"s{_index(scored, sid) + 1}.e1" for sid in ("up", "down"))
    (claim,), _ = check_model_claims([ClaimDraft(text=UP, supporting=[up], contradicting=[down])],
                                     snippets, verifier, [], iteration=0)
    assert claim.contradicting_indices == [_index(scored, "down")]


# -- the offline engine ----------------------------------------------------------------------


def test_near_duplicates_that_state_opposites_are_not_one_claim() -> None:
    # Same polarity and most terms shared: once grouped as one claim, the source that
    # says latency decreases counted as support for "increases".
    # (source c words it its own way: a sentence copied word for word is one source)
    scored = _scored(_source("a", UP, da=95), _source("b", DOWN),
                     _source("c", "Under heavy load in a thread pool, latency increases."))
    claims = extract_claims(QUESTION, SUBS, [], scored)
    up = _claim(claims, UP)
    assert up.supporting_indices == sorted([_index(scored, "a"), _index(scored, "c")])
    assert up.contradicting_indices == [_index(scored, "b")]
    assert [(c.source_id, c.quote) for c in up.counter_citations] == [("b", DOWN)]
    assert all(DOWN not in (cit.quote for cit in c.citations) for c in claims if c.text == UP)


def test_opposite_polarity_on_the_same_subject_is_no_contradiction_unless_it_states_the_opposite() -> None:
    scored = _scored(_source("a", SHARE), _source("b", NO_STACK))
    claims = extract_claims(QUESTION, SUBS, [], scored)
    assert {c.text for c in claims} == {SHARE, NO_STACK}
    assert all(c.contradicting_indices == [] for c in claims)


def test_a_tension_of_another_kind_is_found_between_groups() -> None:
    always = "Processes are always cheaper to create than threads."
    usually = "Processes are usually faster to create than threads."
    scored = _scored(_source("a", always), _source("b", usually))
    claims = extract_claims(QUESTION, SUBS, [], scored)
    assert _claim(claims, always).contradicting_indices == [_index(scored, "b")]
    assert _claim(claims, usually).contradicting_indices == [_index(scored, "a")]


def test_the_checks_are_bounded_by_the_claims_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, str]] = []

    def counted(statement: str, other: str) -> str | None:
        calls.append((statement, other))
        return contradicts(statement, other)

    monkeypatch.setattr(offline_engine, "contradicts", counted)
    # Forty sources on one subject, every two sharing it (Jaccard 4/10) without being near-duplicates.
    words = [f"{a}{b}" for a in ("red", "blue", "green", "gold") for b in ("fox", "owl", "elk", "yak", "emu",
                                                                           "cod", "eel", "ant", "bee", "gnu")]
    sources = [_source(f"s{n}", f"Latency increases under heavy load with {w}alpha, {w}beta and {w}gamma.")
               for n, w in enumerate(words)]
    claims = extract_claims(QUESTION, SUBS, [], _scored(*sources), max_claims=5)
    assert len(claims) == 5
    # Every pair shares the subject: unbounded, each kept claim would be checked against 39 others.
    assert CONTRADICTION_CHECKS <= len(calls) <= 5 * (CONTRADICTION_CHECKS + MEMBER_CHECKS)


# -- across batches: every pair of the job's claims, each checked ----------------------------

ALWAYS_CHEAPER = "Threads are always cheaper to create than processes."
USUALLY_FASTER = "Creating a thread is usually faster than creating a process, especially on Windows."
LESS_MEMORY = "Threads use less memory than processes, because they share code, heap and loaded libraries."
ERLANG = "Erlang processes are lightweight and isolated."


def _quoted_claim(cid: str, text: str, index: int, scored: list[ScoredSource]) -> Claim:
    source = scored[index]
    start = source.text.index(text)
    return Claim(id=cid, text=text, supporting_indices=[index], level="quoted",
                 citations=[Citation(source_id=source.id, locator=f"char:{start}-{start + len(text)}", quote=text)])


def test_claims_of_different_batches_that_disagree_are_paired_with_the_disputing_passage() -> None:
    scored = _scored(_source("a", f"{ALWAYS_CHEAPER} {ERLANG}"), _source("b", f"{USUALLY_FASTER} {LESS_MEMORY}"))
    claims = [_quoted_claim("cl1", ALWAYS_CHEAPER, 0, scored), _quoted_claim("cl2", ERLANG, 0, scored),
              _quoted_claim("cl3", USUALLY_FASTER, 1, scored), _quoted_claim("cl4", LESS_MEMORY, 1, scored)]
    marked = {c.id: c for c in cross_contradictions(claims, scored)}
    assert marked["cl1"].contradicting_indices == [1]
    assert [c.quote for c in marked["cl1"].counter_citations] == [USUALLY_FASTER]
    assert marked["cl3"].contradicting_indices == [0]
    assert [c.quote for c in marked["cl3"].counter_citations] == [ALWAYS_CHEAPER]
    # Same two things compared on different counts, or sharing one word: no dispute.
    assert marked["cl2"].contradicting_indices == [] and marked["cl4"].contradicting_indices == []


def test_claims_of_one_source_never_dispute_each_other() -> None:
    scored = _scored(_source("a", f"{ALWAYS_CHEAPER} {USUALLY_FASTER}"))
    claims = [_quoted_claim("cl1", ALWAYS_CHEAPER, 0, scored), _quoted_claim("cl2", USUALLY_FASTER, 0, scored)]
    assert cross_contradictions(claims, scored) == claims


def test_a_model_claim_citing_a_word_for_word_copy_counts_its_source_once() -> None:
    # Two manual pages that include the same options text, or two sites carrying one
    # syndicated article, are one statement: the copy is not a second supporting source.
    scored = _scored(_source("a", UP, da=95), _source("copy", UP),
                     _source("own", "Under heavy load in a thread pool, latency increases."))
    snippets = build_snippets(scored)
    verifier = Verifier(scored, {s.text_hash: s.text for s in scored}, min_jaccard=0.8, min_support=0.6)
    ids = [f"s{_index(scored, sid) + 1}.e1" for sid in ("a", "copy", "own")]
    (claim,), _ = check_model_claims([ClaimDraft(text=UP, supporting=ids)], snippets, verifier, [], iteration=0)
    assert sorted(scored[i].id for i in claim.supporting_indices) == ["a", "own"]
    assert sorted(c.source_id for c in claim.citations) == ["a", "own"]
