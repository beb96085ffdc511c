"""The keyless providers (SearXNG, Wikipedia, arXiv, OpenAlex): parsing each real wire
format, the providers against loopback fakes, and the web chain's failover order and
quota memory (services/retrieval/webchain.py)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Mapping

import httpx
import pytest
from nats.js import JetStreamContext

from services.retrieval.fetch import fetch_document
from services.retrieval.keyless import ApiClient
from services.retrieval.providers import ProviderUnavailable
from services.retrieval.scholarly import (
    ArxivProvider,
    OpenAlexProvider,
    abstract_from_inverted_index,
    arxiv_query,
    parse_arxiv,
    parse_openalex,
)
from services.retrieval.searxng import SearxngProvider, parse_searxng
from services.retrieval.web import WebProvider, make_tavily_client
from services.retrieval.webchain import JobNotes, WebSearch, web_provider_names
from services.retrieval.wikipedia import WikipediaProvider, parse_wikipedia
from shared.platform.errors import PermanentError, ResearchError, TransientError
from shared.research.envelope import CredibilityTier, RetrievalMethod, Source
from shared.settings import StageSettings
from shared.stores.textstore import TextStore
from tests.fakes.keyless import Doc, FakeArxiv, FakeOpenAlex, FakeSearxng, FakeWikipedia, Paper
from tests.fakes.tavily import FakeTavily, Page

DOCS = [
    Doc("keeper", "Lighthouse keepers and their lamps", "Keepers trimmed the lamp wick every night.\n\n"
        "A lighthouse lamp burned whale oil, later kerosene.", published="2023-04-02T00:00:00"),
    Doc("fresnel", "The Fresnel lens", "Augustin Fresnel designed a lens of concentric prisms for lighthouses.\n\n"
        "It is thinner than a plain lens.", url="https://en.wikipedia.org/wiki/Fresnel_lens"),
]
PAPERS = [
    Paper("2101.01234", "Attention is what transformers need",
          "We show that attention layers in transformers learn lighthouse-like routing of tokens.",
          doi="10.1000/attn.1", journal="Journal of Machine Tests"),
    Paper("W2042", "A survey of lighthouse optics", "Lighthouse optics evolved from mirrors to Fresnel lenses.", doi=None),
    Paper("2202.00002", "No abstract here", ""),
]


@pytest.fixture(scope="module")
def fakes() -> Iterator[tuple[FakeSearxng, FakeWikipedia, FakeArxiv, FakeOpenAlex]]:
    with FakeSearxng(DOCS) as sx, FakeWikipedia(DOCS) as wp, FakeArxiv(PAPERS) as ax, FakeOpenAlex(PAPERS) as oa:
        yield sx, wp, ax, oa


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=10) as client:
        yield client


SETTINGS = StageSettings(research_fetch_allowed_hosts="127.0.0.1")  # type: ignore[call-arg]


# -- parsing ------------------------------------------------------------------------------


def test_searxng_results_keep_http_urls_once_with_dates() -> None:
    data = {"query": "q", "number_of_results": 0, "answers": [], "unresponsive_engines": [["bing", "timeout"]],
            "results": [
                {"url": "https://a.example/x", "title": "A", "content": "alpha", "score": 2.5, "engines": ["ddg"],
                 "publishedDate": "2024-03-01T00:00:00"},
                {"url": "https://a.example/x", "title": "A again", "content": "dup", "score": 1.0},
                {"url": "magnet:?xt=urn:btih:abc", "title": "torrent", "content": ""},
                {"url": "https://b.example/", "title": "B", "content": "beta", "publishedDate": None},
            ]}
    results = parse_searxng(data)
    assert [r.url for r in results] == ["https://a.example/x", "https://b.example/"]
    assert results[0].score == 2.5 and results[0].published_at is not None and results[0].published_at.year == 2024
    assert results[1].score is None and results[1].published_at is None
    with pytest.raises(PermanentError):
        parse_searxng({"error": "nope"})


def test_wikipedia_pages_in_search_rank_order_and_errors() -> None:
    data = {"batchcomplete": True, "query": {"pages": [
        {"pageid": 1, "ns": 0, "title": "B", "index": 2, "extract": "Bee.", "fullurl": "https://en.wikipedia.org/wiki/B"},
        {"pageid": 2, "ns": 0, "title": "A", "index": 1, "extract": "Ant.", "fullurl": "https://en.wikipedia.org/wiki/A",
         "touched": "2024-05-01T12:00:00Z"},
    ]}}
    pages = parse_wikipedia(data)
    assert [p.title for p in pages] == ["A", "B"] and pages[0].text == "Ant."
    assert pages[0].published_at is not None
    assert parse_wikipedia({"batchcomplete": True}) == []  # no hit: no "query" at all
    with pytest.raises(TransientError):
        parse_wikipedia({"error": {"code": "maxlag", "info": "Waiting for a database server: 6 seconds lagged."}})
    with pytest.raises(PermanentError):
        parse_wikipedia({"error": {"code": "nosrsearch", "info": "The \"gsrsearch\" parameter must be set."}})


ATOM = b"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <title type="html">ArXiv Query: search_query=all:electron</title>
  <entry>
    <id>http://arxiv.org/abs/hep-ex/0307015v1</id>
    <published>2003-07-07T13:46:39-04:00</published>
    <title>Multi-Electron Production at High Transverse
  Momenta in ep Collisions at HERA</title>
    <summary>  Multi-electron production is studied at high electron transverse momentum
in positron- and electron-proton collisions.
</summary>
    <author><name>H1 Collaboration</name></author>
    <author><name>A. Aktas</name></author>
    <arxiv:doi>10.1140/epjc/s2003-01326-x</arxiv:doi>
    <arxiv:journal_ref>Eur.Phys.J. C31 (2003) 17-29</arxiv:journal_ref>
    <link href="http://arxiv.org/abs/hep-ex/0307015v1" rel="alternate" type="text/html"/>
  </entry>
</feed>"""


