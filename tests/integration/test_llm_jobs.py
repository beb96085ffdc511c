"""Whole jobs through the gateway with LLM_PROVIDER=anthropic against the loopback
Anthropic fake: the stage processes use the real SDK with ANTHROPIC_BASE_URL."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.anthropic import AnthropicFake
from tests.fakes.llm import Fail
from tests.integration.conftest import running_system
from tests.integration.harness import System

QUESTION = "How did automation change lighthouse keeping?"


@pytest.fixture(scope="module")
def claude() -> Iterator[AnthropicFake]:
    with AnthropicFake() as fake:
        yield fake


@pytest.fixture(scope="module")
def claude_system(tmp_root: Path, postgres, claude: AnthropicFake) -> Iterator[System]:  # noqa: ANN001
    env = {**claude.env(), "LLM_MAX_RETRIES": "1", "RESEARCH_MAX_CONCURRENCY": "1"}
    with running_system(tmp_root, postgres, env_overrides=env) as s:
        yield s


def _wait_status(system: System, job_id: str, status: str, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = system.job(job_id)
        if job["status"] == status:
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} never reached {status}: {system.job(job_id)}\n{system.logs()}")


def test_a_job_plans_with_claude_and_reports_its_tokens(claude_system: System, claude: AnthropicFake) -> None:
    before_in, before_out, before_n = claude.total_input_tokens, claude.total_output_tokens, len(claude.delivered)
    job_id = claude_system.submit(QUESTION, max_iterations=2)
    job = claude_system.wait_terminal(job_id)
    assert job["status"] == "COMPLETED", job
    with claude_system.client() as c:
        result = c.get(f"/api/research/jobs/{job_id}/result").json()
    usage = result["tokenUsage"]
    calls = len(claude.delivered) - before_n
    assert calls >= 2  # the brief and the sub-questions at least
    assert usage["input_tokens"] == claude.total_input_tokens - before_in
    assert usage["output_tokens"] == claude.total_output_tokens - before_out
    assert usage["llm_calls"] == calls == sum(s["calls"] for s in usage["by_stage"].values())
    assert usage["by_stage"]["plan"]["calls"] >= 2
    assert job["token_usage"] == {"input_tokens": usage["input_tokens"], "output_tokens": usage["output_tokens"], "llm_calls": calls,
                                  "cost_usd": round(usage["cost_usd"], 6)}
    assert usage["cost_usd"] > 0  # the fake's model is priced as its family
    # The model plans and writes; whatever it could not write is labelled as offline.
    assert result["engine"].startswith("anthropic:claude-sonnet-5-5")
    assert ("Written by anthropic:claude-sonnet-5-5" in result["report"]
            or "Planned by anthropic:claude-sonnet-5-5" in result["report"]), result["report"][:400]
    # The question reached the model inside its data block, never as instructions.
    first = claude.delivered[before_n]
    assert f"<question>\n{QUESTION}\n</question>" in first.prompt


def test_a_rejected_key_fails_the_job_naming_it(claude_system: System, claude: AnthropicFake) -> None:
    claude.script(Fail(401))
    job_id = claude_system.submit(QUESTION, max_iterations=1)
    job = claude_system.wait_terminal(job_id)
    assert job["status"] == "FAILED"
    assert "ANTHROPIC_API_KEY" in job["error"] and "plan" in job["error"]


def test_clarification_round_trip(claude_system: System, claude: AnthropicFake) -> None:
    claude.tool({"needs_clarification": True, "questions": ["Which country?", "Which period?"]})
    job_id = claude_system.submit("Is automation good?", max_iterations=1, clarify=True)
    job = _wait_status(claude_system, job_id, "AWAITING_INPUT")
    assert job["clarifying_questions"] == ["Which country?", "Which period?"]

    # Waiting holds no concurrency slot (the limit is 1): another job runs to the end.
    other = claude_system.submit(QUESTION, max_iterations=1)
    assert claude_system.wait_terminal(other)["status"] == "COMPLETED"
    assert claude_system.job(job_id)["status"] == "AWAITING_INPUT"

    with claude_system.client() as c:
        assert c.post(f"/api/research/jobs/{other}/clarification", json={"answer": "x"}).status_code == 409
        assert c.post(f"/api/research/jobs/{job_id}/clarification", json={"answer": "  "}).status_code == 422
        n = len(claude.delivered)
        r = c.post(f"/api/research/jobs/{job_id}/clarification", json={"answer": "Lighthouses in Scotland, 1900-1990"})
        assert r.status_code == 200 and r.json()["status"] in ("QUEUED", "PROCESSING")
    job = claude_system.wait_terminal(job_id)
    assert job["status"] == "COMPLETED", job
    assert job["clarification"] == "Lighthouses in Scotland, 1900-1990"
    brief = claude.delivered[n]
    assert brief.forced_tool == "record_brief"
    assert "<clarification>\nLighthouses in Scotland, 1900-1990\n</clarification>" in brief.prompt
    kinds = [e["type"] for e in claude_system.events(job_id)]
    assert "clarification" in kinds


def test_an_unanswered_clarification_can_be_cancelled(claude_system: System, claude: AnthropicFake) -> None:
    claude.tool({"needs_clarification": True, "questions": ["Which one?"]})
    job_id = claude_system.submit("Is it good?", max_iterations=1, clarify=True)
    _wait_status(claude_system, job_id, "AWAITING_INPUT")
    with claude_system.client() as c:
        assert c.post(f"/api/research/jobs/{job_id}/cancel").json()["status"] == "CANCELLED"
        assert c.post(f"/api/research/jobs/{job_id}/clarification", json={"answer": "x"}).status_code == 409


def test_the_token_budget_stops_research_with_a_partial_report(tmp_root: Path, postgres, claude: AnthropicFake) -> None:  # noqa: ANN001
    env = {**claude.env(), "RESEARCH_MAX_TOKENS_PER_JOB": "50"}
    with running_system(tmp_root, postgres, env_overrides=env) as s:
        n = len(claude.delivered)
        job_id = s.submit(QUESTION, max_iterations=5)
        job = s.wait_terminal(job_id)
        assert job["status"] == "COMPLETED", job
        with s.client() as c:
            result = c.get(f"/api/research/jobs/{job_id}/result").json()
    # No call fits a 50-token budget: none is made, the job stops iterating.
    assert len(claude.delivered) - n == 0
    assert result["partial"] is True and "RESEARCH_MAX_TOKENS_PER_JOB" in result["partial_reason"]
    assert result["output"]["iterations_used"] == 1
    assert "token budget" in result["report"]
