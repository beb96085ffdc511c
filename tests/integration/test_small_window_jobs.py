"""Whole jobs over the sample corpus against a local OpenAI-compatible server with a
small context window, as the loopback fake plays one:

- vLLM-like: ``LLM_CONTEXT_TOKENS=4096`` and a server that refuses (400,
  ``context_length_exceeded``) any request whose prompt and ``max_tokens`` exceed 4,096
  tokens. No request is refused: every prompt (plan, digests in parts, claim batches,
  coverage, report, judge) was packed to fit before it was sent; the job completes with
  a report the model wrote.
- Ollama-like: no setting; the server says its window (``/api/show``: the Modelfile's
  ``num_ctx 4096``) and silently drops the start of a longer conversation, as Ollama
  does. Each stage process asks once; no prompt is cut.
- A setting larger than the server's window: the server refuses, the refusal names its
  window, the engine uses it from then on and the refused batch is split and asked again;
  the job completes.

The model is :class:`tests.fakes.research_model.ResearchModel` (plausible and
adversarial answers made from each prompt). Figures (calls, tokens, the largest
request against the window) are printed with ``-s``."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.fakes.openai import OpenAIFake
from tests.fakes.research_model import ResearchModel
from tests.integration.harness import System

QUESTION = "Why is a context switch between processes more expensive than between threads?"
MODEL = "llama3.2:3b"
SAMPLES = ROOT / "samples" / "corpus"
FIGURES: dict[str, dict[str, Any]] = {}


def _job(tmp_root: Path, postgres: Any, fake: OpenAIFake, **env: str) -> dict[str, Any]:
    overrides = {**fake.env(), "OPENAI_MODEL": MODEL, "LLM_MAX_RETRIES": "1", "RESEARCH_MAX_CONCURRENCY": "1",
                 "RESEARCH_MAX_TOKENS_PER_JOB": "2000000", "RESEARCH_ACK_WAIT_S": "30", **env}
    system = System(root=tmp_root / uuid.uuid4().hex[:8], postgres=postgres, corpus=SAMPLES,
                    env_overrides=overrides).start()
    try:
        started = time.monotonic()
        job_id = system.submit(QUESTION, max_iterations=1)
        job = system.wait_terminal(job_id, timeout=240)
        assert job["status"] == "COMPLETED", f"{job}\n{system.logs()}"
        with system.client() as c:
            result = c.get(f"/api/research/jobs/{job_id}/result").json()
        result["_wall_s"] = round(time.monotonic() - started, 1)
        result["_logs"] = "\n".join(p.read_text(errors="replace") for p in (system.root / "logs").glob("*.log"))
        return result
    finally:
        system.stop()


def _figures(name: str, fake: OpenAIFake, result: dict[str, Any], window: int | None) -> dict[str, Any]:
    largest = max((p + c for p, c in fake.prompt_sizes), default=0)
    usage = result["tokenUsage"]
    row = {"window": window, "requests": len(fake.requests), "refused_for_length": fake.refused_for_length,
           "truncated": fake.truncated, "largest_prompt": fake.max_prompt_tokens, "largest_prompt_plus_max_tokens": largest,
           "llm_calls": usage["llm_calls"], "input_tokens": usage["input_tokens"],
           "output_tokens": usage["output_tokens"], "wall_s": result["_wall_s"],
           "calls_by_stage": {k: v["calls"] for k, v in usage["by_stage"].items()}}
    FIGURES[name] = row
    print(f"\n{name}: {row}")
    return row


def _written_by_the_model(result: dict[str, Any]) -> None:
    assert result["engine"].startswith(f"openai:{MODEL}"), result["engine"]
    assert f"> Written by openai:{MODEL}" in result["report"], result["report"][:600]


def test_a_job_fits_a_4096_token_window_that_the_server_enforces(tmp_root: Path, postgres: Any) -> None:
    with OpenAIFake(responder=ResearchModel(), require_auth=False, context_tokens=4096) as fake:
        result = _job(tmp_root, postgres, fake, LLM_CONTEXT_TOKENS="4096")
        row = _figures("vllm-4096", fake, result, 4096)
    assert row["refused_for_length"] == 0
    assert row["largest_prompt_plus_max_tokens"] <= 4096
    assert ": not sent" not in result["_logs"]  # every prompt was packed to fit: none left for the engine to refuse
    assert "offline" not in result["engine"] and not result["offline_parts"], result["offline_parts"]
    assert "in 2 parts" in result["_logs"] or "parts to fit the context window" in result["_logs"]
    _written_by_the_model(result)


def test_ollamas_window_is_asked_and_no_prompt_is_cut(tmp_root: Path, postgres: Any) -> None:
    show = {"parameters": "num_ctx 4096", "model_info": {"llama.context_length": 131072}}
    with OpenAIFake(responder=ResearchModel(), require_auth=False, context_tokens=4096, truncate_long=True,
                    show=show) as fake:
        result = _job(tmp_root, postgres, fake)
        row = _figures("ollama-num_ctx-4096", fake, result, 4096)
        asked = fake.show_requests
    assert row["truncated"] == 0 and row["largest_prompt_plus_max_tokens"] <= 4096
    assert 1 <= asked <= 5  # once per stage process that calls the model
    assert "4096 tokens (Ollama's /api/show" in result["_logs"]
    _written_by_the_model(result)


def test_a_server_window_smaller_than_the_setting_is_learnt_and_batches_split(tmp_root: Path, postgres: Any) -> None:
    with OpenAIFake(responder=ResearchModel(), require_auth=False, context_tokens=4096) as fake:
        result = _job(tmp_root, postgres, fake, LLM_CONTEXT_TOKENS="32768")
        row = _figures("setting-32768-server-4096", fake, result, 4096)
    assert row["refused_for_length"] >= 1
    assert "using 4096 from now on" in result["_logs"]
    _written_by_the_model(result)


@pytest.mark.parametrize("window", ["8192", "128000"])
def test_the_same_job_in_larger_windows_for_comparison(tmp_root: Path, postgres: Any, window: str) -> None:
    with OpenAIFake(responder=ResearchModel(), require_auth=False, context_tokens=int(window)) as fake:
        result = _job(tmp_root, postgres, fake, LLM_CONTEXT_TOKENS=window)
        row = _figures(f"window-{window}", fake, result, int(window))
    assert row["refused_for_length"] == 0
    _written_by_the_model(result)
