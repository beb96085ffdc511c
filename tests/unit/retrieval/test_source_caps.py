"""The retrieval stage bounds how many sources a job carries."""

from __future__ import annotations

import pytest

from services.retrieval import service
from shared.research.envelope import CredibilityTier, RetrievalMethod, Source


def _src(n: int, relevance: float) -> Source:
    return Source(id=f"s{n:03d}", text="x", url=f"https://example.org/{n}", title=str(n), relevance_score=relevance,
                  credibility_tier=CredibilityTier.UNVERIFIED, domain_authority=10, retrieval_method=RetrievalMethod.WEB,
                  text_hash="sha256-" + "0" * 64, text_chars=1)


@pytest.fixture
def caps(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service.settings, "research_max_new_sources_per_iteration", 3)
    monkeypatch.setattr(service.settings, "research_max_sources_per_job", 5)


def test_keeps_the_most_relevant_new_sources(caps: None) -> None:
    new = [_src(n, r) for n, r in enumerate([0.1, 0.9, 0.5, 0.7, 0.2])]
    assert [s.id for s in service._cap_new_sources(new, known=0)] == ["s001", "s003", "s002"]


def test_the_job_cap_counts_sources_already_found(caps: None) -> None:
    new = [_src(n, 1.0 - n / 10) for n in range(4)]
    assert [s.id for s in service._cap_new_sources(new, known=4)] == ["s000"]
    assert service._cap_new_sources(new, known=5) == []
    assert service._cap_new_sources(new[:2], known=0) == new[:2]
