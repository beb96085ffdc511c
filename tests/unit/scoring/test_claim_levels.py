"""What the claim check records: every refused claim says which check refused it (its
category), and every kept claim how far it was checked (its level), which survives
scoring and renumbering."""

from __future__ import annotations

from datetime import UTC, datetime

from services.scoring.claims import extract_claims
from services.scoring.engine import ClaimScorer, SourceScorer
from services.scoring.model_claims import build_snippets
from services.scoring.claim_checks import Verifier, check_model_claims, verify_offline_claims
from services.scoring.schemas import ClaimDraft
from services.scoring.service import rank_claims
from shared.research.envelope import (
    ChecklistItem,
    CredibilityTier,
    DigestPayload,
    EvidenceSnippet,
    RetrievalMethod,
    ScoredSource,
    Source,
)
from shared.research.text import canonicalize, sentence_spans, text_hash

NOW = datetime(2025, 6, 1, tzinfo=UTC)
QUESTION = "How did automation change lighthouse keeping?"
TEXT = canonicalize("The last keeper left Fair Isle South in 1998, after 106 years of service. "
                    "Automation replaced resident keepers with remote monitoring from Edinburgh.")
LEFT, AUTOMATION = (TEXT[s:e] for s, e in sentence_spans(TEXT))


def _world(snippet: str | None = None) -> tuple[list[ScoredSource], Verifier]:
    snippets = [EvidenceSnippet(text=TEXT[s:e], locator=f"char:{s}-{e}", relevance_score=0.7)
                for s, e in sentence_spans(TEXT)]
    if snippet is not None:  # a digest that misquotes its source
        snippets[0] = snippets[0].model_copy(update={"text": snippet})
    digest = DigestPayload(query_hash="0123abcd", summary="About lighthouses.", key_points=[],
                           evidence_snippets=snippets,
                           original_chars=len(TEXT), digest_chars=len(TEXT), compression_ratio=1.0,
                           source_text_hash=text_hash(TEXT).replace("sha256-", "sha256:"))
    source = Source(id="lh", text=TEXT, url="https://example.org/lh", title="Lighthouses", relevance_score=0.8,
                    credibility_tier=CredibilityTier.SECONDARY, domain_authority=60,
                    retrieval_method=RetrievalMethod.RAG, text_hash=text_hash(TEXT), text_chars=len(TEXT),
                    digest=digest)
    scored = SourceScorer().score_all([source], now=NOW)
    return scored, Verifier(scored, {s.text_hash: s.text for s in scored}, min_jaccard=0.8, min_support=0.6)


def _draft(text: str, *supporting: str) -> ClaimDraft:
    return ClaimDraft(text=text, supporting=list(supporting))


def test_every_refusal_says_which_check_refused_it() -> None:
    scored, verifier = _world()
    kept, rejected = check_model_claims([
        _draft("", "s1.e1"),
        _draft("The last keeper left. " * 30, "s1.e1"),
        _draft("The last keeper left Fair Isle South in 1998."),
        _draft("The last keeper left Fair Isle South in 1998.", "s1.e9"),
        _draft("The last keeper left Fair Isle South in 2004.", "s1.e1"),
    ], build_snippets(scored), verifier, [], iteration=0)
    assert kept == []
    assert [r.category for r in rejected] == ["form", "form", "citation", "citation", "number"]

    scored, verifier = _world(snippet="Keepers were paid in gold coins by the king of Norway.")
    _, rejected = check_model_claims([_draft("Keepers were paid in gold coins by the king of Norway.", "s1.e1")],
                                     build_snippets(scored), verifier, [], iteration=0)
    assert [r.category for r in rejected] == ["quote"]


def test_a_kept_claim_is_quoted_when_it_is_its_quote_and_supported_otherwise() -> None:
    scored, verifier = _world()
    kept, rejected = check_model_claims([
        _draft(LEFT, "s1.e1"),
        _draft("Automation replaced resident keepers with remote monitoring.", "s1.e2"),
    ], build_snippets(scored), verifier, [], iteration=0)
    assert rejected == []
    assert [c.level for c in kept] == ["quoted", "supported"]
    # Scoring and renumbering keep it.
    ranked = rank_claims(ClaimScorer().score_all(kept, scored))
    assert [(c.id, c.level) for c in ranked] == [("cl1", "quoted"), ("cl2", "supported")]


def test_offline_claims_are_quoted_and_a_forged_one_is_refused_with_its_category() -> None:
    scored, verifier = _world()
    checklist = [ChecklistItem(id="c1", description="How automated lighthouses are monitored")]
    offline = extract_claims(QUESTION, [QUESTION], checklist, scored)
    kept, rejected = verify_offline_claims(offline, verifier, iteration=0)
    assert rejected == [] and kept and all(c.level == "quoted" for c in kept)
    forged = offline[0].model_copy(update={"citations": [offline[0].citations[0].model_copy(
        update={"source_id": "elsewhere"})]})
    _, rejected = verify_offline_claims([forged], verifier, iteration=1)
    assert [(r.category, r.engine) for r in rejected] == [("citation", "offline")]
