"""The per-iteration trace (``GET /api/research/jobs/{id}/trace``) and the research
memory, through the whole system: real nats-server, PostgreSQL and stage processes, a
loopback Tavily that counts its searches, and the loopback Anthropic fake with a
research model that records every prompt."""

from __future__ import annotations

import asyncio
import re
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nats
import pytest

from shared import subjects
from shared.research.events import StageEvent, StageState, StageTrace, TraceQuery
from shared.subjects import Stage
from shared.research.text import normalize_query
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.llm import RecordedRequest, Step, ToolCall
from tests.fakes.report_writer import blocks
from tests.fakes.research_model import ResearchModel
from tests.fakes.tavily import FakeTavily, Page
from tests.integration.conftest import KEYS, running_system
from tests.integration.harness import System

ALICE, BOB = "key-alice", "key-bob"
PAGES = [
    Page("keepers", "Lighthouse keepers and automation",
         "Automation replaced lighthouse keepers during the twentieth century.\n\n"
         "Automatic lamp changers and fog detectors let a lighthouse run without a keeper."),
    Page("lenses", "How lighthouse lenses work",
         "Fresnel lenses use concentric prisms to bend the light of a lighthouse lamp into a horizontal beam."),
]
ITERATION_KEYS = {"iteration", "queries", "results", "checklist", "claims_kept", "claims_rejected", "stages"}


@pytest.fixture(scope="module")
def tavily() -> Iterator[FakeTavily]:
    with FakeTavily(PAGES) as fake:
        yield fake


@pytest.fixture(scope="module")
def offline_system(tmp_root: Path, postgres, tavily: FakeTavily) -> Iterator[System]:  # noqa: ANN001
    env = {
        "RESEARCH_API_KEYS": KEYS, "TAVILY_API_KEY": tavily.api_key, "TAVILY_BASE_URL": tavily.base_url,
        "RESEARCH_FETCH_ALLOWED_HOSTS": "127.0.0.1", "RESEARCH_PROVIDER_RETRIES": "1",
        # No search cache: a repeated search would reach the fake and be counted.
        "RESEARCH_SEARCH_CACHE_TTL_S": "0",
    }
    with running_system(tmp_root, postgres, env_overrides=env) as s:
        yield s


def _trace(system: System, job_id: str, key: str = ALICE) -> dict[str, Any]:
    with system.client(key) as c:
        r = c.get(f"/api/research/jobs/{job_id}/trace")
    assert r.status_code == 200, r.text
    return r.json()


def _finished_trace(system: System, job_id: str, key: str = ALICE) -> dict[str, Any]:
    """The trace of a completed job once synthesis's row is in: the progress consumer
    may store that stage's done event just after the outcome consumer stored the result."""
    deadline = time.monotonic() + 15
    while True:
        trace = _trace(system, job_id, key)
        stages = [st["stage"] for it in trace["iterations"] for st in it["stages"]]
        if "synthesize" in stages or time.monotonic() > deadline:
            return trace
        time.sleep(0.1)


def _publish(system: System, *events: StageEvent) -> None:
    async def publish() -> None:
        nc = await nats.connect(servers=system.nats_url.split(","))  # type: ignore[union-attr]
        try:
            js = nc.jetstream()
            for event in events:
                await js.publish(subjects.event_subject(event.job_id, event.type), event.model_dump_json().encode())
        finally:
            await nc.close()

    asyncio.run(publish())


def _purge_events(system: System) -> None:
    async def purge() -> None:
        nc = await nats.connect(servers=system.nats_url.split(","))  # type: ignore[union-attr]
        try:
            await nc.jetstream().purge_stream(subjects.EVENTS_STREAM)
        finally:
            await nc.close()

    asyncio.run(purge())