def test_arxiv_atom_entries_become_papers() -> None:
    (paper,) = parse_arxiv(ATOM)
    assert paper.url == "https://arxiv.org/abs/hep-ex/0307015"
    assert paper.ids == {"arxiv_id": "hep-ex/0307015", "doi": "10.1140/epjc/s2003-01326-x"}
    assert paper.title == "Multi-Electron Production at High Transverse Momenta in ep Collisions at HERA"
    assert paper.abstract.startswith("Multi-electron production is studied") and "\n" not in paper.abstract
    assert paper.authors == ["H1 Collaboration", "A. Aktas"]
    assert paper.published_at is not None and paper.published_at.year == 2003
    assert paper.venue.startswith("Eur.Phys.J.")


def test_arxiv_error_feed_and_malformed_xml() -> None:
    error = (b'<feed xmlns="http://www.w3.org/2005/Atom"><entry><id>http://arxiv.org/api/errors#incorrect_id_format</id>'
             b"<title>Error</title><summary>incorrect id format for 1234</summary></entry></feed>")
    with pytest.raises(PermanentError, match="incorrect id format"):
        parse_arxiv(error)
    with pytest.raises(TransientError):
        parse_arxiv(b"<feed><entry>")


def test_arxiv_query_ors_content_words() -> None:
    assert arxiv_query("How do transformers use attention?") == "all:how OR all:transformers OR all:use OR all:attention"


