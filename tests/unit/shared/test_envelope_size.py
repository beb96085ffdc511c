"""The envelope's worst case under the default source caps fits a NATS message."""

from __future__ import annotations

from shared.research.envelope import (
    EXCERPT_MAX_CHARS,
    Claim,
    CredibilityTier,
    DigestPayload,
    EvidenceSnippet,
    JobEnvelope,
    ResearchRequest,
    RetrievalMethod,
    ScoredSource,
    Source,
    utcnow,
)
from shared.settings import DigestSettings
from shared.subjects import Stage

NATS_MAX_PAYLOAD = 1024 * 1024


def _source(n: int, settings: DigestSettings) -> Source:
    snippet = "é" * settings.digest_evidence_max_chars  # 2 bytes per char in UTF-8
    digest = DigestPayload(
        query_hash="q" * 16, summary="s" * 1_500, key_points=["k" * 200] * 5,
        evidence_snippets=[EvidenceSnippet(text=snippet, locator="page:123:char:1000000-1000400", relevance_score=0.5)
                           for _ in range(settings.digest_max_evidence_snippets)],
        original_chars=10**6, digest_chars=4_000, compression_ratio=0.004, source_text_hash="sha256-" + "a" * 64,
    )
    return Source(
        id=f"src-{n:04d}-" + "x" * 20, text="t" * EXCERPT_MAX_CHARS, url="https://example.org/" + "p" * 200,
        title="T" * 200, relevance_score=0.5, credibility_tier=CredibilityTier.UNVERIFIED, domain_authority=50,
        retrieval_method=RetrievalMethod.WEB, text_hash="sha256-" + "a" * 64, text_chars=10**6,
        metadata={"doi": "10.1000/" + "d" * 40, "journal": "J" * 100, "authors": "A" * 300},
        matched_spans=[(0, 100)] * 5, digest=digest, found_by=["q" * 100] * 3,
    )


def test_the_largest_envelope_fits_a_nats_message() -> None:
    settings = DigestSettings()
    sources = [_source(n, settings) for n in range(settings.research_max_sources_per_job)]
    scored = [ScoredSource(**s.model_dump(), authority_score=0.5, recency_score=0.5, relevance_component=0.5,
                           credibility_score=0.5, composite_score=0.5) for s in sources]
    claims = [Claim(id=f"k{n}", text="c" * 400, supporting_indices=list(range(5))) for n in range(100)]
    env = JobEnvelope(job_id="j", user_id="u", stage=Stage.SYNTHESIZE, request=ResearchRequest(question="q" * 4_000),
                      deadline_at=utcnow(), sources=sources, scored_sources=scored, claims=claims,
                      queries_run=["q" * 200] * 200)
    size = len(env.model_dump_json().encode())
    assert size < NATS_MAX_PAYLOAD, f"{size} bytes"