def test_trace_of_a_two_pass_job_outlives_its_events(offline_system: System, tavily: FakeTavily) -> None:
    s = offline_system
    # The offline engine leaves this question's items partly covered: a second pass runs.
    job_id = s.submit("What are the pros and cons of lighthouse automation?", key=ALICE,
                      max_iterations=2, providers=["rag", "web"])
    job = s.wait_terminal(job_id, key=ALICE, timeout=90)
    assert job["status"] == "COMPLETED", (job["error"], s.logs())
    trace = _finished_trace(s, job_id)
    assert trace["job_id"] == job_id and trace["status"] == "COMPLETED"
    iterations = trace["iterations"]
    assert [i["iteration"] for i in iterations] == [0, 1], iterations
    for entry in iterations:
        assert ITERATION_KEYS <= set(entry)
        assert entry["queries"] and {q["provider"] for q in entry["queries"]} == {"rag", "web"}
        assert entry["checklist"] and all(set(c) == {"id", "description", "status"} for c in entry["checklist"])
        assert set(entry["results"]) == {"rag", "web"} and all(r["count"] >= 0 for r in entry["results"].values())
        assert entry["claims_kept"] is not None and entry["claims_rejected"] is not None
        stages = [st["stage"] for st in entry["stages"]]
        assert stages[:4] == ["plan", "retrieve", "digest", "score"]
        assert all(st["duration_s"] > 0 and st["tokens"] == {"input": 0, "output": 0, "cost_usd": 0.0, "unpriced_models": []} for st in entry["stages"])
    assert iterations[1]["stages"][-1]["stage"] == "synthesize"
    assert sum(r["new_sources"] for r in iterations[0]["results"].values()) > 0

    # A search is never run twice, on any pass: the memory lists each once, and the
    # fake Tavily saw each web query once.
    run = [(q["provider"], normalize_query(q["text"])) for i in iterations for q in i["queries"]]
    assert len(run) == len(set(run)), run
    web = Counter(normalize_query(r["body"]["query"]) for r in tavily.requests if r["path"] == "search")
    assert web and max(web.values()) == 1, web
    searched = {(e["provider"], normalize_query(e["text"])) for e in trace["memory"]["searched"]}
    assert set(run) == searched
    assert {e["iteration"] for e in trace["memory"]["searched"]} == {0, 1}
    # The result stores the memory the report was written from: the trace's.
    with s.client(ALICE) as c:
        assert c.get(f"/api/research/jobs/{job_id}/result").json()["memory"] == trace["memory"]

    # Stored once per (job, stage, iteration), however often the events came.
    rows = s.sql("SELECT stage, iteration FROM research_trace_stages WHERE job_id = $1", job_id)
    assert len(rows) == len({(r["stage"], r["iteration"]) for r in rows}) == sum(len(i["stages"]) for i in iterations)

    # Another user's job answers like a missing one.
    with s.client(BOB) as c:
        assert c.get(f"/api/research/jobs/{job_id}/trace").status_code == 404

    # A second done event for a stored (stage, iteration), as a redelivered stage sends
    # it, changes nothing: the first one stands. A marker for a new pass, published
    # after it on the same stream, shows when the gateway has read both.
    again = StageEvent(job_id=job_id, stage=Stage.RETRIEVE, iteration=0, state=StageState.DONE, delivery=2,
                       trace=StageTrace(duration_s=9.0, queries=[TraceQuery(provider="web", text="never sent")]))
    marker = StageEvent(job_id=job_id, stage=Stage.DIGEST, iteration=7, state=StageState.DONE,
                        trace=StageTrace(duration_s=1.0))
    _publish(s, again, marker)
    deadline = time.monotonic() + 15
    while (later := _trace(s, job_id))["iterations"][-1]["iteration"] != 7:
        assert time.monotonic() < deadline, later
        time.sleep(0.1)
    assert later["iterations"][:2] == trace["iterations"]
    trace = later

    # The events stream forgets the job; the trace does not.
    _purge_events(s)
    assert s.events(job_id) == []
    assert _trace(s, job_id) == trace


