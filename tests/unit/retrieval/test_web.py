"""The web provider: the real tavily-python client against a loopback fake of Tavily's
API, full texts (raw content, /extract, our fetcher, the snippet), normalization to
the envelope's sources, and Tavily's typed errors translated into ours."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from nats.js import JetStreamContext

from services.retrieval.fetch import FetchedDocument, FetchFailed
from services.retrieval.providers import ProviderUnavailable, QueryRejected
from services.retrieval.excerpt import excerpt_of
from services.retrieval.web import WebProvider, make_tavily_client
from shared.research.envelope import EXCERPT_MAX_CHARS, CredibilityTier, RetrievalMethod, Source
from shared.platform.errors import PermanentError, TransientError
from shared.settings import StageSettings
from shared.research.text import text_hash
from shared.stores.textstore import TextStore
from tests.fakes.tavily import FakeTavily, Page

LONG = "\n\n".join(f"Paragraph {i}: honey bees fan their wings to move air through the hive." for i in range(60))
PAGES = [
    Page("nih", "Hive ventilation in honey bees", LONG, url="https://www.nih.gov/bees/ventilation", published_date="2024-05-01"),
    Page("blog", "Why bees fan", "Bees fan at the entrance.\n\nFanning cools the brood.", url="https://blog.example.com/bees?utm_source=x",
         raw_in_search=False),
    Page("served", "Bee fanning, served", "Fanning bees line up at the hive entrance.", raw_in_search=False, extractable=False),
]


@pytest.fixture(scope="module")
def tavily() -> Iterator[FakeTavily]:
    with FakeTavily(PAGES) as fake:
        yield fake


def settings_for(fake: FakeTavily, **overrides: object) -> StageSettings:
    values: dict[str, object] = {
        "tavily_api_key": fake.api_key, "tavily_base_url": fake.base_url,
        "research_fetch_allowed_hosts": "127.0.0.1", **overrides,
    }
    return StageSettings(**values)  # type: ignore[arg-type]


async def search(fake: FakeTavily, js: JetStreamContext, query: str = "bees fan hive", **overrides: object) -> list[Source]:
    settings = settings_for(fake, **overrides)
    provider = WebProvider(make_tavily_client(settings), settings)
    try:
        return await provider.search(query, TextStore(js))
    finally:
        await provider.aclose()


async def test_results_become_sources_with_archived_full_texts(tavily: FakeTavily, js: JetStreamContext) -> None:
    sources = await search(tavily, js)
    by_title = {s.title: s for s in sources}
    assert set(by_title) == {p.title for p in PAGES}
    nih = by_title["Hive ventilation in honey bees"]
    assert nih.retrieval_method is RetrievalMethod.WEB
    assert nih.credibility_tier is CredibilityTier.PRIMARY_SOURCE and nih.domain_authority == 95
    assert nih.published_at is not None and nih.published_at.year == 2024
    assert nih.metadata["full_text"] == "tavily_raw"
    full = await TextStore(js).get(nih.text_hash)
    assert text_hash(full) == nih.text_hash and nih.text_chars == len(full) > EXCERPT_MAX_CHARS
    # The excerpt is bounded and is a verbatim span of the archived text.
    assert len(nih.text) <= EXCERPT_MAX_CHARS
    (start, end), = nih.matched_spans
    assert full[start:end] == nih.text
    # One 0..1 scale: the best result of the answer is 1.0.
    assert max(s.relevance_score for s in sources) == 1.0
    assert all(0 < s.relevance_score <= 1 for s in sources)
    assert by_title["Why bees fan"].credibility_tier is CredibilityTier.UNVERIFIED


async def test_full_text_order_raw_then_extract_then_fetcher(tavily: FakeTavily, js: JetStreamContext) -> None:
    before_extract, before_pages = tavily.count("extract"), tavily.count("page")
    sources = {s.title: s for s in await search(tavily, js)}
    assert tavily.count("extract") == before_extract + 1  # one call for every result without raw content
    assert tavily.count("page") == before_pages + 1  # only the page extract could not get was fetched
    assert sources["Why bees fan"].metadata["full_text"] == "tavily_extract"
    served = sources["Bee fanning, served"]
    assert served.metadata["full_text"] == "fetch:text/html"
    assert "Fanning bees line up at the hive entrance." in await TextStore(js).get(served.text_hash)
    sent = [r["body"] for r in tavily.requests if r["path"] == "search"][-1]
    assert sent["max_results"] == 10 and sent["include_raw_content"] == "text"


async def test_snippet_is_the_last_resort(tavily: FakeTavily, js: JetStreamContext) -> None:
    async def refuse(url: str) -> FetchedDocument:
        raise FetchFailed(f"{url}: HTTP 404")

    settings = settings_for(tavily, tavily_use_extract=False)
    provider = WebProvider(make_tavily_client(settings), settings, fetch=refuse)
    try:
        sources = {s.title: s for s in await provider.search("bees fan hive", TextStore(js))}
    finally:
        await provider.aclose()
    blog = sources["Why bees fan"]
    assert blog.metadata["full_text"] == "snippet"
    assert await TextStore(js).get(blog.text_hash) == "Bees fan at the entrance.\n\nFanning cools the brood."


@pytest.mark.parametrize(("status", "error"), [
    (401, ProviderUnavailable),
    (403, ProviderUnavailable),
    (432, ProviderUnavailable),
    (433, ProviderUnavailable),
    (429, TransientError),
    (400, QueryRejected),
    (500, TransientError),
])
async def test_tavily_errors_are_translated(tavily: FakeTavily, js: JetStreamContext, status: int, error: type[Exception]) -> None:
    tavily.fail_next(status)
    with pytest.raises(error) as info:
        await search(tavily, js)
    assert info.value.__cause__ is not None
    if error is ProviderUnavailable:
        assert isinstance(info.value, PermanentError)


async def test_a_wrong_key_is_refused_by_the_fake(tavily: FakeTavily, js: JetStreamContext) -> None:
    with pytest.raises(ProviderUnavailable, match="TAVILY_API_KEY"):
        await search(tavily, js, tavily_api_key="tvly-wrong")


async def test_extract_failure_falls_back_to_fetching(tavily: FakeTavily, js: JetStreamContext) -> None:
    before_pages, before_extract = tavily.count("page"), tavily.count("extract")
    tavily.fail_next(200)  # the search answers...
    tavily.fail_next(432)  # ...and the extract call hits the plan's limit
    sources = {s.title: s for s in await search(tavily, js)}
    assert tavily.count("extract") == before_extract + 1
    assert tavily.count("page") == before_pages + 1
    assert sources["Bee fanning, served"].metadata["full_text"] == "fetch:text/html"
    # blog.example.com is not reachable from the tests: that result keeps its snippet.
    assert sources["Why bees fan"].metadata["full_text"] in {"snippet", "fetch:text/html"}


def test_excerpt_prefers_the_snippet_where_it_occurs() -> None:
    text = "Intro line.\n\nBees fan their wings. More text."
    assert excerpt_of(text, "Bees   fan their wings.") == ("Bees fan their wings.", [(13, 34)])
    assert excerpt_of(text, "not in the text") == (text, [(0, len(text))])
