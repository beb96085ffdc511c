"""DigestPayload against the reference example of the digest/v1 format, field for field."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from shared.research.envelope import DigestPayload, Source

# The reference digest/v1 example (a "DigestPayload Structure" section), verbatim.
REFERENCE_EXAMPLE = """{
  "version": "1.0",
  "content_type": "digest/v1",
  "query_hash": "ab12cd34",
  "summary": "Condensed summary of the source...",
  "key_points": [
    "First key insight from the document",
    "Second key insight with supporting detail"
  ],
  "evidence_snippets": [
    {
      "text": "Exact quote from the source document...",
      "locator": "char:1500-1650",
      "relevance_score": 0.85
    }
  ],
  "original_chars": 25000,
  "digest_chars": 2500,
  "compression_ratio": 0.10,
  "source_text_hash": "sha256:abc123..."
}"""


def test_round_trip_field_for_field() -> None:
    expected = json.loads(REFERENCE_EXAMPLE)
    payload = DigestPayload.model_validate_json(REFERENCE_EXAMPLE)
    emitted = json.loads(payload.model_dump_json())
    assert emitted == expected
    assert list(emitted) == list(expected)  # same fields, same order
    assert list(emitted["evidence_snippets"][0]) == list(expected["evidence_snippets"][0])
    assert DigestPayload.model_validate_json(payload.model_dump_json()) == payload


@pytest.mark.parametrize(
    "change",
    [{"content_type": "digest/v2"}, {"surprise": 1}, {"evidence_snippets": [{"text": "x", "locator": "char:0-1"}]}],
)
def test_rejects_what_the_seed_does_not_define(change: dict) -> None:
    data = {**json.loads(REFERENCE_EXAMPLE), **change}
    with pytest.raises(ValidationError):
        DigestPayload.model_validate(data)


def test_missing_fields_are_errors() -> None:
    data = json.loads(REFERENCE_EXAMPLE)
    for field in ("query_hash", "summary", "key_points", "evidence_snippets", "original_chars",
                  "digest_chars", "compression_ratio", "source_text_hash"):
        with pytest.raises(ValidationError):
            DigestPayload.model_validate({k: v for k, v in data.items() if k != field})


def test_downstream_detects_digest_v1_on_a_source() -> None:
    payload = DigestPayload.model_validate_json(REFERENCE_EXAMPLE)
    source = Source(id="src-1", text="excerpt", url="u", title="t", relevance_score=0.5,
                    credibility_tier="SECONDARY", domain_authority=50, retrieval_method="web",
                    text_hash="sha256-abc", text_chars=25000, digest=payload)
    wire = json.loads(source.model_dump_json())
    again = Source.model_validate(wire)
    assert again.digest is not None and again.digest.content_type == "digest/v1"
    assert wire["digest"]["content_type"] == "digest/v1"  # snake_case inside the camelCase source
