"""Jobs that search the web (Tavily), PubMed and the local corpus at once: the whole
system as OS processes, with loopback fakes of Tavily and E-utilities that the real
clients reach by base URL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.platform.servers import PostgresServer
from tests.fakes.eutils import Article, FakeEutils
from tests.fakes.tavily import FakeTavily, Page
from tests.integration.conftest import running_system
from tests.integration.harness import System

FRESNEL_DOI = "10.1000/optics.fresnel.1"
PAGES = [
    Page("nps", "How lighthouse lenses work",
         "Fresnel lenses use concentric prisms to bend the light of a lighthouse lamp into a horizontal beam.\n\n"
         "A first-order Fresnel lens could be seen more than twenty miles out to sea.",
         url="https://www.nps.gov/articles/fresnel-lens.htm"),
    Page("doi", "Fresnel optics in maritime lighthouses (publisher page)",
         "Lighthouse Fresnel lenses refract and reflect light with rings of glass prisms.",
         url=f"https://doi.org/{FRESNEL_DOI}"),
    Page("served", "Lenses of lighthouses, a keeper's notes",
         "Keepers polished the Fresnel lens every day so the lighthouse beam stayed bright.",
         raw_in_search=False, extractable=False),
]
ARTICLES = [
    Article(
        pmid="32000001",
        title="Fresnel optics in maritime <i>lighthouses</i>: efficiency of concentric prisms",
        abstract=[("BACKGROUND", "Lighthouses use Fresnel lenses to concentrate light."),
                  ("RESULTS", "Concentric prisms raised beam intensity tenfold compared with plain lenses."),
                  ("CONCLUSIONS", "Fresnel lenses made lighthouse beams visible at long range.")],
        journal="Applied Optics History", doi=FRESNEL_DOI, references=["11111111"],
    ),
    Article(
        pmid="32000002",
        title="Lens polishing and light transmission in historic lighthouses",
        abstract=[(None, "Polished lighthouse lenses transmitted more light than neglected ones.")],
        pub_date="2017 Spring",
    ),
]


@pytest.fixture(scope="module")
def fakes() -> Iterator[tuple[FakeTavily, FakeEutils]]:
    with FakeTavily(PAGES) as tavily, FakeEutils(ARTICLES) as eutils:
        yield tavily, eutils


@pytest.fixture(scope="module")
def system(tmp_root: Path, postgres: PostgresServer | str, fakes: tuple[FakeTavily, FakeEutils]) -> Iterator[System]:
    tavily, eutils = fakes
    env = {
        "TAVILY_API_KEY": tavily.api_key,
        "TAVILY_BASE_URL": tavily.base_url,
        "NCBI_EUTILS_BASE_URL": eutils.base_url,
        "NCBI_EMAIL": "tests@example.org",
        "NCBI_TOOL": "deepresearch-tests",
        "RESEARCH_FETCH_ALLOWED_HOSTS": "127.0.0.1",
        "RESEARCH_PROVIDER_RETRIES": "1",
    }
    with running_system(tmp_root, postgres, env_overrides=env) as s:
        yield s


def test_a_job_searches_web_pubmed_and_local_documents(system: System, fakes: tuple[FakeTavily, FakeEutils]) -> None:
    tavily, eutils = fakes
    job_id = system.submit("How do lighthouses use Fresnel lenses?", max_iterations=1)
    job = system.wait_terminal(job_id, timeout=120)
    assert job["status"] == "COMPLETED", job
    sources = system.sources(job_id)
    methods = {s["retrieval_method"] for s in sources}
    assert methods == {"rag", "web", "pubmed"}, [(s["retrieval_method"], s["url"]) for s in sources]
    urls = {s["url"] for s in sources}
    # The PubMed record and the web page at its DOI are one source: PubMed's.
    assert "https://pubmed.ncbi.nlm.nih.gov/32000001/" in urls
    assert f"https://doi.org/{FRESNEL_DOI}" not in urls
    pubmed = next(s for s in sources if s["url"] == "https://pubmed.ncbi.nlm.nih.gov/32000001/")
    assert pubmed["credibility_tier"] == "PRIMARY_SOURCE"
    nps = next(s for s in sources if s["url"] == "https://www.nps.gov/articles/fresnel-lens.htm")
    assert nps["credibility_tier"] == "PRIMARY_SOURCE"
    assert all(0 <= s["relevance_score"] <= 1 for s in sources)
    # Every source's full text is archived and referenced by hash.
    assert all(s["text_hash"].startswith("sha256-") for s in sources)
    messages = system.progress_messages(job_id, "retrieve")
    assert any(m.startswith("searching rag, web, pubmed") for m in messages), messages
    assert {"searched rag", "searched web", "searched pubmed"} <= {m.split(":")[0] for m in messages}
    # live progress names each search as it starts, with its query
    assert any(m.startswith("searching web: ") for m in messages)
    assert tavily.count("search") >= 1 and eutils.count("esearch") >= 1 and eutils.count("efetch") >= 1
    assert all(r["params"].get("email") == "tests@example.org" for r in eutils.requests)
    assert eutils.rejected == 0  # the shared limiter kept E-utilities under 3 requests/s


def test_a_repeated_job_does_not_repeat_paid_searches(system: System, fakes: tuple[FakeTavily, FakeEutils]) -> None:
    tavily, eutils = fakes
    question = "Why were lighthouse lenses polished?"
    first = system.submit(question, max_iterations=1)
    assert system.wait_terminal(first, timeout=120)["status"] == "COMPLETED"
    searches, esearches = tavily.count("search"), eutils.count("esearch")
    second = system.submit(question, max_iterations=1)
    assert system.wait_terminal(second, timeout=120)["status"] == "COMPLETED"
    assert (tavily.count("search"), eutils.count("esearch")) == (searches, esearches)
    assert {s["url"] for s in system.sources(second)} == {s["url"] for s in system.sources(first)}


def test_pubmed_down_while_the_others_answer(system: System, fakes: tuple[FakeTavily, FakeEutils]) -> None:
    _, eutils = fakes
    eutils.fail_next("500", 1_000)
    try:
        job_id = system.submit("Who kept the Fresnel lens of a lighthouse clean?", max_iterations=1)
        job = system.wait_terminal(job_id, timeout=120)
    finally:
        eutils.clear_failures()
    assert job["status"] == "COMPLETED", job
    assert {s["retrieval_method"] for s in system.sources(job_id)} == {"rag", "web"}
    failures = [m for m in system.progress_messages(job_id, "retrieve") if m.startswith("pubmed search failed")]
    assert failures and "HTTP 500" in failures[0]


def test_the_request_chooses_the_providers(system: System, fakes: tuple[FakeTavily, FakeEutils]) -> None:
    tavily, _ = fakes
    searches = tavily.count("search")
    job_id = system.submit("What does a lighthouse lens do?", max_iterations=1, providers=["pubmed"])
    assert system.wait_terminal(job_id, timeout=120)["status"] == "COMPLETED"
    assert {s["retrieval_method"] for s in system.sources(job_id)} == {"pubmed"}
    assert tavily.count("search") == searches
    with system.client() as c:
        r = c.post("/api/research/jobs", json={"question": "Lighthouses?", "providers": ["bing"]})
    assert r.status_code == 422 and "providers" in r.text
