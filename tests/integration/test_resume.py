"""Resuming a job from its last finished stage, the whole system as OS processes:
a job whose synthesis fails on every attempt (RESEARCH_CHAOS) fails again when resumed
(its new failed event is not taken for a duplicate), is resumed again once the
synthesis process works and completes without a single search repeated (the
loopback Tavily fake counts them), its model spend carried over; a cancelled job
resumes, and a command its cancelled run left waiting for a stage is dropped rather
than run beside the resumed run; a queued, running or completed job cannot be resumed
(409), nor can another user's (404)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic import AnthropicFake
from tests.fakes.research_model import ResearchModel
from tests.fakes.tavily import FakeTavily, Page
from tests.integration.conftest import KEYS, running_system
from tests.integration.harness import System

ALICE, BOB = "key-alice", "key-bob"
QUESTION = "How did automation change lighthouse keeping?"
PAGES = [
    Page("auto", "Automated lighthouses",
         "Automation replaced lighthouse keepers with electric lamps and remote monitoring.\n\n"
         "The last keepers left their lighthouses when automation was complete.",
         url="https://lights.example.org/automation"),
    Page("keepers", "The work of a lighthouse keeper",
         "A lighthouse keeper trimmed the wick and wound the clockwork of the lamp every night.",
         url="https://lights.example.org/keepers"),
]


@pytest.fixture(scope="module")
def tavily() -> Iterator[FakeTavily]:
    with FakeTavily(PAGES) as fake:
        yield fake


@pytest.fixture(scope="module")
def model() -> Iterator[AnthropicFake]:
    with AnthropicFake(responder=ResearchModel()) as fake:
        yield fake


@pytest.fixture(scope="module")
def system(tmp_root: Path, postgres: Any, tavily: FakeTavily, model: AnthropicFake) -> Iterator[System]:
    env = {
        **model.env(), "LLM_MAX_RETRIES": "1", "RESEARCH_API_KEYS": KEYS,
        "TAVILY_API_KEY": tavily.api_key, "TAVILY_BASE_URL": tavily.base_url,
        "RESEARCH_FETCH_ALLOWED_HOSTS": "127.0.0.1", "RESEARCH_PROVIDER_RETRIES": "1",
        # No search cache: a repeated search would reach the fake, where it is counted.
        "RESEARCH_SEARCH_CACHE_TTL_S": "0",
        # Synthesis fails on every attempt until its process is replaced by one without this.
        "RESEARCH_CHAOS": "synthesize:fail", "RESEARCH_MAX_DELIVER": "2",
        # Resumed jobs here never reuse an earlier job's research.
        "RESEARCH_REUSE_MAX_AGE_S": "0",
    }
    with running_system(tmp_root, postgres, env_overrides=env) as s:
        yield s


def _post(system: System, path: str, key: str) -> Any:
    with system.client(key) as c:
        return c.post(path)


def _working_synthesis(system: System) -> None:
    """Replace the synthesis process that fails on every attempt by one that works."""
    if "synthesis-fixed" not in system.sup.procs:  # type: ignore[union-attr]
        system.kill("synthesis")
        system.spawn("synthesis", "synthesis-fixed", RESEARCH_CHAOS="")


def _stage_states(system: System, job_id: str, stage: str) -> list[str]:
    return [e["state"] for e in system.events(job_id) if e.get("type") == "stage" and e.get("stage") == stage]


def _stage_starts(system: System, job_id: str, stage: str) -> int:
    return sum(1 for e in system.events(job_id)
               if e.get("type") == "stage" and e.get("stage") == stage and e.get("state") == "started")


def test_a_job_failed_in_synthesis_resumes_to_completed_without_searching_again(system: System, tavily: FakeTavily) -> None:
    job_id = system.submit(QUESTION, key=ALICE, max_iterations=1, providers=["web", "rag"])
    failed = system.wait_terminal(job_id, key=ALICE, timeout=90)
    assert failed["status"] == "FAILED" and "synthesize" in failed["error"], failed
    searches, retrievals = tavily.count("search"), _stage_starts(system, job_id, "retrieve")
    assert searches > 0 and retrievals >= 1
    spent = failed["token_usage"]["input_tokens"] + failed["token_usage"]["output_tokens"]
    assert spent > 0  # planning, digests and claims were written by the model

    # Another user's job answers like a missing one; the failed job is still FAILED.
    r = _post(system, f"/api/research/jobs/{job_id}/resume", BOB)
    assert r.status_code == 404, r.text
    assert system.job(job_id, key=ALICE)["status"] == "FAILED"

    # Resumed while synthesis still fails: it fails again, and says so (its failed event
    # has an id of its own, not a duplicate of the first run's that JetStream would drop).
    r = _post(system, f"/api/research/jobs/{job_id}/resume", ALICE)
    assert r.status_code == 202, r.text
    assert r.json()["status"] == "QUEUED" and r.json()["resumes"] == 1 and r.json()["error"] is None
    again = system.wait_terminal(job_id, key=ALICE, timeout=90)
    assert again["status"] == "FAILED" and "synthesize" in again["error"], again

    _working_synthesis(system)
    r = _post(system, f"/api/research/jobs/{job_id}/resume", ALICE)
    assert r.status_code == 202 and r.json()["resumes"] == 2, r.text

    done = system.wait_terminal(job_id, key=ALICE, timeout=90)
    assert done["status"] == "COMPLETED", f"{done}\n{system.logs()}"
    assert tavily.count("search") == searches  # no search repeated
    assert _stage_starts(system, job_id, "retrieve") == retrievals  # nor any stage before synthesis
    assert _stage_starts(system, job_id, "synthesize") >= 5  # 2 failed attempts, 2 more when resumed, then the last
    usage = done["token_usage"]
    assert usage["input_tokens"] + usage["output_tokens"] >= spent  # the count continued from what was spent
    with system.client(ALICE) as c:
        result = c.get(f"/api/research/jobs/{job_id}/result").json()
    assert result["report"] and result["output"]["sources"]

    r = _post(system, f"/api/research/jobs/{job_id}/resume", ALICE)
    assert r.status_code == 409 and "COMPLETED" in r.json()["message"], r.text


def test_a_queued_or_running_job_cannot_be_resumed(system: System) -> None:
    job_id = system.submit(QUESTION + " In Scotland?", key=ALICE, max_iterations=1, providers=["rag"])
    r = _post(system, f"/api/research/jobs/{job_id}/resume", ALICE)
    assert r.status_code == 409, r.text
    assert "only a FAILED, EXPIRED or CANCELLED job can be resumed" in r.json()["message"]
    assert system.wait_terminal(job_id, key=ALICE, timeout=90)["status"] == "COMPLETED"


def test_a_cancelled_job_resumes(system: System) -> None:
    _working_synthesis(system)
    job_id = system.submit(QUESTION + " In Norway?", key=ALICE, max_iterations=1, providers=["rag"])
    with system.client(ALICE) as c:
        r = c.post(f"/api/research/jobs/{job_id}/cancel")
    assert r.status_code == 200, r.text
    assert system.wait_terminal(job_id, key=ALICE)["status"] == "CANCELLED"
    time.sleep(0.5)  # whatever stage held it has dropped it
    r = _post(system, f"/api/research/jobs/{job_id}/resume", ALICE)
    assert r.status_code == 202, r.text
    done = system.wait_terminal(job_id, key=ALICE, timeout=90)
    assert done["status"] == "COMPLETED", f"{done}\n{system.logs()}"
    assert done["resumes"] == 1


def test_a_command_left_by_the_cancelled_run_is_dropped_when_the_job_resumes(system: System) -> None:
    """The cancelled run handed the job to scoring, whose command waits in the stream
    (no scoring process is running); the resumed run's command for scoring joins it.
    Scoring drops the first (its run is stopped) and works on the second, so the two
    runs never work side by side: one scoring pass, one synthesis, one result."""
    _working_synthesis(system)
    system.kill("scoring")
    try:
        job_id = system.submit(QUESTION + " In Wales?", key=ALICE, max_iterations=1, providers=["rag"])
        deadline = time.monotonic() + 60
        while "done" not in _stage_states(system, job_id, "digest"):
            assert time.monotonic() < deadline, f"digest never finished\n{system.logs()}"
            time.sleep(0.2)
        with system.client(ALICE) as c:
            assert c.post(f"/api/research/jobs/{job_id}/cancel").status_code == 200
        assert system.wait_terminal(job_id, key=ALICE)["status"] == "CANCELLED"
        r = _post(system, f"/api/research/jobs/{job_id}/resume", ALICE)
        assert r.status_code == 202, r.text
    finally:
        system.spawn("scoring", "scoring-after-resume")
    done = system.wait_terminal(job_id, key=ALICE, timeout=90)
    assert done["status"] == "COMPLETED" and done["resumes"] == 1, f"{done}\n{system.logs()}"
    scoring = _stage_states(system, job_id, "score")
    assert scoring.count("skipped") == 1 and scoring.count("started") == 1, scoring
    assert _stage_states(system, job_id, "synthesize").count("started") == 1
    assert system.sql("SELECT count(*) AS n FROM research_results WHERE job_id = $1", job_id)[0]["n"] == 1
