"""Follow-up questions, the whole system as OS processes with the offline engine and
the loopback Tavily fake: a follow-up of a completed job starts from its research
(searches it ran are not run again; its sources and verified claims are carried over),
finds new sources of its own, and its report cites the parent's sources beside its own
and names the parent; the job links to its parent and the parent lists it. A job that
is not COMPLETED answers 409 naming its status, another user's or an unknown job 404,
and a bad question 422."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.fakes.anthropic import AnthropicFake
from tests.fakes.research_model import ResearchModel
from tests.fakes.tavily import FakeTavily, Page
from tests.integration.conftest import KEYS, running_system
from tests.integration.harness import System

ALICE, BOB = "key-alice", "key-bob"
QUESTION = "How did automation change lighthouse keeping?"
FOLLOW_UP = "What happened to lighthouse keepers after automation?"
# What the parent can find; the follow-up's searches find only AFTER, so any of these
# it cites came from its parent's research.
BEFORE = [
    Page("auto", "Automated lighthouses",
         "Automation replaced lighthouse keepers with electric lamps and remote monitoring.\n\n"
         "The last keepers left their lighthouses when automation of the lighthouse was complete.",
         url="https://lights.example.org/automation"),
    Page("lamps", "Lighthouse lamps and automation",
         "Automation of lighthouse keeping brought electric lamps that switch on at dusk without a keeper.\n\n"
         "Remote monitoring of automated lighthouses reports a failed lamp to the shore station.",
         url="https://lights.example.org/lamps"),
]
AFTER = [
    Page("retired", "Lighthouse keepers after automation",
         "After automation many lighthouse keepers became attendants who visit automated lighthouses for maintenance.\n\n"
         "Some former lighthouse keepers after automation guided visitors at lighthouse museums.",
         url="https://keepers.example.org/after-automation"),
]


@pytest.fixture(scope="module")
def tavily() -> Iterator[FakeTavily]:
    with FakeTavily(list(BEFORE)) as fake:
        yield fake


@pytest.fixture(scope="module")
def system(tmp_root: Path, postgres: Any, tavily: FakeTavily) -> Iterator[System]:
    env = {"RESEARCH_API_KEYS": KEYS, "TAVILY_API_KEY": tavily.api_key, "TAVILY_BASE_URL": tavily.base_url,
           "RESEARCH_FETCH_ALLOWED_HOSTS": "127.0.0.1", "RESEARCH_PROVIDER_RETRIES": "1",
           "RESEARCH_SEARCH_CACHE_TTL_S": "0",  # every search reaches the fake, which records its query
           "RESEARCH_MAX_QUESTION_CHARS": "200"}
    with running_system(tmp_root, postgres, env_overrides=env) as s:
        yield s


def _completed(system: System, job_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    job = system.wait_terminal(job_id, key=ALICE, timeout=120)
    assert job["status"] == "COMPLETED", f"{job}\n{system.logs()}"
    with system.client(ALICE) as c:
        return job, c.get(f"/api/research/jobs/{job_id}/result").json()


@pytest.fixture(scope="module")
def parent(system: System, tavily: FakeTavily) -> tuple[dict[str, Any], dict[str, Any]]:
    job_id = system.submit(QUESTION, key=ALICE, max_iterations=2, providers=["web"], report_depth="brief")
    job, result = _completed(system, job_id)
    assert result["output"]["sources"], result["report"]
    return job, result


def _follow_up(system: System, job_id: str, key: str = ALICE, **body: Any):  # noqa: ANN202 - httpx.Response
    with system.client(key) as c:
        return c.post(f"/api/research/jobs/{job_id}/follow-up", json=body)


def test_a_follow_up_starts_from_its_parent_and_cites_old_and_new_sources(
        system: System, tavily: FakeTavily, parent: tuple[dict[str, Any], dict[str, Any]]) -> None:
    parent_job, parent_result = parent
    parent_id = parent_job["job_id"]
    parent_urls = {s["url"] for s in parent_result["output"]["sources"]}
    parent_queries = {r["body"]["query"].casefold() for r in tavily.requests if r["path"] == "search"}
    tavily.pages = list(AFTER)
    before = len(tavily.requests)

    r = _follow_up(system, parent_id, question=FOLLOW_UP)
    assert r.status_code == 202, r.text
    accepted = r.json()
    assert accepted["parent_job_id"] == parent_id and accepted["status"] == "QUEUED", accepted
    job, result = _completed(system, accepted["job_id"])

    # The job links to its parent, carries its request, and the parent lists it.
    assert job["parent_job_id"] == parent_id and job["question"] == FOLLOW_UP, job
    assert job["providers"] == ["web"] and job["report_depth"] == "brief", job
    assert accepted["job_id"] in system.job(parent_id, key=ALICE)["follow_ups"]

    # It searched only what is new: none of the parent's searches ran again.
    queries = [r["body"]["query"].casefold() for r in tavily.requests[before:] if r["path"] == "search"]
    assert not set(queries) & parent_queries, (queries, parent_queries)

    # Its report answers the follow-up citing the parent's sources and its own.
    cited = {s["url"] for s in result["output"]["sources"]}
    assert cited & parent_urls, (cited, parent_urls, result["report"])
    new = {p.url for p in AFTER}
    with system.client(ALICE) as c:
        listed = {s["url"] for s in c.get(f"/api/research/jobs/{accepted['job_id']}/sources").json()["sources"]}
    assert new <= listed and parent_urls <= listed, listed
    assert cited & new, (cited, result["report"])
    line = next((ln for ln in result["report"].splitlines() if ln.startswith("- Follow-up of job ")), None)
    assert line is not None and parent_id in line, result["report"][-2000:]

    # A follow-up of a follow-up is a follow-up like any other.
    r = _follow_up(system, accepted["job_id"], question="Where do former lighthouse keepers guide visitors?")
    assert r.status_code == 202 and r.json()["parent_job_id"] == accepted["job_id"], r.text
    system.wait_terminal(r.json()["job_id"], key=ALICE, timeout=120)


def test_only_a_completed_job_of_ones_own_can_be_followed_up(
        system: System, parent: tuple[dict[str, Any], dict[str, Any]]) -> None:
    parent_id = parent[0]["job_id"]
    # Another user's job answers exactly like a missing one.
    r = _follow_up(system, parent_id, key=BOB, question=FOLLOW_UP)
    assert r.status_code == 404, r.text
    assert _follow_up(system, str(uuid.uuid4()), question=FOLLOW_UP).status_code == 404
    assert _follow_up(system, "not-a-job", question=FOLLOW_UP).status_code == 422
    # A job that did not complete: 409, the message naming its status.
    job_id = system.submit(QUESTION, key=ALICE, providers=["web"])
    with system.client(ALICE) as c:
        c.post(f"/api/research/jobs/{job_id}/cancel")
    status = system.job(job_id, key=ALICE)["status"]
    if status == "CANCELLED":
        r = _follow_up(system, job_id, question=FOLLOW_UP)
        assert r.status_code == 409 and "CANCELLED" in r.json()["message"], r.text
    else:  # it completed before the cancel reached it
        assert status == "COMPLETED", status
    running = system.submit(QUESTION, key=ALICE, providers=["web"])
    r = _follow_up(system, running, question=FOLLOW_UP)
    now = system.job(running, key=ALICE)["status"]
    if now != "COMPLETED":
        assert r.status_code == 409 and "only a COMPLETED job" in r.json()["message"], r.text
    system.wait_terminal(running, key=ALICE, timeout=120)


@pytest.mark.parametrize("body, field", [
    ({"question": ""}, "question"),
    ({"question": "   "}, "question"),
    ({"question": "\u200b\u200b"}, "question"),
    ({"question": "a\x00b"}, "question"),
    ({"question": "x" * 201}, "question"),  # RESEARCH_MAX_QUESTION_CHARS
    ({}, "question"),
    ({"question": FOLLOW_UP, "max_iterations": 3}, "max_iterations"),  # the parent's request is kept
])
def test_a_bad_follow_up_question_is_refused(
        system: System, parent: tuple[dict[str, Any], dict[str, Any]], body: dict[str, Any], field: str) -> None:
    with system.client(ALICE) as c:
        r = c.post(f"/api/research/jobs/{parent[0]['job_id']}/follow-up", json=body)
    assert r.status_code == 422, r.text
    assert field in r.text, r.text


async def test_the_mcp_tool_follows_up_a_trace_id(system: System, parent: tuple[dict[str, Any], dict[str, Any]]) -> None:
    parent_id = parent[0]["job_id"]
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {ALICE}"}, timeout=httpx2.Timeout(30, read=300)) as client,
        streamable_http_client(f"{system.url}/mcp", http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tool = next(t for t in (await session.list_tools()).tools if t.name == "deep_research")
        assert "trace_id" in tool.input_schema["properties"]
        result = await session.call_tool("deep_research", {"question": FOLLOW_UP, "trace_id": parent_id})
        assert not result.is_error, result.content
        output = result.structured_content
        assert output is not None and output["status"] in ("completed", "max_iterations_reached"), output
        assert output["trace_id"] != parent_id and "[1]" in output["answer"], output
        job = system.job(output["trace_id"], key=ALICE)
        assert job["parent_job_id"] == parent_id and job["report_depth"] == "brief", job
        # Another user's job, or a context given with a follow-up, is a tool error naming why.
        unknown = await session.call_tool("deep_research", {"question": FOLLOW_UP, "trace_id": str(uuid.uuid4())})
        assert unknown.is_error and "not found" in unknown.content[0].text, unknown.content
        mixed = await session.call_tool("deep_research", {"question": FOLLOW_UP, "trace_id": parent_id, "context": "x"})
        assert mixed.is_error and "context" in mixed.content[0].text, mixed.content


@pytest.fixture(scope="module")
def model() -> Iterator[AnthropicFake]:
    with AnthropicFake(responder=ResearchModel()) as fake:
        yield fake


@pytest.fixture(scope="module")
def model_system(tmp_root: Path, postgres: Any, model: AnthropicFake) -> Iterator[tuple[System, FakeTavily]]:
    with FakeTavily(list(BEFORE)) as web:
        env = {**model.env(), "LLM_MAX_RETRIES": "1", "RESEARCH_API_KEYS": KEYS, "TAVILY_API_KEY": web.api_key,
               "TAVILY_BASE_URL": web.base_url, "RESEARCH_FETCH_ALLOWED_HOSTS": "127.0.0.1",
               "RESEARCH_PROVIDER_RETRIES": "1", "RESEARCH_SEARCH_CACHE_TTL_S": "0"}
        with running_system(tmp_root, postgres, env_overrides=env) as s:
            yield s, web


def test_a_model_planner_is_told_what_the_parent_established(
        model_system: tuple[System, FakeTavily], model: AnthropicFake) -> None:
    system, web = model_system
    parent_id = system.submit(QUESTION, key=ALICE, max_iterations=1, providers=["web"])
    assert system.wait_terminal(parent_id, key=ALICE, timeout=120)["status"] == "COMPLETED"
    with system.client(ALICE) as c:
        memory = c.get(f"/api/research/jobs/{parent_id}/result").json()["memory"]
    web.pages = list(AFTER)
    delivered = len(model.delivered)
    r = _follow_up(system, parent_id, question=FOLLOW_UP)
    assert r.status_code == 202, r.text
    job = system.wait_terminal(r.json()["job_id"], key=ALICE, timeout=120)
    assert job["status"] == "COMPLETED", f"{job}\n{system.logs()}"
    briefs = [q for q in model.delivered[delivered:] if q.forced_tool == "record_brief"]
    assert briefs, {q.forced_tool for q in model.delivered[delivered:]}
    prompt = briefs[0].prompt
    assert FOLLOW_UP in prompt and f"follows up earlier research (job {parent_id})" in prompt, prompt
    insight = " ".join(memory["insights"][0]["text"].split())
    assert insight in " ".join(prompt.split()), (insight, prompt)
    with system.client(ALICE) as c:
        result = c.get(f"/api/research/jobs/{job['job_id']}/result").json()
    assert f"Follow-up of job {parent_id}" in result["report"], result["report"][-2000:]
