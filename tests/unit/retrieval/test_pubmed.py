"""PubMed: E-utilities parsing edge cases, and the client and provider against a loopback
fake of esearch/efetch (real nats-server for the rate limiter and the text store)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import httpx
import pytest
from nats.js import JetStreamContext

from services.retrieval.pubmed import (
    EutilsError,
    PubMedClient,
    PubMedProvider,
    parse_efetch,
    parse_esearch,
)
from services.retrieval.ratelimit import KvRateLimiter
from shared.research.envelope import CredibilityTier, RetrievalMethod
from shared.platform.errors import TransientError
from shared.research.text import text_hash
from shared.stores.textstore import TextStore
from tests.fakes.eutils import DOCTYPE, Article, FakeEutils, article_xml

BEES = Article(
    pmid="31000001",
    title="Effect of <i>Apis mellifera</i> foraging on CO<sub>2</sub> levels in hives",
    abstract=[
        ("BACKGROUND", "Honey bees (<i>Apis mellifera</i>) regulate hive air."),
        ("METHODS", "We measured CO<sub>2</sub> in 40 hives over 2 years."),
        ("RESULTS", "Fanning lowered CO<sub>2</sub> by 30%<sup>a</sup>."),
        ("CONCLUSIONS", "Bees ventilate hives actively."),
    ],
    journal="Journal of Apicultural Research",
    doi="10.1000/bees.2021.1",
    references=["11111111", "22222222"],
    comments=["33333333"],
)
TIDES = Article(
    pmid="31000002",
    title="Tidal forcing of humidity in coastal bee hives",
    abstract=[(None, "Tides change humidity near coastal apiaries by 10<sup>2</sup> ppm.")],
    pub_date="2019 Jan-Feb",
    authors=[("Lee", "K")],
)
NO_ABSTRACT = Article(pmid="31000003", title="Bees: a letter", abstract=[])


@pytest.fixture(scope="module")
def eutils() -> Iterator[FakeEutils]:
    with FakeEutils([BEES, TIDES, NO_ABSTRACT]) as fake:
        yield fake


LIMITER = f"test-{uuid.uuid4().hex}"  # one limiter for the module, as one per credential in production


def client_for(fake: FakeEutils, js: JetStreamContext, http: httpx.AsyncClient, *, api_key: str | None = None) -> PubMedClient:
    limiter = KvRateLimiter(js, name=LIMITER, rate_per_s=3)
    return PubMedClient(http, base_url=fake.base_url, limiter=limiter, tool="deepresearch-tests", email="tests@example.org", api_key=api_key)


# -- parsing ---------------------------------------------------------------------------


def test_esearch_ids_stay_strings() -> None:
    payload = json.dumps({"header": {"type": "esearch"}, "esearchresult": {
        "count": "2", "retmax": "2", "retstart": "0", "idlist": ["31000002", "00012"]}}).encode()
    assert parse_esearch(payload) == ["31000002", "00012"]


def test_esearch_no_match_is_empty_not_an_error() -> None:
    payload = json.dumps({"esearchresult": {"count": "0", "retmax": "0", "idlist": [],
                                            "errorlist": {"phrasesnotfound": ["zzqx"], "fieldsnotfound": []}}}).encode()
    assert parse_esearch(payload) == []


@pytest.mark.parametrize("body", [
    {"header": {"type": "esearch"}, "esearchresult": {"ERROR": "Search Backend failed"}},
    {"error": "API rate limit exceeded", "count": "4", "limit": "3"},
])
def test_esearch_error_inside_200_raises(body: dict) -> None:
    with pytest.raises(EutilsError):
        parse_esearch(json.dumps(body).encode())


def test_efetch_record_fields_markup_and_own_identifiers() -> None:
    payload = (DOCTYPE + "<PubmedArticleSet>" + article_xml(BEES) + "</PubmedArticleSet>").encode()
    [record] = parse_efetch(payload)
    # Reference lists and comments carry other papers' PMIDs and DOIs: not this record's.
    assert record.pmid == "31000001"
    assert record.doi == "10.1000/bees.2021.1"
    assert record.title == "Effect of Apis mellifera foraging on CO2 levels in hives"
    assert [label for label, _ in record.sections] == ["BACKGROUND", "METHODS", "RESULTS", "CONCLUSIONS"]
    assert record.sections[2][1] == "Fanning lowered CO2 by 30%a."
    assert record.journal == "Journal of Apicultural Research"
    assert record.published_at == datetime(2021, 3, 4, tzinfo=UTC)
    assert record.authors == ["Smith J", "Doe A"]
    assert record.url == "https://pubmed.ncbi.nlm.nih.gov/31000001/"
    assert record.text().startswith("Effect of Apis mellifera foraging on CO2 levels in hives\n\nBACKGROUND: Honey bees")


def test_efetch_medline_date_and_unlabelled_abstract() -> None:
    [record] = parse_efetch((DOCTYPE + "<PubmedArticleSet>" + article_xml(TIDES) + "</PubmedArticleSet>").encode())
    assert record.published_at == datetime(2019, 1, 1, tzinfo=UTC)
    assert record.sections == [(None, "Tides change humidity near coastal apiaries by 102 ppm.")]
    assert record.doi is None


def test_efetch_error_inside_200_raises() -> None:
    with pytest.raises(EutilsError, match="Cannot retrieve"):
        parse_efetch(b'<?xml version="1.0" ?>\n<eFetchResult><ERROR>Cannot retrieve history data</ERROR></eFetchResult>')


def test_efetch_malformed_xml_raises() -> None:
    with pytest.raises(EutilsError):
        parse_efetch(b"<PubmedArticleSet><PubmedArticle>")


# -- client and provider against the fake ---------------------------------------------------------


async def test_identity_params_on_every_request(eutils: FakeEutils, js: JetStreamContext) -> None:
    before = len(eutils.requests)
    async with httpx.AsyncClient() as http:
        client = client_for(eutils, js, http, api_key="ncbi-test-key")
        ids = await client.search("bees hives", retmax=10)
        records = await client.fetch(ids)
    assert ids[0] == "31000001" and set(ids) == {"31000001", "31000002", "31000003"}
    assert {r.pmid for r in records} == set(ids)
    sent = eutils.requests[before:]
    assert [r["path"] for r in sent] == ["esearch", "efetch"]
    for request in sent:
        assert request["params"]["tool"] == "deepresearch-tests"
        assert request["params"]["email"] == "tests@example.org"
        assert request["params"]["api_key"] == "ncbi-test-key"
    assert sent[0]["params"]["retmode"] == "json" and sent[0]["params"]["db"] == "pubmed"


async def test_provider_sources(eutils: FakeEutils, js: JetStreamContext) -> None:
    texts = TextStore(js)
    async with httpx.AsyncClient() as http:
        provider = PubMedProvider(client_for(eutils, js, http), results_per_query=10)
        sources = await provider.search("bees hives", texts)
    # The record without an abstract has nothing to quote and is left out.
    assert [s.metadata["pmid"] for s in sources] == ["31000001", "31000002"]
    bees = sources[0]
    assert bees.url == "https://pubmed.ncbi.nlm.nih.gov/31000001/"
    assert bees.retrieval_method is RetrievalMethod.PUBMED
    assert bees.credibility_tier is CredibilityTier.PRIMARY_SOURCE
    assert 0 <= bees.domain_authority <= 100
    assert bees.relevance_score == 1.0 > sources[1].relevance_score >= 0.5
    assert bees.metadata["doi"] == "10.1000/bees.2021.1"
    assert bees.metadata["journal"] == "Journal of Apicultural Research"
    assert bees.metadata["authors"] == "Smith J; Doe A"
    assert bees.found_by == ["bees hives"]
    full = await texts.get(bees.text_hash)
    assert text_hash(full) == bees.text_hash and bees.text_chars == len(full)
    assert "RESULTS: Fanning lowered CO2 by 30%a." in full
    assert full.startswith(bees.text)


async def test_429_is_transient_with_retry_after(eutils: FakeEutils, js: JetStreamContext) -> None:
    eutils.fail_next("429")
    async with httpx.AsyncClient() as http:
        with pytest.raises(TransientError) as info:
            await client_for(eutils, js, http).search("bees", retmax=5)
    assert info.value.retry_after_s is not None


async def test_error_inside_200_from_the_server(eutils: FakeEutils, js: JetStreamContext) -> None:
    eutils.fail_next("error200")
    async with httpx.AsyncClient() as http:
        with pytest.raises(EutilsError, match="Search Backend failed"):
            await client_for(eutils, js, http).search("bees", retmax=5)


async def test_concurrent_fetches_share_efetch_requests(eutils: FakeEutils, js: JetStreamContext) -> None:
    before = eutils.count("efetch")
    async with httpx.AsyncClient() as http:
        client = client_for(eutils, js, http)
        results = await asyncio.gather(*(client.fetch([pmid]) for pmid in ("31000001", "31000002", "31000003", "99999999")))
    # One request for all four calls, and each call gets only the records it asked for.
    assert eutils.count("efetch") == before + 1
    assert [[r.pmid for r in recs] for recs in results] == [["31000001"], ["31000002"], ["31000003"], []]


async def test_a_failed_shared_efetch_fails_every_caller(eutils: FakeEutils, js: JetStreamContext) -> None:
    eutils.fail_next("error200")
    async with httpx.AsyncClient() as http:
        client = client_for(eutils, js, http)
        results = await asyncio.gather(client.fetch(["31000001"]), client.fetch(["31000002"]), return_exceptions=True)
        assert all(isinstance(r, EutilsError) for r in results)
        # The next call starts a fresh batch and succeeds.
        assert [r.pmid for r in await client.fetch(["31000002"])] == ["31000002"]