def test_openalex_abstract_from_inverted_index_and_fields() -> None:
    assert abstract_from_inverted_index({"lenses": [1, 4], "Fresnel": [0], "bend": [2], "light;": [3], "refract.": [5]}) == \
        "Fresnel lenses bend light; lenses refract."
    assert abstract_from_inverted_index(None) == ""
    data = {"meta": {"count": 1}, "results": [{
        "id": "https://openalex.org/W1", "doi": "https://doi.org/10.1/X", "display_name": "A  work",
        "publication_date": "2020-02-03", "relevance_score": 12.5,
        "authorships": [{"author": {"display_name": "Ada"}}, {"author": {}}],
        "abstract_inverted_index": {"Hello": [0], "world": [1]},
        "primary_location": {"landing_page_url": "https://pub.example/1", "source": {"display_name": "J", "type": "journal"}},
    }, {"id": "https://openalex.org/W2", "doi": None, "display_name": "Preprint", "abstract_inverted_index": None,
        "primary_location": {"landing_page_url": "https://repo.example/2", "source": None}}]}
    first, second = parse_openalex(data)
    assert first.url == "https://doi.org/10.1/X" and first.ids == {"openalex_id": "W1", "doi": "10.1/X"}
    assert first.abstract == "Hello world" and first.authors == ["Ada"] and first.journal and first.score == 12.5
    assert second.url == "https://repo.example/2" and second.abstract == "" and not second.journal
    with pytest.raises(PermanentError):
        parse_openalex({"error": "Invalid query parameters error."})


# -- providers against the fakes -----------------------------------------------------------


async def test_searxng_provider_fetches_full_texts(fakes, js: JetStreamContext, http: httpx.AsyncClient) -> None:
    sx = fakes[0]
    provider = SearxngProvider(ApiClient(http, name="SearXNG"), base_url=sx.base_url, results_per_query=5,
                               fetch=lambda url: fetch_document(url, SETTINGS))
    sources = await provider.search("lighthouse lamp keepers", TextStore(js))
    by_title = {s.title: s for s in sources}
    keeper = by_title["Lighthouse keepers and their lamps"]
    assert keeper.retrieval_method is RetrievalMethod.WEB and keeper.metadata["provider"] == "searxng"
    assert keeper.metadata["full_text"] == "fetch:text/html"  # the page, through the SSRF-guarded fetcher
    assert "kerosene" in (await TextStore(js).get(keeper.text_hash))
    assert keeper.relevance_score == 1.0 and all(0 <= s.relevance_score <= 1 for s in sources)
    # wikipedia.org is not fetched here (not an allowed loopback host): the snippet is its text.
    assert by_title["The Fresnel lens"].metadata["full_text"] in {"snippet", "fetch:text/html"}
    assert sx.requests[-1]["params"]["format"] == "json"


async def test_searxng_without_json_format_and_rate_limit(fakes, http: httpx.AsyncClient, js: JetStreamContext) -> None:
    sx = fakes[0]
    provider = SearxngProvider(ApiClient(http, name="SearXNG"), base_url=sx.base_url, results_per_query=5, fetch=None)
    sx.json_enabled = False
    try:
        with pytest.raises(PermanentError, match="search.formats"):
            await provider.search("lighthouse", TextStore(js))
    finally:
        sx.json_enabled = True
    sx.fail_next(429)
    with pytest.raises(TransientError) as caught:
        await provider.search("lighthouse", TextStore(js))
    assert caught.value.retry_after_s == 1.0
    sx.fail_next(502)
    with pytest.raises(TransientError, match="502"):
        await provider.search("lighthouse", TextStore(js))


async def test_wikipedia_provider_uses_the_lead_section(fakes, js: JetStreamContext, http: httpx.AsyncClient) -> None:
    wp = fakes[1]
    provider = WikipediaProvider(ApiClient(http, name="Wikipedia"), api_url=wp.api_url, results_per_query=5)
    sources = await provider.search("Fresnel lens lighthouses", TextStore(js))
    assert [s.title for s in sources][0] == "The Fresnel lens"
    fresnel = sources[0]
    assert fresnel.url == "https://en.wikipedia.org/wiki/Fresnel_lens" and fresnel.metadata["full_text"] == "api"
    assert fresnel.text.startswith("Augustin Fresnel designed") and "thinner" not in fresnel.text  # lead section only
    assert fresnel.domain_authority == 70
    params = wp.requests[-1]["params"]
    assert params["generator"] == "search" and params["exintro"] == "1" and params["explaintext"] == "1"


