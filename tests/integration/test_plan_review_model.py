"""Plan review when a model writes the plan (LLM_PROVIDER=anthropic against the loopback
Anthropic fake): the job waits with the model's plan and the tokens planning spent; the
approved plan is not planned again (no brief or decomposition call after the approval),
and the planning tokens are still in the result's usage."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.anthropic import AnthropicFake
from tests.integration.conftest import running_system
from tests.integration.harness import System

QUESTION = "How did automation change lighthouse keeping?"
PLANNING_TOOLS = {"record_brief", "record_sub_questions"}


@pytest.fixture(scope="module")
def claude() -> Iterator[AnthropicFake]:
    with AnthropicFake() as fake:
        yield fake


@pytest.fixture(scope="module")
def claude_system(tmp_root: Path, postgres, claude: AnthropicFake) -> Iterator[System]:  # noqa: ANN001
    with running_system(tmp_root, postgres, env_overrides={**claude.env(), "LLM_MAX_RETRIES": "1"}) as s:
        yield s


def test_a_model_plan_is_reviewed_and_not_planned_again(claude_system: System, claude: AnthropicFake) -> None:
    job_id = claude_system.submit(QUESTION, max_iterations=1, review_plan=True)
    deadline = time.monotonic() + 60
    while (job := claude_system.job(job_id))["status"] != "AWAITING_INPUT":
        assert job["status"] in ("QUEUED", "PROCESSING") and time.monotonic() < deadline, (job, claude_system.logs())
        time.sleep(0.1)
    assert job["plan"] is not None and job["token_usage"]["llm_calls"] >= 2
    assert PLANNING_TOOLS <= {r.forced_tool for r in claude.delivered}
    waited_calls = job["token_usage"]["llm_calls"]
    n = len(claude.delivered)

    plan = job["plan"]
    edited = {**plan, "steps": [*plan["steps"], {"text": "Lighthouse keepers after automation"}]}
    with claude_system.client() as c:
        r = c.post(f"/api/research/jobs/{job_id}/plan", json=edited)
    assert r.status_code == 200, r.text
    done = claude_system.wait_terminal(job_id, timeout=120)
    assert done["status"] == "COMPLETED", done
    assert not PLANNING_TOOLS & {r.forced_tool for r in claude.delivered[n:]}
    with claude_system.client() as c:
        result = c.get(f"/api/research/jobs/{job_id}/result").json()
    assert result["tokenUsage"]["by_stage"]["plan"]["calls"] >= 2
    assert result["tokenUsage"]["llm_calls"] >= waited_calls
