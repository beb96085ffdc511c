from __future__ import annotations

import pytest

from services.digest.policy import (
    Quality,
    ineligible_reason,
    quality,
    quality_score,
    select,
)
from shared.research.envelope import CredibilityTier
from shared.research.events import DigestSkipReason
from tests.unit.digest.helpers import make_source

T = CredibilityTier


@pytest.mark.parametrize(
    ("tier", "authority", "relevance", "expected"),
    [
        (T.PRIMARY_SOURCE, 90, 0.9, Quality.HIGH),
        (T.AUTHORITATIVE, 70, 0.5, Quality.HIGH),  # 0.34 + 0.21 + 0.15 = 0.70: HIGH at the boundary
        (T.AUTHORITATIVE, 70, 0.49, Quality.MEDIUM),
        (T.AUTHORITATIVE, 70, 0.0, Quality.MEDIUM),  # 0.55
        (T.SECONDARY, 60, 0.5, Quality.MEDIUM),  # 0.59
        (T.UNVERIFIED, 30, 0.5, Quality.LOW),  # 0.36
        (T.UNVERIFIED, 50, 0.6, Quality.MEDIUM),  # 0.12 + 0.15 + 0.18 = 0.45: MEDIUM at the boundary
        (T.UNVERIFIED, 50, 0.59, Quality.LOW),
        (T.FLAGGED, 100, 1.0, Quality.LOW),  # flagged is never worth compressing
    ],
)
def test_quality_levels(tier: CredibilityTier, authority: int, relevance: float, expected: Quality) -> None:
    assert quality(make_source("x", tier=tier, authority=authority, relevance=relevance)) == expected


def test_quality_score_is_clamped() -> None:
    assert quality_score(make_source("x", tier=T.PRIMARY_SOURCE, authority=100, relevance=1.7)) == 1.0


def test_policy_off_skips_everything() -> None:
    big = make_source("x", chars=50_000, tier=T.PRIMARY_SOURCE, authority=100)
    assert ineligible_reason(big, policy="off", min_chars=10_000) == DigestSkipReason.POLICY_OFF


def test_policy_always_takes_any_source_with_text() -> None:
    tiny_flagged = make_source("x", chars=5, tier=T.FLAGGED, authority=0, relevance=0)
    assert ineligible_reason(tiny_flagged, policy="always", min_chars=10_000) is None
    assert ineligible_reason(make_source("", chars=0), policy="always", min_chars=10_000) == DigestSkipReason.NO_TEXT


def test_policy_auto_size_threshold_is_strictly_above_min_chars() -> None:
    at = make_source("x", chars=10_000)
    above = make_source("x", chars=10_001)
    assert ineligible_reason(at, policy="auto", min_chars=10_000) == DigestSkipReason.TOO_SHORT
    assert ineligible_reason(above, policy="auto", min_chars=10_000) is None
    assert ineligible_reason(at, policy="auto", min_chars=9_999) is None


def test_policy_auto_needs_high_or_medium_quality() -> None:
    low = make_source("x", chars=50_000, tier=T.UNVERIFIED, authority=30, relevance=0.5)
    medium = make_source("x", chars=50_000, tier=T.SECONDARY, authority=60, relevance=0.5)
    assert ineligible_reason(low, policy="auto", min_chars=10_000) == DigestSkipReason.LOW_QUALITY
    assert ineligible_reason(medium, policy="auto", min_chars=10_000) is None


def test_selection_ranks_by_quality_then_relevance_and_caps_the_batch() -> None:
    sources = [make_source("x", chars=20_000, tier=T.AUTHORITATIVE, authority=70, relevance=r / 10, sid=f"src-a{r}")
               for r in range(10)]
    sources.append(make_source("x", chars=20_000, tier=T.PRIMARY_SOURCE, authority=95, relevance=0.9, sid="src-primary"))
    sources.append(make_source("x", chars=500, sid="src-short"))
    sources.append(make_source("x", chars=20_000, tier=T.UNVERIFIED, authority=10, relevance=0.1, sid="src-low"))
    sel = select(sources, policy="auto", min_chars=10_000, max_sources=8)
    # HIGH before MEDIUM; within a level the higher score (here: relevance) first.
    assert [s.id for s in sel.chosen] == ["src-primary", "src-a9", "src-a8", "src-a7", "src-a6", "src-a5", "src-a4", "src-a3"]
    assert quality(sel.chosen[0]) == quality(sel.chosen[1]) == Quality.HIGH
    reasons = {s.id: r for s, r in sel.skipped}
    assert reasons == {"src-short": DigestSkipReason.TOO_SHORT, "src-low": DigestSkipReason.LOW_QUALITY,
                       "src-a2": DigestSkipReason.OVER_LIMIT, "src-a1": DigestSkipReason.OVER_LIMIT,
                       "src-a0": DigestSkipReason.OVER_LIMIT}
    assert len(sel.chosen) + len(sel.skipped) == len(sources)
