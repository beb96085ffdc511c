"""The search cache in JetStream KV (real nats-server): keys, round trips, TTL, and a
repeated web search answered from the cache without a second paid request."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import nats
import pytest
from nats.js import JetStreamContext

from services.retrieval.providers import cached_search
from services.retrieval.search_cache import SearchCache, cache_key
from services.retrieval.web import WebProvider
from shared import subjects
from shared.stores import topology
from shared.research.envelope import CredibilityTier, RetrievalMethod, Source
from shared.settings import StageSettings
from shared.stores.textstore import TextStore
from tests.fakes.tavily import FakeTavily, Page


def a_source(url: str = "https://example.org/a") -> Source:
    return Source(
        id="src-" + uuid.uuid4().hex[:12], text="Bees ventilate hives.", url=url, title="Bees",
        relevance_score=0.7, credibility_tier=CredibilityTier.UNVERIFIED, domain_authority=30,
        retrieval_method=RetrievalMethod.WEB, text_hash="sha256-" + "0" * 64, text_chars=21,
        metadata={"full_text": "tavily_raw"}, matched_spans=[(0, 21)], found_by=["bees"],
    )


def test_key_is_the_query_identity_and_parameters() -> None:
    base = cache_key("web", "How do bees ventilate?", {"max_results": 10})
    assert base == cache_key("web", "  how do BEES   ventilate? ", {"max_results": 10})
    assert base != cache_key("pubmed", "How do bees ventilate?", {"max_results": 10})
    assert base != cache_key("web", "How do bees ventilate?", {"max_results": 20})
    assert base != cache_key("web", "How do wasps ventilate?", {"max_results": 10})
    assert base.startswith("web.") and all(c.isalnum() or c == "." for c in base)


async def test_round_trip_and_get_or_search(js: JetStreamContext) -> None:
    cache = SearchCache(js)
    key = cache_key("web", f"bees {uuid.uuid4()}", {})
    assert await cache.get(key) is None
    calls = 0

    async def search() -> list[Source]:
        nonlocal calls
        calls += 1
        return [a_source()]

    first, hit1 = await cache.get_or_search(key, search)
    second, hit2 = await cache.get_or_search(key, search)
    assert (hit1, hit2, calls) == (False, True, 1)
    assert second == first


async def test_errors_are_not_cached(js: JetStreamContext) -> None:
    cache = SearchCache(js)
    key = cache_key("web", f"bees {uuid.uuid4()}", {})

    async def failing() -> list[Source]:
        raise RuntimeError("search failed")

    with pytest.raises(RuntimeError):
        await cache.get_or_search(key, failing)
    assert await cache.get(key) is None


async def test_disabled_cache_always_searches(js: JetStreamContext) -> None:
    cache = SearchCache(js, enabled=False)
    key = cache_key("web", "bees", {})
    await cache.put(key, [a_source()])
    assert await cache.get(key) is None


async def test_entries_expire_after_the_ttl(nats_url: str) -> None:
    nc = await nats.connect(nats_url)
    try:
        stream = nc.jetstream()
        await topology.ensure_retrieval_buckets(stream, cache_ttl_s=3_600)
        # A changed TTL setting is applied to the existing bucket.
        await topology.ensure_retrieval_buckets(stream, cache_ttl_s=1)
        info = await stream.stream_info(f"KV_{subjects.SEARCH_CACHE_BUCKET}")
        assert info.config.max_age == 1
        cache = SearchCache(stream)
        key = cache_key("web", f"bees {uuid.uuid4()}", {})
        await cache.put(key, [a_source()])
        assert await cache.get(key) is not None
        await asyncio.sleep(2.5)
        assert await cache.get(key) is None
    finally:
        await topology.ensure_retrieval_buckets(nc.jetstream(), cache_ttl_s=3_600)
        await nc.close()


@pytest.fixture
def tavily() -> Iterator[FakeTavily]:
    pages = [Page("hives", "Hive ventilation", "Bees fan their wings to ventilate the hive.", url="https://bees.example.org/hives")]
    with FakeTavily(pages) as fake:
        yield fake


async def test_repeated_web_search_is_answered_by_the_cache(js: JetStreamContext, tavily: FakeTavily) -> None:
    settings = StageSettings(tavily_api_key="tvly-test-key", tavily_base_url=tavily.base_url)
    from services.retrieval.web import make_tavily_client

    provider = WebProvider(make_tavily_client(settings), settings)
    cache, hits = SearchCache(js), []
    query = f"bees ventilate {uuid.uuid4().hex[:6]}"
    try:
        first = await cached_search(provider, query, texts=TextStore(js), cache=cache, hits=hits)()
        second = await cached_search(provider, query.upper(), texts=TextStore(js), cache=cache, hits=hits)()
    finally:
        await provider.aclose()
    assert tavily.count("search") == 1
    assert hits == [query.upper()]
    assert [s.url for s in second] == [s.url for s in first] == ["https://bees.example.org/hives"]
