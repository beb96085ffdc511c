"""The scoring formulas (docs/research-method.md), checked against hand-computed numbers."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.scoring.engine import ClaimScorer, SourceScorer
from shared.research.envelope import TIER_SCORES
from shared.research.claims import JobConfidenceCalculator
from shared.research.envelope import Claim, CredibilityTier, RetrievalMethod, ScoredSource, Source

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def make_source(
    *,
    sid: str = "s1",
    da: int = 80,
    published: datetime | None = None,
    relevance: float = 0.9,
    tier: CredibilityTier = CredibilityTier.AUTHORITATIVE,
) -> Source:
    return Source(
        id=sid, text="Threads share memory.", url=f"https://example.org/{sid}", title=sid,
        published_at=published, relevance_score=relevance, credibility_tier=tier,
        domain_authority=da, retrieval_method=RetrievalMethod.WEB,
        text_hash="sha256-" + "0" * 64, text_chars=21,
    )


def scored(composite: float, sid: str = "s") -> ScoredSource:
    return ScoredSource.model_validate({
        **make_source(sid=sid).model_dump(by_alias=False),
        "authority_score": 0.0, "recency_score": 0.0, "relevance_component": 0.0,
        "credibility_score": 0.0, "composite_score": composite,
    })


# -- SourceScorer ---------------------------------------------------------------------


def test_tier_scores() -> None:
    assert TIER_SCORES == {
        CredibilityTier.PRIMARY_SOURCE: 1.0,
        CredibilityTier.AUTHORITATIVE: 0.85,
        CredibilityTier.SECONDARY: 0.65,
        CredibilityTier.UNVERIFIED: 0.3,
        CredibilityTier.FLAGGED: 0.0,
    }
    assert (SourceScorer.authority_weight, SourceScorer.recency_weight,
            SourceScorer.relevance_weight, SourceScorer.credibility_weight) == (0.25, 0.20, 0.35, 0.20)


def test_source_score_by_hand() -> None:
    source = make_source(da=80, published=NOW - timedelta(days=90), relevance=0.9)
    s = SourceScorer().score(source, now=NOW)
    assert s.authority_score == pytest.approx(0.8)
    assert s.recency_score == pytest.approx(math.exp(-0.5))  # 0.60653
    assert s.relevance_component == pytest.approx(0.9)
    assert s.credibility_score == pytest.approx(0.85)
    # 0.8*0.25 + 0.60653*0.2 + 0.9*0.35 + 0.85*0.2 = 0.2 + 0.121306 + 0.315 + 0.17
    assert s.composite_score == pytest.approx(0.806306, abs=1e-6)


def test_unknown_date_scores_half() -> None:
    s = SourceScorer().score(make_source(da=50, published=None, relevance=0.6,
                                         tier=CredibilityTier.SECONDARY), now=NOW)
    assert s.recency_score == 0.5
    # 0.125 + 0.1 + 0.21 + 0.13
    assert s.composite_score == pytest.approx(0.565)


def test_recency_decays_over_180_days() -> None:
    scorer = SourceScorer()
    assert scorer.score(make_source(published=NOW), now=NOW).recency_score == pytest.approx(1.0)
    assert scorer.score(make_source(published=NOW - timedelta(days=180)), now=NOW).recency_score \
        == pytest.approx(math.exp(-1))
    assert scorer.score(make_source(published=NOW - timedelta(days=360)), now=NOW).recency_score \
        == pytest.approx(0.135335, abs=1e-6)


def test_future_date_counts_as_today_and_naive_dates_are_utc() -> None:
    scorer = SourceScorer()
    future = scorer.score(make_source(published=NOW + timedelta(days=30)), now=NOW)
    assert future.recency_score == 1.0
    naive = scorer.score(make_source(published=datetime(2025, 5, 2, 12, 0)), now=NOW)
    assert naive.recency_score == pytest.approx(math.exp(-30 / 180))


def test_best_source_scores_one() -> None:
    s = SourceScorer().score(make_source(da=100, published=NOW, relevance=1.0,
                                         tier=CredibilityTier.PRIMARY_SOURCE), now=NOW)
    assert s.composite_score == pytest.approx(1.0)


def test_out_of_range_inputs_are_clamped() -> None:
    scorer = SourceScorer()
    high = scorer.score(make_source(da=150, published=NOW, relevance=1.7,
                                    tier=CredibilityTier.PRIMARY_SOURCE), now=NOW)
    assert high.authority_score == 1.0
    assert high.relevance_component == 1.0
    assert high.composite_score == pytest.approx(1.0)
    low = scorer.score(make_source(da=-20, published=None, relevance=-0.5,
                                   tier=CredibilityTier.FLAGGED), now=NOW)
    assert (low.authority_score, low.relevance_component, low.credibility_score) == (0.0, 0.0, 0.0)
    assert low.composite_score == pytest.approx(0.1)  # only unknown recency: 0.5 * 0.2


def test_scored_source_keeps_source_fields_and_rescoring_replaces_scores() -> None:
    source = make_source(sid="abc", published=NOW)
    s = SourceScorer().score(source, now=NOW)
    assert isinstance(s, ScoredSource)
    assert s.model_dump(by_alias=False, include=set(Source.model_fields)) == source.model_dump(by_alias=False)
    wire = s.model_dump()
    assert wire["compositeScore"] == s.composite_score and wire["domainAuthority"] == 80
    again = SourceScorer().score(s, now=NOW + timedelta(days=180))
    assert again.recency_score == pytest.approx(math.exp(-1))
    assert again.id == "abc"


@given(da=st.integers(-50, 200), rel=st.floats(-2, 3, allow_nan=False),
       days=st.one_of(st.none(), st.integers(-1000, 10_000)), tier=st.sampled_from(list(CredibilityTier)))
def test_composite_always_in_unit_range(da: int, rel: float, days: int | None, tier: CredibilityTier) -> None:
    published = None if days is None else NOW - timedelta(days=days)
    s = SourceScorer().score(make_source(da=da, relevance=rel, published=published, tier=tier), now=NOW)
    for value in (s.authority_score, s.recency_score, s.relevance_component,
                  s.credibility_score, s.composite_score):
        assert 0.0 <= value <= 1.0


# -- ClaimScorer ---------------------------------------------------------------------------

SOURCES = [scored(0.8, "a"), scored(0.6, "b"), scored(0.5, "c"), scored(0.98, "d"), scored(0.96, "e")]


def claim(supporting: list[int], contradicting: list[int] | None = None) -> Claim:
    return Claim(id="cl1", text="Threads share memory.", supporting_indices=supporting,
                 contradicting_indices=contradicting or [])


def test_claim_support_and_bonus() -> None:
    c = ClaimScorer().score(claim([0, 1]), SOURCES)
    assert c.support_strength == pytest.approx(0.7)
    assert c.contradiction_flag is False
    assert c.confidence_score == pytest.approx(0.8)  # 0.7 + 2*0.05


def test_claim_contradiction_penalty() -> None:
    one = ClaimScorer().score(claim([0, 1], [2]), SOURCES)
    assert one.contradiction_flag is True
    assert one.confidence_score == pytest.approx(0.65)  # 0.8 - 0.15
    two = ClaimScorer().score(claim([0, 1], [2, 3]), SOURCES)
    assert two.confidence_score == pytest.approx(0.5)  # 0.8 - 0.30


def test_claim_bonus_capped_before_penalty() -> None:
    c = ClaimScorer().score(claim([3, 4], [2]), SOURCES)
    assert c.support_strength == pytest.approx(0.97)
    assert c.confidence_score == pytest.approx(0.85)  # min(0.97 + 0.1, 1.0) - 0.15


def test_claim_without_support_clamps_at_zero() -> None:
    c = ClaimScorer().score(claim([], [0]), SOURCES)
    assert c.support_strength == 0.0
    assert c.contradiction_flag is True
    assert c.confidence_score == 0.0
    assert ClaimScorer().score(claim([]), SOURCES).confidence_score == 0.0


def test_out_of_range_and_repeated_indices_are_ignored() -> None:
    c = ClaimScorer().score(claim([0, 5, -1, 0], [9, -2]), SOURCES)
    assert c.supporting_indices == [0]
    assert c.contradicting_indices == []
    assert c.support_strength == pytest.approx(0.8)
    assert c.confidence_score == pytest.approx(0.85)  # 0.8 + 1*0.05
    assert c.contradiction_flag is False


def test_claim_scorer_keeps_other_fields() -> None:
    original = claim([0]).model_copy(update={"checklist_item_ids": ["c1"]})
    c = ClaimScorer().score(original, SOURCES)
    assert (c.id, c.text, c.checklist_item_ids) == ("cl1", "Threads share memory.", ["c1"])
    assert original.confidence_score == 0.0  # not mutated


# -- JobConfidenceCalculator -------------------------------------------------------------


def scored_claims(*confidences: float, contradiction: bool = False) -> list[Claim]:
    return [Claim(id=f"cl{i}", text="x", supporting_indices=[0], confidence_score=c,
                  contradiction_flag=contradiction and i == 0) for i, c in enumerate(confidences)]


def test_job_confidence_scales_with_fewer_than_ten_sources() -> None:
    job = JobConfidenceCalculator().calculate(scored_claims(0.8, 0.6), [scored(0.5)] * 4)
    assert job.confidence == pytest.approx(0.28)  # 0.7 * 4/10
    assert (job.claim_count, job.source_count, job.has_contradictions) == (2, 4, False)


def test_job_confidence_with_ten_or_more_sources() -> None:
    job = JobConfidenceCalculator().calculate(scored_claims(0.8, 0.6, contradiction=True), [scored(0.5)] * 12)
    assert job.confidence == pytest.approx(0.7)
    assert job.has_contradictions is True
    assert job.model_dump() == {"confidence": job.confidence, "claimCount": 2, "sourceCount": 12,
                                "hasContradictions": True}


def test_job_confidence_without_claims_or_sources() -> None:
    assert JobConfidenceCalculator().calculate([], [scored(0.9)] * 10).confidence == 0.0
    assert JobConfidenceCalculator().calculate(scored_claims(0.9), []).confidence == 0.0

