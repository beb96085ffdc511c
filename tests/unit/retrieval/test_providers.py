"""Fan-out, provider selection, per-provider queries and cross-provider merging (pure
logic: the searches here are coroutines, the real providers are tested against fakes)."""

from __future__ import annotations

import asyncio

import pytest

from services.retrieval.providers import (
    Outcome,
    ProviderUnavailable,
    QueryRejected,
    Search,
    fan_out,
    queries_for,
    rank_relevance,
    score_relevance,
    select_providers,
)
from services.retrieval.merge import merge_sources
from shared.research.envelope import CredibilityTier, RetrievalMethod, SearchQuery, Source
from shared.platform.errors import PermanentError, TransientError

WEB, PUBMED, RAG = RetrievalMethod.WEB, RetrievalMethod.PUBMED, RetrievalMethod.RAG


def src(url: str, method: RetrievalMethod = WEB, *, rel: float = 0.5, text_hash: str = "sha256-" + "1" * 64,
        found_by: list[str] | None = None, **metadata: str) -> Source:
    return Source(
        id="src-" + str(abs(hash((url, method))))[:12], text="t", url=url, title=url, relevance_score=rel,
        credibility_tier=CredibilityTier.UNVERIFIED, domain_authority=30, retrieval_method=method,
        text_hash=text_hash, text_chars=1, metadata=metadata, found_by=found_by or ["q"],
    )


# -- fan-out -------------------------------------------------------------------------------


async def test_every_search_runs_concurrently_within_the_bound() -> None:
    in_flight = peak = 0

    def make(value: int) -> Search:
        async def run() -> int:
            nonlocal in_flight, peak
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.05)
            in_flight -= 1
            return value

        return Search(WEB if value % 2 else PUBMED, f"q{value}", run)

    outcomes = await fan_out([make(i) for i in range(12)], concurrency=5, timeout_s=5, retries=0)
    assert [o.value for o in outcomes] == list(range(12))  # input order
    assert all(o.ok for o in outcomes)
    assert peak == 5


async def test_a_provider_down_does_not_touch_the_others() -> None:
    calls: list[str] = []

    def down(q: str) -> Search:
        async def run() -> list[str]:
            calls.append(q)
            raise ProviderUnavailable("Tavily rejected TAVILY_API_KEY (401)")

        return Search(WEB, q, run)

    def up(q: str) -> Search:
        async def run() -> list[str]:
            await asyncio.sleep(0.01)
            return [q]

        return Search(PUBMED, q, run)

    reported = []

    async def on_outcome(o: Outcome) -> None:
        reported.append(o)

    outcomes = await fan_out([down("a"), down("b"), up("a"), up("b"), down("c")], concurrency=1, timeout_s=5, retries=3,
                             on_outcome=on_outcome)
    assert [o.ok for o in outcomes] == [False, False, True, True, False]
    assert calls == ["a"]  # once the provider refused the job, its other searches are not sent
    assert [o.skipped for o in outcomes] == [False, True, False, False, True]
    assert len(reported) == 5


async def test_transient_errors_are_retried_honouring_retry_after() -> None:
    attempts = 0

    async def flaky() -> str:
        nonlocal attempts
        attempts += 1
        if attempts < 3:
            raise TransientError("429", retry_after_s=0.01)
        return "ok"

    [outcome] = await fan_out([Search(PUBMED, "q", flaky)], concurrency=2, timeout_s=5, retries=2)
    assert outcome.ok and outcome.value == "ok" and outcome.attempts == 3


async def test_exhausted_retries_and_timeouts_are_outcomes_not_exceptions() -> None:
    async def always_429() -> str:
        raise TransientError("429", retry_after_s=0)

    async def slow() -> str:
        await asyncio.sleep(5)
        return "late"

    async def bad_query() -> str:
        raise QueryRejected("400")

    outcomes = await fan_out(
        [Search(WEB, "a", always_429), Search(PUBMED, "b", slow), Search(WEB, "c", bad_query)],
        concurrency=3, timeout_s=0.1, retries=1,
    )
    assert [type(o.error) for o in outcomes] == [TransientError, TransientError, QueryRejected]
    assert "longer than 0.1s" in str(outcomes[1].error)


async def test_cancelling_the_caller_cancels_every_search() -> None:
    cancelled = 0

    async def forever() -> None:
        nonlocal cancelled
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled += 1
            raise

    task = asyncio.create_task(fan_out([Search(WEB, str(i), forever) for i in range(3)], concurrency=3, timeout_s=120, retries=0))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cancelled == 3


# -- selection and queries ---------------------------------------------------------------------


def test_selection_defaults_to_every_configured_provider() -> None:
    status = {RAG: None, WEB: "set TAVILY_API_KEY", PUBMED: None}
    assert select_providers(None, status) == ([RAG, PUBMED], [])


def test_a_requested_unconfigured_provider_is_reported() -> None:
    status = {RAG: None, WEB: "set TAVILY_API_KEY", PUBMED: None}
    active, problems = select_providers([WEB, PUBMED], status)
    assert active == [PUBMED]
    assert problems == ["web: requested but not configured (set TAVILY_API_KEY)"]