async def test_arxiv_provider_papers(fakes, js: JetStreamContext, http: httpx.AsyncClient) -> None:
    ax = fakes[2]
    provider = ArxivProvider(ApiClient(http, name="arXiv"), api_url=ax.api_url, results_per_query=5)
    sources = await provider.search("transformers attention lighthouse", TextStore(js))
    urls = [s.url for s in sources]
    assert urls[0] == "https://arxiv.org/abs/2101.01234" and "https://arxiv.org/abs/2202.00002" not in urls  # no abstract
    paper = sources[0]
    assert paper.metadata["arxiv_id"] == "2101.01234" and paper.metadata["doi"] == "10.1000/attn.1"
    assert paper.metadata["authors"] == "Ada Lovelace; Alan Turing" and paper.metadata["provider"] == "arxiv"
    assert paper.published_at is not None and paper.published_at.year == 2021
    text = await TextStore(js).get(paper.text_hash)
    assert text.startswith("Attention is what transformers need\n\nWe show that attention layers")
    assert ax.requests[-1]["params"]["search_query"].startswith("all:transformers OR all:attention")


async def test_openalex_provider_works(fakes, js: JetStreamContext, http: httpx.AsyncClient) -> None:
    oa = fakes[3]
    provider = OpenAlexProvider(ApiClient(http, name="OpenAlex"), api_url=oa.base_url, results_per_query=5,
                                email="tests@example.org")
    sources = await provider.search("lighthouse optics attention", TextStore(js))
    by_url = {s.url: s for s in sources}
    attn = by_url["https://doi.org/10.1000/attn.1"]
    assert attn.credibility_tier is CredibilityTier.PRIMARY_SOURCE and attn.metadata["journal"] == "Journal of Machine Tests"
    assert "https://example.org/W2042" in by_url  # no DOI: the landing page
    assert all(s.metadata["provider"] == "openalex" for s in sources)
    assert max(s.relevance_score for s in sources) == 1.0
    assert oa.requests[-1]["params"]["mailto"] == "tests@example.org"
    oa.fail_next(429)
    with pytest.raises(TransientError):
        await provider.search("lighthouse", TextStore(js))


# -- the web chain ---------------------------------------------------------------------------


class Stub:
    """A backend whose answers are scripted: a list, an exception, or "hang"."""

    def __init__(self, name: str, *answers: object) -> None:
        self.name = name
        self.answers = list(answers)
        self.calls: list[str] = []

    def cache_params(self) -> Mapping[str, object]:
        return {}

    async def search(self, query: str, texts: TextStore) -> list[Source]:
        self.calls.append(query)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if answer == "hang":
            await asyncio.sleep(10)
        if answer == "slow":
            await asyncio.sleep(0.3)
        if isinstance(answer, BaseException):
            raise answer
        return [_source(f"https://{self.name}.example/{query}")]


def _source(url: str) -> Source:
    return Source(id=url, text="t", url=url, title=url, relevance_score=1.0, credibility_tier=CredibilityTier.SECONDARY,
                  domain_authority=50, retrieval_method=RetrievalMethod.WEB, text_hash="sha256-" + "1" * 64, text_chars=1)


def test_web_provider_order() -> None:
    assert web_provider_names("", tavily_key=True, searxng_url=True) == ["tavily", "searxng"]
    assert web_provider_names("", tavily_key=False, searxng_url=True) == ["searxng"]
    assert web_provider_names("", tavily_key=False, searxng_url=False) == []
    assert web_provider_names(" Wikipedia, tavily ,wikipedia", tavily_key=False, searxng_url=False) == ["wikipedia", "tavily"]
    with pytest.raises(PermanentError, match="bing"):
        web_provider_names("tavily,bing", tavily_key=True, searxng_url=False)


