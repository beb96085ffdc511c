"""Whole jobs against a local OpenAI-compatible server (Ollama, llama.cpp, LM Studio,
vLLM) as the loopback fake plays one: each stage process finds, on its first
structured call, which structured mode the server supports (a forced tool call,
``response_format`` json_schema, or JSON asked for in the prompt), says so once, and
the job completes with a report the model wrote. The model thinks aloud (``<think>``
blocks holding a draft JSON object, and ``reasoning_content``): none of it reaches the
report. Each mode's tokens, calls and wall time are printed (``-s``) for comparison."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai import OpenAIFake, structured_mode_of
from tests.fakes.report_writer import ReportWriter
from tests.integration.conftest import running_system
from tests.integration.harness import System

QUESTION = "How did automation change lighthouse keeping?"
MODEL = "qwen3:8b"
LEAK = "REASONING-LEAK"
# A draft JSON object inside the reasoning: were the <think> block not removed, the
# lenient parser would take this draft as the answer.
REASONING = (f'Okay, the user wants the structured answer. A first draft: {{"note": "{LEAK} draft"}}. '
             f"No, that misses the required fields; {LEAK} let me write the real one.")
SWITCH = "refused structured output by"

# What the fake server supports, per mode the system should end up in.
SERVERS: dict[str, dict[str, Any]] = {
    "tools": {"think": REASONING, "reasoning_content": REASONING},
    "json_schema": {"refuse_tools": True, "think": REASONING, "reasoning_content": REASONING},
    "prompt": {"refuse_tools": True, "refuse_response_format": True, "think": REASONING,
               "reasoning_content": REASONING, "fence_json": True},
}
FIGURES: dict[str, dict[str, Any]] = {}


def _run(system: System) -> tuple[dict[str, Any], float]:
    started = time.monotonic()
    job_id = system.submit(QUESTION, max_iterations=1)
    job = system.wait_terminal(job_id, timeout=120)
    wall = time.monotonic() - started
    assert job["status"] == "COMPLETED", f"{job}\n{system.logs()}"
    with system.client() as c:
        return c.get(f"/api/research/jobs/{job_id}/result").json(), wall


def _switch_lines(root: Path) -> dict[str, int]:
    """Per process log: how many times it logged a switch of structured mode."""
    return {p.name: p.read_text(errors="replace").count(SWITCH) for p in (root / "logs").glob("*.log")}


@pytest.mark.parametrize("mode", list(SERVERS))
def test_a_job_completes_through_a_local_server(tmp_root: Path, postgres: Any, mode: str) -> None:
    with OpenAIFake(responder=ReportWriter(), require_auth=False, **SERVERS[mode]) as fake:
        env = {**fake.env(), "OPENAI_MODEL": MODEL, "LLM_MAX_RETRIES": "1", "RESEARCH_MAX_CONCURRENCY": "1",
               "DIGEST_POLICY": "off",
               # A stage slowed by a loaded machine is not redelivered: its calls would be counted twice by the fake.
               "RESEARCH_ACK_WAIT_S": "30"}
        with running_system(tmp_root, postgres, env_overrides=env) as system:
            result, wall = _run(system)
            first = list(fake.requests)
            delivered = list(fake.delivered)
            # The stage processes found the mode on the first job: a second job goes straight to it.
            n = len(fake.requests)
            again, again_wall = _run(system)
            later = fake.requests[n:]
            switches = _switch_lines(system.root)

    report = result["report"]
    assert f"> Written by openai:{MODEL} from the job's checked claims" in report, report[:600]
    assert result["engine"].startswith(f"openai:{MODEL}")
    for text in (json.dumps(result), json.dumps(again)):
        assert "<think>" not in text and "</think>" not in text and LEAK not in text
        assert "let me write the real one" not in text

    # Every structured request this job delivered used the mode the server supports,
    # and each stage process said so once (none when tools work).
    structured = [structured_mode_of(r) for r in delivered if structured_mode_of(r) != "text"]
    assert structured and set(structured) == {mode}
    assert {structured_mode_of(r) for r in later} <= {mode, "text"}
    assert all(r.status == 200 for r in later)
    refused = [r for r in first if r.status == 400]
    if mode == "tools":
        assert not refused and sum(switches.values()) == 0
    else:
        assert refused and {structured_mode_of(r) for r in refused} == (
            {"tools"} if mode == "json_schema" else {"tools", "json_schema"})
        assert 1 <= sum(switches.values()) and max(switches.values()) == (1 if mode == "json_schema" else 2), switches

    # Every token the server billed is the job's (refused requests are not billed).
    usage = result["tokenUsage"]
    assert usage["llm_calls"] == len(delivered)
    assert usage["input_tokens"] == sum(r.input_tokens for r in delivered)
    assert usage["output_tokens"] == sum(r.output_tokens for r in delivered)
    FIGURES[mode] = {"input_tokens": usage["input_tokens"], "output_tokens": usage["output_tokens"],
                     "llm_calls": usage["llm_calls"], "refused_requests": len(refused), "wall_s": round(wall, 2),
                     "second_job_calls": again["tokenUsage"]["llm_calls"], "second_job_wall_s": round(again_wall, 2),
                     "second_job_tokens": again["tokenUsage"]["input_tokens"] + again["tokenUsage"]["output_tokens"]}
    print(f"\nstructured mode {mode}: {json.dumps(FIGURES[mode])}")
    if "tools" in FIGURES and mode != "tools":
        base = FIGURES["tools"]
        total = FIGURES[mode]["input_tokens"] + FIGURES[mode]["output_tokens"]
        base_total = base["input_tokens"] + base["output_tokens"]
        print(f"  against tools: tokens x{total / base_total:.2f}, calls {FIGURES[mode]['llm_calls']} vs "
              f"{base['llm_calls']}, wall {FIGURES[mode]['wall_s']}s vs {base['wall_s']}s")
