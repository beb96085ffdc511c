"""Degrade, don't fail, in a whole system: the loopback Anthropic fake answers the
planner, then 529 (overloaded) to every later call. The first stage that meets it
answers offline after the SDK's retries, the envelope carries that, no later stage or
iteration asks the provider again, and the job completes with a report that says from
which stage on the offline engine did the model work."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic import AnthropicFake
from tests.fakes.llm import Fail, RecordedRequest, Step, schema_responder
from tests.integration.conftest import running_system
from tests.integration.harness import System

QUESTION = "How did automation change lighthouse keeping?"
MODEL = "claude-sonnet-5-5"
PLANNING = {"record_brief", "record_sub_questions", "record_clarification"}
RETRIES = 1


class DownAfterPlanning:
    """Answers the planner's tools; from the first call of any other tool on, 529 to
    every call (the planner's later ones included)."""

    def __init__(self) -> None:
        self.down = False

    def __call__(self, request: RecordedRequest) -> Step:
        if request.forced_tool not in PLANNING:
            self.down = True
        return Fail(529) if self.down else schema_responder(request)


@pytest.fixture(scope="module")
def claude() -> Iterator[AnthropicFake]:
    with AnthropicFake() as fake:
        yield fake


@pytest.fixture(scope="module")
def claude_system(tmp_root: Path, postgres: Any, claude: AnthropicFake) -> Iterator[System]:
    # One model call in flight: the calls of the stage that finds the provider down
    # and are still waiting for a slot are never sent, so the count below is exact.
    env = {**claude.env(), "LLM_MAX_RETRIES": str(RETRIES), "LLM_MAX_CONCURRENCY": "1", "RESEARCH_MAX_CONCURRENCY": "1"}
    with running_system(tmp_root, postgres, env_overrides=env) as s:
        yield s


def test_an_overloaded_provider_after_planning_degrades_and_the_job_completes(
        claude_system: System, claude: AnthropicFake) -> None:
    claude.responder = DownAfterPlanning()
    job_id = claude_system.submit(QUESTION, max_iterations=2)
    job = claude_system.wait_terminal(job_id, timeout=120)
    assert job["status"] == "COMPLETED", f"{job}\n{claude_system.logs()}"
    with claude_system.client() as c:
        result = c.get(f"/api/research/jobs/{job_id}/result").json()

    # The planner was answered; one call after it met 529 through the SDK's retries,
    # and nothing was asked of the provider after that (no redelivery, no later stage).
    planned = [r for r in claude.requests if r.status == 200]
    failed = [r for r in claude.requests if r.status == 529]
    assert planned and {r.forced_tool for r in planned} <= PLANNING
    assert len(failed) == 1 + RETRIES and claude.requests[-len(failed):] == failed
    assert claude.errors == []

    # The report and the result say from which stage on the work was offline, and why.
    report = result["report"]
    since = re.search(r"The model provider was unavailable from the (\w+) stage of iteration (\d+) on, "
                      r"after its retries \(([^)]*\(529\)[^)]*)\)", report)
    assert since, report
    stage = since.group(1)
    assert stage != "plan"
    top = next(line for line in report.splitlines() if line.startswith("> "))
    assert top.startswith(f"> Planned by anthropic:{MODEL}.") and top.endswith(
        f"The model provider was unavailable from the {stage} stage of iteration {since.group(2)} on: "
        "the offline engine did the rest."), top
    assert "- Entailment judge: not run: the model provider was unavailable" in report
    assert any(f"from the {stage} stage" in part and "unavailable" in part for part in result["offline_parts"])
    assert result["engine"] == f"anthropic:{MODEL}+offline"
    assert result["tokenUsage"]["by_stage"][stage]["degraded_calls"] >= 1

    # No stage was retried or failed; the stage that met it counts the calls it
    # answered offline in its done event.
    events = claude_system.events(job_id)
    stage_events = [e for e in events if e["type"] == "stage"]
    assert not [e for e in stage_events if e["state"] in ("retrying", "failed")]
    assert not [e for e in events if e["type"] == "failed"]
    done = [e for e in stage_events if e["state"] == "done" and e["stage"] == stage]
    assert done[0]["usage"]["by_stage"][stage]["degraded_calls"] >= 1
