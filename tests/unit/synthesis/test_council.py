"""The council's configuration and the plan's reviews carried to the report; the
passages a source's verification checks."""

from __future__ import annotations

import pytest

from shared.stores.archive import passages_to_verify
from shared.llm.council import brief_review_notes, brief_reviews_from_notes, parse_members
from shared.research.envelope import Citation, DigestPayload, EvidenceSnippet
from shared.platform.errors import ConfigurationError
from shared.research.events import CouncilReview


def test_members_are_provider_model_pairs() -> None:
    assert parse_members("") == []
    assert parse_members(" anthropic:claude-x , openai:gpt-y,anthropic:claude-x") == [
        ("anthropic", "claude-x"), ("openai", "gpt-y")]
    assert parse_members("openai:org/model:latest") == [("openai", "org/model:latest")]
    for bad in ("claude-x", "google:gemini", "anthropic:", ":gpt"):
        with pytest.raises(ConfigurationError, match="RESEARCH_COUNCIL_MODELS"):
            parse_members(bad)


def test_plan_reviews_travel_in_the_envelope_notes() -> None:
    reviews = [CouncilReview(subject="brief", model="anthropic:a", agree=False, reasons=["misses cost"]),
               CouncilReview(subject="brief", model="openai:b", agree=None, error="timed out")]
    notes = ["deadline reached", *brief_review_notes(reviews), "council:brief:{not json"]
    assert brief_reviews_from_notes(notes) == reviews


def test_verification_checks_digest_snippets_and_claim_quotes_once() -> None:
    snippet = EvidenceSnippet(text="Lights flash.", locator="char:0-13", relevance_score=0.5)
    digest = DigestPayload(query_hash="q", summary="s", key_points=[], evidence_snippets=[snippet],
                           original_chars=13, digest_chars=13, compression_ratio=1.0, source_text_hash="sha256:x")
    claims = [
        {"id": "cl1", "citations": [Citation(source_id="s1", locator="char:0-13", quote="Lights flash.").model_dump(),
                                    Citation(source_id="s2", locator="char:5-9", quote="else").model_dump()]},
        {"id": "cl2", "citations": [Citation(source_id="s1", locator="char:20-30", quote="Keepers go.").model_dump()]},
    ]
    got = passages_to_verify(digest, claims, "s1")
    assert [(p.locator, p.text) for p in got] == [("char:0-13", "Lights flash."), ("char:20-30", "Keepers go.")]
    assert [(p.locator, p.text) for p in passages_to_verify(None, claims, "s2")] == [("char:5-9", "else")]
    assert passages_to_verify(None, claims, "s3") == []
