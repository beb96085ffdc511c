"""The job deadline end to end: a request's ``time_budget_s``, every stage handing on
what it has when the deadline passes, and the job completing with a partial report
that says why, within two seconds of the deadline.

Whole systems as OS processes: ``RESEARCH_CHAOS`` holds one stage past the deadline
(the runner's backstop cuts it); the loopback Tavily fake that never answers and the
Anthropic fake whose report writer never answers are cut by the stages themselves.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import nats
import nats.errors
import pytest

from shared import subjects
from shared.subjects import Stage
from tests.fakes.anthropic import AnthropicFake
from tests.fakes.llm import Delay, RecordedRequest, Step
from tests.fakes.report_writer import ReportWriter
from tests.fakes.tavily import FakeTavily, Page
from tests.integration.conftest import running_system
from tests.integration.harness import System, fake_providers_env

BUDGET_S = 4.0  # short, yet long enough for the plan and the local searches to finish first
LATE_MAX_S = 2.0  # how long past the deadline the job may complete
NEVER_S = 3_600.0  # a fake that "never" answers (the stages abandon the request)

PAGES = [
    Page("lamps", "Lighthouse lamps and lenses",
         "Fresnel lenses bend the light of a lighthouse lamp into a horizontal beam seen far out to sea."),
]


def _completed(system: System, job_id: str, budget_s: float) -> tuple[dict[str, Any], dict[str, Any], float]:
    """(job, result, seconds past the deadline it completed)."""
    job = system.wait_terminal(job_id, timeout=budget_s + 60)
    assert job["status"] == "COMPLETED", f"{job}\n{system.logs()}"
    assert job["time_budget_s"] == budget_s
    deadline = datetime.fromisoformat(job["started_at"]) + timedelta(seconds=budget_s)
    late = (datetime.fromisoformat(job["finished_at"]) - deadline).total_seconds()
    with system.client() as c:
        result = c.get(f"/api/research/jobs/{job_id}/result").json()
    return job, result, late


def _assert_partial_for_the_deadline(result: dict[str, Any], *, cut: str) -> None:
    assert result["partial"] is True, result["partial_reason"]
    reason = result["partial_reason"]
    assert "time budget ran out" in reason and cut in reason, reason
    assert "**Partial report:** the job's time budget ran out" in result["report"]


def _plan_command(system: System, job_id: str) -> dict[str, Any]:
    """The plan command the gateway sent for the job, read back from the jobs stream."""
    async def read() -> dict[str, Any]:
        nc = await nats.connect(servers=system.nats_url.split(","))  # type: ignore[union-attr]
        try:
            sub = await nc.jetstream().subscribe(subjects.stage_subject(Stage.PLAN), stream=subjects.JOBS_STREAM,
                                                 ordered_consumer=True)
            while True:
                try:
                    msg = await sub.next_msg(timeout=2)
                except nats.errors.TimeoutError:
                    raise AssertionError(f"no plan command for job {job_id}") from None
                body = json.loads(msg.data)
                if body["job_id"] == job_id:
                    return body
        finally:
            await nc.close()

    return asyncio.run(read())


# -- a stage that overruns: the runner's backstop -------------------------------------------


@pytest.fixture(params=["plan", "retrieve", "digest", "synthesize"])
def stalled(request: pytest.FixtureRequest, tmp_root: Path, postgres: Any) -> Iterator[tuple[str, System]]:
    """A system whose ``request.param`` stage sleeps a minute before working."""
    stage = request.param
    env = {"RESEARCH_CHAOS": f"{stage}:delay=60", "RESEARCH_DEADLINE_GRACE_S": "0.5"}
    with running_system(tmp_root, postgres, env_overrides=env) as s:
        yield stage, s


def test_a_stage_held_past_the_deadline_is_cut_and_the_job_completes_partial(stalled: tuple[str, System]) -> None:
    stage, system = stalled
    job_id = system.submit("How do lighthouses use Fresnel lenses?", max_iterations=1, time_budget_s=BUDGET_S)
    job, result, late = _completed(system, job_id, BUDGET_S)
    assert 0 <= late <= LATE_MAX_S, f"completed {late:.2f}s after the deadline\n{system.logs()}"
    _assert_partial_for_the_deadline(result, cut=f"{stage}: the stage was still working")
    if stage == "synthesize":
        assert "the offline engine wrote it" in result["report"]  # the methodology says who wrote it
    else:
        # Cut before synthesis: the offline report over what the job had by then.
        assert result["engine"] == "offline"


# -- stages that stop at the deadline themselves -----------------------------------------------


@pytest.fixture(scope="module")
def tavily() -> Iterator[FakeTavily]:
    with FakeTavily(PAGES) as fake:
        yield fake


@pytest.fixture(scope="module")
def claude() -> Iterator[AnthropicFake]:
    with AnthropicFake(responder=ReportWriter()) as fake:
        yield fake


@pytest.fixture(scope="module")
def system(tmp_root: Path, postgres: Any, tavily: FakeTavily, claude: AnthropicFake) -> Iterator[System]:
    env = {
        **fake_providers_env(claude, tavily), "LLM_MAX_RETRIES": "0", "DIGEST_POLICY": "off",
        # Longer than any budget here: the deadline, not the provider timeout, cuts a search.
        "RESEARCH_PROVIDER_TIMEOUT_S": "120", "RESEARCH_PROVIDER_RETRIES": "0",
        "RESEARCH_MAX_TIME_BUDGET_S": "900",
    }
    with running_system(tmp_root, postgres, env_overrides=env) as s:
        yield s


def test_searches_still_running_at_the_deadline_are_cut_and_finished_ones_kept(
    system: System, tavily: FakeTavily, claude: AnthropicFake,
) -> None:
    claude.responder = ReportWriter()
    tavily.latency_s = NEVER_S
    try:
        job_id = system.submit("Why were lighthouse keepers replaced by automation?", max_iterations=1,
                               providers=["web", "rag"], time_budget_s=BUDGET_S)
        _, result, late = _completed(system, job_id, BUDGET_S)
    finally:
        tavily.latency_s = 0.0
    assert 0 <= late <= LATE_MAX_S, f"completed {late:.2f}s after the deadline\n{system.logs()}"
    _assert_partial_for_the_deadline(result, cut="retrieve:")
    assert "searches cut (web" in result["partial_reason"], result["partial_reason"]
    assert tavily.count("search") >= 1  # the web searches were under way when they were cut
    with system.client() as c:
        sources = c.get(f"/api/research/jobs/{job_id}/sources").json()["sources"]
    methods = {s["retrieval_method"] for s in sources}
    assert methods == {"rag"}, methods  # the local searches had finished: their sources are kept


def test_a_model_writing_the_report_at_the_deadline_gives_way_to_the_offline_report(
    system: System, claude: AnthropicFake,
) -> None:
    writer = ReportWriter()

    def sleepy(request: RecordedRequest) -> Step:
        return Delay(NEVER_S) if request.forced_tool == "write_report" else writer(request)

    claude.responder = sleepy
    budget = 8.0  # planning and scoring with the model first
    try:
        job_id = system.submit("How did lighthouse keepers keep the lamps lit?", max_iterations=1,
                               providers=["rag"], time_budget_s=budget)
        _, result, late = _completed(system, job_id, budget)
    finally:
        claude.responder = ReportWriter()
    assert 0 <= late <= LATE_MAX_S, f"completed {late:.2f}s after the deadline\n{system.logs()}"
    assert "write_report" in writer.seen or any(r.forced_tool == "write_report" for r in claude.requests)
    _assert_partial_for_the_deadline(result, cut="synthesize: the model's report")
    assert "the job's deadline came while the model was writing it" in result["report"]
    assert result["claims"], "scoring finished with the model before the deadline"


def test_a_time_budget_above_the_bound_is_refused(system: System) -> None:
    with system.client() as c:
        r = c.post("/api/research/jobs", json={"question": "How do lighthouses work?", "time_budget_s": 901})
        assert r.status_code == 422, r.text
        detail = r.json()["detail"][0]
        assert detail["loc"] == ["body", "time_budget_s"] and "RESEARCH_MAX_TIME_BUDGET_S" in detail["msg"]
        assert c.post("/api/research/jobs", json={"question": "How do lighthouses work?", "time_budget_s": 0}).status_code == 422


def test_jobs_without_a_budget_keep_the_default_deadline(system: System) -> None:
    job_id = system.submit("What fuels did lighthouse lamps burn?", max_iterations=1, providers=["rag"])
    job = system.wait_terminal(job_id, timeout=90)
    assert job["status"] == "COMPLETED" and job["time_budget_s"] is None and not job["partial"], job
    command = _plan_command(system, job_id)
    deadline = datetime.fromisoformat(command["deadline_at"]) - datetime.fromisoformat(job["started_at"])
    assert abs(deadline.total_seconds() - 600) < 1, deadline  # RESEARCH_JOB_DEADLINE_S
    assert command["request"]["time_budget_s"] is None
    with system.client() as c:
        result = c.get(f"/api/research/jobs/{job_id}/result").json()
    assert result["partial"] is False and result["partial_reason"] is None