async def test_failover_on_quota_skips_the_provider_for_the_process() -> None:
    now = [0.0]
    tavily = Stub("tavily", [], [], ProviderUnavailable("Tavily refused search (432)"))
    searxng = Stub("searxng", [])
    web = WebSearch([tavily, searxng], quota_pause_s=600, clock=lambda: now[0])
    notes = JobNotes()
    for q in ("a", "b", "c", "d"):
        [found] = await web.search(q, None, notes)  # type: ignore[arg-type]
        assert found.url == f"https://{'tavily' if q in 'ab' else 'searxng'}.example/{q}"
    assert tavily.calls == ["a", "b", "c"] and searxng.calls == ["c", "d"]  # "d" never asked Tavily
    lines = list(notes.lines)
    assert lines[0].startswith("web: tavily failed (Tavily refused search (432)); failed over to searxng")
    assert lines[1].startswith("web: tavily skipped") and len(lines) == 2
    other_job = JobNotes()
    await web.search("e", None, other_job)  # type: ignore[arg-type]
    assert tavily.calls[-1] == "c" and list(other_job.lines)[0].startswith("web: tavily skipped")
    now[0] = 601  # the pause is over: Tavily is asked again
    tavily.answers = [[]]
    await web.search("f", None, JobNotes())  # type: ignore[arg-type]
    assert tavily.calls[-1] == "f"


@pytest.mark.parametrize("error", [TransientError("429", retry_after_s=3), TransientError("HTTP 503"), "hang",
                                   PermanentError("HTTP 400")])
async def test_failover_on_429_5xx_timeout_without_skipping(error: object) -> None:
    first, second = Stub("tavily", error, []), Stub("searxng", [])
    web = WebSearch([first, second], failover_timeout_s=0.2)
    notes = JobNotes()
    [found] = await web.search("q", None, notes)  # type: ignore[arg-type]
    assert found.url.startswith("https://searxng.")
    assert "failed over to searxng" in next(iter(notes.lines))
    if error == "hang":
        assert "took longer than 0.2s" in next(iter(notes.lines))
    await web.search("r", None, notes)  # type: ignore[arg-type]
    assert first.calls == ["q", "r"]  # not skipped: the next search asks it first again


async def test_every_provider_failing_raises_the_most_hopeful_error() -> None:
    quota = ProviderUnavailable("432")
    web = WebSearch([Stub("tavily", quota), Stub("searxng", TransientError("HTTP 502", retry_after_s=2))])
    with pytest.raises(TransientError) as caught:
        await web.search("q", None, JobNotes())  # type: ignore[arg-type]
    assert "tavily" in str(caught.value) and "searxng: HTTP 502" in str(caught.value) and caught.value.retry_after_s == 2
    refused = WebSearch([Stub("tavily", quota), Stub("wikipedia", ProviderUnavailable("402"))])
    with pytest.raises(ProviderUnavailable):
        await refused.search("q", None, JobNotes())  # type: ignore[arg-type]
    bad = WebSearch([Stub("searxng", PermanentError("HTTP 403"))])
    with pytest.raises(PermanentError) as perm:
        await bad.search("q", None, JobNotes())  # type: ignore[arg-type]
    assert not isinstance(perm.value, (TransientError, ProviderUnavailable))


async def test_scholarly_providers_search_with_the_chain_and_fail_alone() -> None:
    web = WebSearch([Stub("searxng", [])], [Stub("arxiv", []), Stub("openalex", TransientError("HTTP 500"))])
    notes = JobNotes()
    found = await web.search("q", None, notes)  # type: ignore[arg-type]
    assert {s.url for s in found} == {"https://searxng.example/q", "https://arxiv.example/q"}
    assert list(notes.lines) == ["web: openalex failed (HTTP 500)"]
    # A paced scholarly API is not cut by the failover timeout (nothing to fail over to).
    paced = WebSearch([Stub("searxng", "slow")], [Stub("arxiv", "slow")], failover_timeout_s=0.1)
    assert len(await paced.search("q", None, JobNotes())) == 2  # type: ignore[arg-type]  # nor the last web one
    only_scholarly = WebSearch([], [Stub("arxiv", TransientError("timeout"))])
    with pytest.raises(TransientError):
        await only_scholarly.search("q", None, JobNotes())  # type: ignore[arg-type]