def test_no_runnable_provider_is_a_permanent_error() -> None:
    status = {RAG: "no corpus is indexed", WEB: "set TAVILY_API_KEY", PUBMED: None}
    with pytest.raises(PermanentError, match="web: requested but not configured"):
        select_providers([WEB], status)
    with pytest.raises(PermanentError, match="no search provider is configured.*rag: no corpus"):
        select_providers(None, {RAG: "no corpus is indexed", WEB: "set TAVILY_API_KEY", PUBMED: "set NCBI_EMAIL"})


def test_queries_per_provider_with_fallback_to_rag_queries() -> None:
    plan = [SearchQuery(provider=RAG, text="bee ventilation"), SearchQuery(provider=RAG, text="Hive CO2"),
            SearchQuery(provider=PUBMED, text="apis mellifera thermoregulation")]
    assert queries_for(PUBMED, plan) == ["apis mellifera thermoregulation"]
    assert queries_for(WEB, plan) == ["bee ventilation", "Hive CO2"]  # no web queries yet: the RAG ones
    assert queries_for(WEB, plan, already_run=["hive  co2"]) == ["bee ventilation"]


def test_relevance_scales() -> None:
    assert score_relevance([0.4, 0.8, 0.2]) == [0.5, 1.0, 0.25]
    assert score_relevance([0.0, 0.0]) == [0.0, 0.0]
    assert rank_relevance(4) == [1.0, 0.875, 0.75, 0.625]


# -- merging ---------------------------------------------------------------------------


def test_same_page_from_two_queries_is_one_source() -> None:
    a = src("https://Example.org/bees/?utm_source=news#top", rel=0.4, found_by=["q1"])
    b = src("https://example.org/bees", rel=0.9, found_by=["q2"])
    [merged] = merge_sources([], [a, b])
    assert merged.id == a.id and merged.found_by == ["q1", "q2"] and merged.relevance_score == 0.9


def test_pubmed_record_and_web_page_at_its_doi_are_one_source() -> None:
    web = src("https://doi.org/10.1000/BEES.2021.1", rel=1.0, found_by=["web q"])
    pubmed = src("https://pubmed.ncbi.nlm.nih.gov/31000001/", PUBMED, rel=0.75, text_hash="sha256-" + "2" * 64,
                 found_by=["pubmed q"], pmid="31000001", doi="10.1000/bees.2021.1")
    other = src("https://example.org/other")
    merged = merge_sources([web], [pubmed, other])
    assert len(merged) == 2
    work = next(s for s in merged if s.url != "https://example.org/other")
    # PubMed's record wins (structured metadata), the existing id stays, relevance is the best.
    assert work.retrieval_method is PUBMED and work.id == web.id
    assert work.metadata["pmid"] == "31000001" and work.relevance_score == 1.0
    assert work.found_by == ["web q", "pubmed q"]


def test_same_pmid_from_two_queries_is_one_source() -> None:
    a = src("https://pubmed.ncbi.nlm.nih.gov/7/", PUBMED, found_by=["q1"], pmid="7")
    b = src("https://pubmed.ncbi.nlm.nih.gov/7/", PUBMED, found_by=["q2"], pmid="7")
    assert len(merge_sources([a], [b])) == 1


def test_a_reindexed_document_replaces_the_old_text() -> None:
    old = src("corpus://docs/bees.md", RAG, rel=0.9, found_by=["q1"])
    new = src("corpus://docs/bees.md", RAG, rel=0.4, text_hash="sha256-" + "3" * 64, found_by=["q2"])
    [merged] = merge_sources([old], [new])
    # The old spans and digest point into a text that is gone: the new record wins whole.
    assert merged.text_hash == new.text_hash and merged.relevance_score == 0.4
    assert merged.id == old.id and merged.found_by == ["q1", "q2"]


def test_a_page_found_again_keeps_the_text_first_read() -> None:
    old = src("https://example.org/bees", rel=0.4, found_by=["q1"])
    new = src("https://example.org/bees", rel=0.9, text_hash="sha256-" + "3" * 64, found_by=["q2"])
    [merged] = merge_sources([old], [new])
    assert merged.text_hash == old.text_hash and merged.relevance_score == 0.9
    assert merged.found_by == ["q1", "q2"]


def test_a_more_relevant_pass_brings_its_excerpt_and_its_offset() -> None:
    old = src("https://example.org/bees", rel=0.4, found_by=["q1"]).model_copy(
        update={"text": "first", "excerpt_start": 0, "text_chars": 200, "matched_spans": [(0, 5)]})
    new = src("https://example.org/bees", rel=0.8, found_by=["q2"]).model_copy(
        update={"text": "later", "excerpt_start": 100, "text_chars": 200, "matched_spans": [(100, 105)]})
    [merged] = merge_sources([old], [new])
    assert (merged.text, merged.excerpt_start) == ("later", 100)
    assert merged.matched_spans == [(0, 5), (100, 105)] and merged.relevance_score == 0.8
