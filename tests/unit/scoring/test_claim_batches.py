"""The claim step and coverage in a small context window: fewer sources (or claims) a
call, every prompt fitting the window with room for the answer, every source still
shown once; a batch the server refuses for length split in two and asked again.
Through the real openai SDK against the loopback fake, which refuses, as vLLM does, a
request longer than its window."""

from __future__ import annotations

import re
from typing import Any

from services.scoring.coverage import judge_coverage, merge_judgements
from services.scoring.model_claims import MAX_SOURCES_PER_CALL, extract_verified_claims
from services.scoring.claim_checks import Verifier
from services.scoring.schemas import ItemJudgement
from services.scoring.engine import SourceScorer
from shared.llm.engine import make_engine
from shared.research.envelope import (
    ChecklistItem,
    Citation,
    Claim,
    CoverageStatus,
    CredibilityTier,
    DigestPayload,
    EvidenceSnippet,
    RetrievalMethod,
    ScoredSource,
    Source,
    Usage,
)
from shared.research.text import canonicalize, sentence_spans, text_hash
from shared.settings import StageSettings
from tests.fakes.openai import OpenAIFake

QUESTION = "How did automation change lighthouse keeping?"
CHECKLIST = [ChecklistItem(id="c1", description="When lighthouse keepers left"),
             ChecklistItem(id="c2", description="How automated lighthouses are monitored")]


def _source(n: int) -> Source:
    text = canonicalize(" ".join(
        f"Station {n} record {k}: the keeper of lighthouse number {n} logged the lamp, the fog signal, the weather "
        f"and the supply boat's arrival in the station book, entry {k} of the year {1950 + k}." for k in range(8)))
    snippets = [EvidenceSnippet(text=text[s:e], locator=f"char:{s}-{e}", relevance_score=0.7)
                for s, e in sentence_spans(text)][:5]
    digest = DigestPayload(query_hash="0123abcd", summary=f"Station {n}'s log of its keepers. " * 8,
                           key_points=["keepers", "automation"], evidence_snippets=snippets,
                           original_chars=len(text), digest_chars=len(text), compression_ratio=1.0,
                           source_text_hash=text_hash(text).replace("sha256-", "sha256:"))
    return Source(id=f"src{n}", text=text, url=f"https://example.org/{n}", title=f"Station {n}", relevance_score=0.8,
                  credibility_tier=CredibilityTier.SECONDARY, domain_authority=60,
                  retrieval_method=RetrievalMethod.RAG, text_hash=text_hash(text), text_chars=len(text), digest=digest)


def _scored(n: int) -> tuple[list[ScoredSource], Verifier]:
    from datetime import UTC, datetime

    scored = SourceScorer().score_all([_source(i) for i in range(n)], now=datetime(2025, 6, 1, tzinfo=UTC))
    return scored, Verifier(scored, {s.text_hash: s.text for s in scored}, min_jaccard=0.8, min_support=0.6)


def _llm(fake: OpenAIFake, window: int) -> Any:
    settings = StageSettings(**{k.lower(): v for k, v in {
        **fake.env(), "OPENAI_MODEL": "qwen3:4b", "LLM_MAX_RETRIES": "0", "LLM_TIMEOUT_S": "30",
        "LLM_CONTEXT_TOKENS": str(window)}.items()})
    return make_engine(settings).bind("score", Usage())


def _shown(fake: OpenAIFake) -> list[str]:
    """The source labels of every delivered claims request, in order of requests."""
    return [label for r in fake.delivered if r.forced_tool == "record_claims"
            for label in re.findall(r'<source id="(s\d+)"', r.prompt)]