async def test_real_tavily_client_432_after_two_queries_fails_over_to_searxng(
    fakes, js: JetStreamContext, http: httpx.AsyncClient,
) -> None:
    sx = fakes[0]
    pages = [Page("t1", "Lighthouse lamps, Tavily's page", "Lamps of lighthouses burned oil.", url="https://tavily.example/lamps")]
    with FakeTavily(pages) as tavily:
        tavily.quota_after(2)
        settings = StageSettings(tavily_api_key=tavily.api_key, tavily_base_url=tavily.base_url,  # type: ignore[call-arg]
                                 research_fetch_allowed_hosts="127.0.0.1", tavily_use_extract=False)
        tavily_provider = WebProvider(make_tavily_client(settings), settings)
        searxng = SearxngProvider(ApiClient(http, name="SearXNG"), base_url=sx.base_url, results_per_query=5,
                                  fetch=lambda url: fetch_document(url, settings))
        web = WebSearch([tavily_provider, searxng])
        notes = JobNotes()
        try:
            answers = [await web.search(q, TextStore(js), notes) for q in ("lighthouse lamps", "lamps oil",
                                                                           "lighthouse keepers", "lamp wick")]
        finally:
            await tavily_provider.aclose()
    providers = [{s.metadata["provider"] for s in a} for a in answers]
    assert providers == [{"tavily"}, {"tavily"}, {"searxng"}, {"searxng"}]
    assert tavily.count("search") == 3  # the third got 432; the fourth never asked
    assert [r["status"] for r in tavily.requests] == [200, 200, 432]
    assert any("432" in line and "failed over to searxng" in line for line in notes.lines)


async def test_keyless_errors_are_research_errors(http: httpx.AsyncClient) -> None:
    api = ApiClient(http, name="Nowhere")
    with pytest.raises(ResearchError):
        await api.get("http://127.0.0.1:9/", {})  # nothing listens on the discard port


# -- which web providers the service builds ----------------------------------------------------


def _stage(**values: object) -> StageSettings:
    """Settings with only ``values`` set among the web ones, whatever the environment says."""
    unset = {"tavily_api_key": None, "searxng_url": None, "research_web_providers": "", "research_scholarly_providers": ""}
    return StageSettings(**{**unset, **values})  # type: ignore[arg-type]


def test_service_web_chain_and_configuration() -> None:
    from services.retrieval.service import unconfigured, web_chain
    from shared.research.envelope import ResearchRequest

    request = ResearchRequest(question="Why do lighthouses use lenses?")
    assert web_chain(_stage()) == ([], [])
    assert "SEARXNG_URL" in (unconfigured(_stage(), request)[RetrievalMethod.WEB] or "")
    assert web_chain(_stage(tavily_api_key="k", searxng_url="http://s")) == (["tavily", "searxng"], [])
    # Named without its setting: left out, the others still run.
    assert web_chain(_stage(research_web_providers="tavily,searxng,wikipedia", searxng_url="http://s")) == (
        ["searxng", "wikipedia"], [])
    only_papers = _stage(research_scholarly_providers="arxiv,openalex")
    assert web_chain(only_papers) == ([], ["arxiv", "openalex"])
    assert unconfigured(only_papers, request)[RetrievalMethod.WEB] is None
    with pytest.raises(PermanentError, match="RESEARCH_SCHOLARLY_PROVIDERS"):
        web_chain(_stage(research_scholarly_providers="scholar"))
