"""Web search without keys, and failover: the whole system as OS processes, Tavily's
fake spending its plan after two searches (432), SearXNG's fake taking the job's later
searches. The job completes with sources from both, the failover is reported, and the
retrieval process skips Tavily for the next job instead of asking it again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from shared.platform.servers import PostgresServer
from tests.fakes.keyless import Doc, FakeSearxng
from tests.fakes.tavily import FakeTavily, Page
from tests.integration.conftest import running_system
from tests.integration.harness import System

PAGES = [
    Page("tavily-a", "Lighthouse Fresnel lenses explained",
         "Fresnel lenses in a lighthouse bend lamp light into a beam with rings of prisms.",
         url="https://www.nps.gov/articles/lighthouse-fresnel-lenses.htm"),
    Page("tavily-b", "Why lighthouse beams reach far",
         "A lighthouse beam reaches far because the Fresnel lens concentrates the lamp's light.",
         url="https://lighthouse-tavily.example.org/beams"),
]
DOCS = [
    Doc("keeper", "Lighthouse keepers polished the Fresnel lens",
        "Lighthouse keepers polished the Fresnel lens every morning.\n\nA clean lens kept the beam bright at sea."),
    Doc("prisms", "Prisms of a lighthouse lens",
        "The prisms of a lighthouse Fresnel lens refract light; the outer rings reflect it too."),
]


@pytest.fixture(scope="module")
def fakes() -> Iterator[tuple[FakeTavily, FakeSearxng]]:
    with FakeTavily(PAGES) as tavily, FakeSearxng(DOCS) as searxng:
        tavily.quota_after(2)
        yield tavily, searxng


@pytest.fixture(scope="module")
def system(tmp_root: Path, postgres: PostgresServer | str, fakes: tuple[FakeTavily, FakeSearxng]) -> Iterator[System]:
    tavily, searxng = fakes
    env = {
        "TAVILY_API_KEY": tavily.api_key,
        "TAVILY_BASE_URL": tavily.base_url,
        "SEARXNG_URL": searxng.base_url,
        "RESEARCH_WEB_PROVIDERS": "tavily,searxng",
        "RESEARCH_FETCH_ALLOWED_HOSTS": "127.0.0.1",
        "RESEARCH_PROVIDER_RETRIES": "1",
    }
    with running_system(tmp_root, postgres, env_overrides=env) as s:
        yield s


def test_tavily_quota_fails_over_to_searxng(system: System, fakes: tuple[FakeTavily, FakeSearxng]) -> None:
    tavily, searxng = fakes
    job_id = system.submit("How do lighthouse Fresnel lenses make a beam?", max_iterations=1, providers=["web"])
    job = system.wait_terminal(job_id, timeout=180)
    assert job["status"] == "COMPLETED", job

    statuses = [r["status"] for r in tavily.requests if r["path"] == "search"]
    assert statuses[:2] == [200, 200] and statuses[2:] and set(statuses[2:]) == {432}, statuses
    assert searxng.count("search") >= 1

    sources = system.sources(job_id)
    urls = {s["url"] for s in sources}
    tavily_urls = {p.url for p in PAGES}
    searxng_urls = {searxng.url_of(d) for d in DOCS}
    assert urls & tavily_urls and urls & searxng_urls, urls
    assert {s["retrieval_method"] for s in sources} == {"web"}

    messages = system.progress_messages(job_id, "retrieve")
    assert any(m.startswith("web: tavily failed") and "432" in m and "failed over to searxng" in m for m in messages), messages

    # The retrieval process remembers the spent quota: the next job does not ask Tavily.
    asked = tavily.count("search")
    second = system.submit("Who polished the lens of a lighthouse?", max_iterations=1, providers=["web"])
    assert system.wait_terminal(second, timeout=180)["status"] == "COMPLETED"
    assert tavily.count("search") == asked
    assert any(m.startswith("web: tavily skipped") for m in system.progress_messages(second, "retrieve"))
    assert {s["url"] for s in system.sources(second)} & searxng_urls