async def test_claims_calls_take_fewer_sources_to_fit_a_small_window() -> None:
    scored, verifier = _scored(10)
    with OpenAIFake(context_tokens=4096) as fake:
        outcome = await extract_verified_claims(QUESTION, [QUESTION], CHECKLIST, scored, _llm(fake, 4096), verifier,
                                                iteration=0)
        assert fake.refused_for_length == 0
        assert all(p + c <= 4096 for p, c in fake.prompt_sizes)
        calls = len(fake.delivered)
        shown = _shown(fake)
    assert calls > -(-10 // MAX_SOURCES_PER_CALL)  # more calls than the default packing's 2
    assert sorted(shown, key=lambda s: int(s[1:])) == [f"s{i + 1}" for i in range(10)]  # each source once
    assert outcome.engine == "model" and not any("offline" in n for n in outcome.notes)


async def test_a_large_window_keeps_the_default_batches() -> None:
    scored, verifier = _scored(10)
    with OpenAIFake() as fake:
        await extract_verified_claims(QUESTION, [QUESTION], CHECKLIST, scored, _llm(fake, 200_000), verifier,
                                      iteration=0)
        assert len(fake.delivered) == 2


async def test_a_batch_the_server_refuses_for_length_is_split_and_asked_again() -> None:
    # The operator set a window larger than the server's: the server refuses, the
    # step splits the batch in halves until each is accepted; no source goes offline.
    scored, verifier = _scored(8)
    with OpenAIFake(context_tokens=4096) as fake:
        outcome = await extract_verified_claims(QUESTION, [QUESTION], CHECKLIST, scored, _llm(fake, 32_768),
                                                verifier, iteration=0)
        assert fake.refused_for_length >= 1
        shown = _shown(fake)
        accepted = [p + c for (p, c), r in zip(fake.prompt_sizes, fake.requests) if r.status == 200]
    assert sorted(shown, key=lambda s: int(s[1:])) == [f"s{i + 1}" for i in range(8)]
    assert all(total <= 4096 for total in accepted)
    assert outcome.engine == "model"


def _claims(n: int) -> list[Claim]:
    return [Claim(id=f"cl{i + 1}", text=f"Lighthouse keepers left station {i} in {1950 + i} after automation of the "
                  f"lamp and the fog signal, which were then monitored remotely from the coast.",
                  supporting_indices=[0], citations=[Citation(source_id="src0", locator="char:0-10", quote="x")],
                  confidence_score=0.5 + i / 100) for i in range(n)]


async def test_coverage_shares_many_claims_among_calls_that_fit() -> None:
    with OpenAIFake(context_tokens=2048) as fake:
        checklist, notes = await judge_coverage(QUESTION, CHECKLIST, _claims(30), _llm(fake, 2048))
        coverage_calls = [r for r in fake.delivered if r.forced_tool == "record_coverage"]
        assert len(coverage_calls) > 1 and fake.refused_for_length == 0
        assert all(p + c <= 2048 for p, c in fake.prompt_sizes)
        ids = [i for r in coverage_calls for i in re.findall(r'<claim id="(cl\d+)"', r.prompt)]
    assert sorted(ids, key=lambda s: int(s[2:])) == [f"cl{i + 1}" for i in range(30)]
    assert notes == [] and len(checklist) == 2


def test_an_item_is_as_covered_as_its_best_share_says() -> None:
    merged = merge_judgements([
        [ItemJudgement(item_id="c1", status="open", reason="none here"),
         ItemJudgement(item_id="c2", status="partial", claim_ids=["cl2"], reason="some")],
        [ItemJudgement(item_id="c1", status="satisfied", claim_ids=["cl7"], reason="year given"),
         ItemJudgement(item_id="c2", status="partial", claim_ids=["cl9"], reason="more")],
    ])
    by_id = {j.item_id: j for j in merged}
    assert (by_id["c1"].status, by_id["c1"].claim_ids, by_id["c1"].reason) == ("satisfied", ["cl7"], "year given")
    assert by_id["c2"].status == "partial" and by_id["c2"].claim_ids == ["cl2", "cl9"]
    assert CoverageStatus.SATISFIED  # the rule then checks each named claim (services.scoring.coverage)