def test_trace_answers_for_failed_and_cancelled_jobs(offline_system: System) -> None:
    s = offline_system
    failed = s.submit("Anything about tides?", key=BOB, corpora=["nope"], providers=["rag"], max_iterations=1)
    assert s.wait_terminal(failed, key=BOB)["status"] == "FAILED"
    trace = _trace(s, failed, BOB)
    assert trace["status"] == "FAILED" and trace["memory"]["searched"] == []

    # Too short to plan from: the offline planner asks back and the job waits, unfinished.
    waiting = s.submit("Is it safe?", key=BOB, clarify=True, max_iterations=2, providers=["rag"])
    deadline = time.monotonic() + 30
    while s.job(waiting, key=BOB)["status"] != "AWAITING_INPUT":
        assert time.monotonic() < deadline, s.job(waiting, key=BOB)
        time.sleep(0.1)
    # The plan stage's done event is stored by the progress consumer, the wait by the
    # outcome consumer: either may come first.
    while not (trace := _trace(s, waiting, BOB))["iterations"]:
        assert time.monotonic() < deadline, trace
        time.sleep(0.1)
    assert trace["status"] == "AWAITING_INPUT"
    assert [st["stage"] for st in trace["iterations"][0]["stages"]] == ["plan"], trace
    with s.client(BOB) as c:
        assert c.post(f"/api/research/jobs/{waiting}/cancel").status_code == 200
    assert _trace(s, waiting, BOB)["status"] == "CANCELLED"


# -- with a model ------------------------------------------------------------------------


class OpenItemsModel(ResearchModel):
    """The research model, except that coverage leaves every item partly covered, so
    the job takes a refinement pass (and the planner writes its queries)."""

    def __call__(self, request: RecordedRequest) -> Step:
        if request.forced_tool == "record_coverage":
            items = [line.split(":", 1)[0].strip() for _, text in blocks(request.prompt, "checklist")
                     for line in text.splitlines() if ":" in line]
            return ToolCall(input={"items": [{"item_id": i, "status": "partial", "claim_ids": [],
                                              "reason": "only part of it is answered"} for i in items]})
        return super().__call__(request)


@pytest.fixture(scope="module")
def claude() -> Iterator[AnthropicFake]:
    with AnthropicFake(responder=OpenItemsModel()) as fake:
        yield fake


def test_trace_tokens_per_stage_and_memory_in_the_refinement_prompt(tmp_root: Path, postgres, claude: AnthropicFake) -> None:  # noqa: ANN001
    env = {**claude.env(), "RESEARCH_API_KEYS": KEYS, "LLM_MAX_RETRIES": "1"}
    with running_system(tmp_root, postgres, env_overrides=env) as s:
        job_id = s.submit("How did automation change lighthouse keeping?", key=ALICE, max_iterations=2, providers=["rag"])
        job = s.wait_terminal(job_id, key=ALICE, timeout=120)
        assert job["status"] == "COMPLETED", job
        trace = _finished_trace(s, job_id)
        with s.client(ALICE) as c:
            usage = c.get(f"/api/research/jobs/{job_id}/result").json()["tokenUsage"]

    assert [i["iteration"] for i in trace["iterations"]] == [0, 1]
    # Every stage's tokens for each pass add up to what the job reports per stage.
    per_stage: Counter[str] = Counter()
    for entry in trace["iterations"]:
        for st in entry["stages"]:
            assert st["duration_s"] > 0
            per_stage[st["stage"] + ":input"] += st["tokens"]["input"]
            per_stage[st["stage"] + ":output"] += st["tokens"]["output"]
    for stage, used in usage["by_stage"].items():
        assert per_stage[f"{stage}:input"] == used["input_tokens"] > 0, (stage, per_stage, usage)
        assert per_stage[f"{stage}:output"] == used["output_tokens"] > 0
    assert trace["iterations"][0]["stages"][0]["tokens"]["input"] > 0  # the plan, written by the model

    # The open gaps of the memory after pass 0, with what was tried, reached the
    # refinement prompt as data.
    gaps = {c["id"] for c in trace["iterations"][0]["checklist"] if c["status"] != "satisfied"}
    assert gaps
    refinements = [r for r in claude.delivered if r.forced_tool == "record_queries"]
    assert refinements, [r.forced_tool for r in claude.delivered]
    memory = "\n".join(text for _, text in blocks(refinements[0].prompt, "memory"))
    for item in gaps:
        assert re.search(rf"^- {re.escape(item)} \(partial, open since pass 1\): .+ \| tried: .+$", memory, re.M), memory
    assert "<memory>" in refinements[0].prompt
    assert trace["memory"]["gaps"] and any(g["tried"] for g in trace["memory"]["gaps"])
