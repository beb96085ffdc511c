"""The passage the report quotes for a source that disputes a claim: the one scoring
checked, else the closest the meaning check confirms, else the closest, said to be
unconfirmed."""

from __future__ import annotations

from datetime import UTC, datetime

from services.scoring.engine import SourceScorer
from services.synthesis.passages import disputing_quote
from shared.research.envelope import Citation, Claim, CredibilityTier, RetrievalMethod, ScoredSource, Source
from shared.research.text import text_hash

CLAIM = "Threads share memory with the other threads of their process."
OPPOSITE = "Threads do not share memory with the other threads of their process."
RELATED = "Threads of one process share a heap and loaded libraries."


def _source(text: str) -> ScoredSource:
    source = Source(id="s2", text=text, url="https://example.org/s2", title="s2", relevance_score=0.5,
                    credibility_tier=CredibilityTier.SECONDARY, domain_authority=50,
                    retrieval_method=RetrievalMethod.RAG, text_hash=text_hash(text), text_chars=len(text),
                    excerpt_start=0)
    return SourceScorer().score(source, now=datetime(2025, 6, 1, tzinfo=UTC))


def _claim(*counter: Citation) -> Claim:
    return Claim(id="cl1", text=CLAIM, supporting_indices=[0], contradicting_indices=[1],
                 contradiction_flag=True, citations=[Citation(source_id="s1", locator="char:0-62", quote=CLAIM)],
                 counter_citations=list(counter), level="quoted")


def test_the_passage_scoring_checked_is_quoted() -> None:
    recorded = Citation(source_id="s2", locator="char:100-168", quote=OPPOSITE)
    assert disputing_quote(_claim(recorded), _source(RELATED), []) == ("char:100-168", OPPOSITE, True)


def test_without_one_the_closest_passage_that_states_the_opposite_is_found() -> None:
    source = _source(f"{RELATED} {OPPOSITE}")
    locator, quote, confirmed = disputing_quote(_claim(), source, [])
    assert (quote, confirmed) == (OPPOSITE, True)
    assert source.text[int(locator.split(":")[1].split("-")[0]):int(locator.split("-")[1])] == OPPOSITE


def test_a_passage_that_does_not_contradict_is_shown_as_unconfirmed() -> None:
    _, quote, confirmed = disputing_quote(_claim(), _source(RELATED), [])
    assert quote == RELATED and confirmed is False
