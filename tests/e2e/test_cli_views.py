"""What the CLI shows without a running system: the live panel rendered as a terminal
draws it, the plain lines, the trace printout of partial traces, `deepresearch
config` with a `.env` (environment first, secrets masked), and the exit codes in --help."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

from rich.console import Console

from services.cli.config import mask
from services.cli.trace import trace_lines
from services.cli.view import JobView, plain_line, render_to_text

ROOT = Path(__file__).resolve().parents[2]

EVENTS = [
    {"type": "status", "status": "PROCESSING"},
    {"type": "stage", "stage": "plan", "iteration": 0, "state": "started"},
    {"type": "stage", "stage": "plan", "iteration": 0, "state": "done", "duration_s": 0.5,
     "usage": {"by_stage": {"plan": {"input_tokens": 1200, "output_tokens": 300}}}},
    {"type": "progress", "stage": "retrieve", "iteration": 0, "progress": 1.0, "message": "sources merged and archived",
     "counts": {"sources": 7, "new_sources": 7}},
    {"type": "progress", "stage": "score", "iteration": 0, "progress": 0.6, "message": "claims verified",
     "counts": {"claims": 4, "rejected": 1}},
    {"type": "stage", "stage": "score", "iteration": 0, "state": "done", "duration_s": 1.0,
     "usage": {"by_stage": {"plan": {"input_tokens": 1200, "output_tokens": 300}, "score": {"input_tokens": 500, "output_tokens": 34}}}},
]


def test_the_live_panel_shows_stage_iteration_progress_counts_tokens_and_elapsed() -> None:
    view = JobView("job-1", max_iterations=3)
    for event in EVENTS:
        view.apply(event)
    text = render_to_text(view)
    assert "score  (iteration 1 of at most 3)" in text
    assert "72%" in text  # score at 0.6 of its span, 0.6..0.8 of the iteration
    assert "7 sources, 4 claims kept" in text and "2,034" in text and "elapsed" in text and "PROCESSING" in text
    # drawn for a terminal: a bar of block characters with colour codes
    screen = io.StringIO()
    Console(file=screen, force_terminal=True, width=90).print(view.renderable())
    assert "\x1b[" in screen.getvalue() and "━" in screen.getvalue()


def test_the_panel_ends_with_the_outcome() -> None:
    view = JobView("job-2")
    for event in [*EVENTS, {"type": "failed", "stage": "score", "reason": "model refused"},
                  {"type": "status", "status": "FAILED", "reason": "score: model refused"}]:
        view.apply(event)
    text = render_to_text(view)
    assert "[FAILED]" in text and "score: model refused" in text


def test_plain_lines_name_each_event() -> None:
    lines = [plain_line(e) for e in EVENTS]
    assert lines[0] == "status: PROCESSING"
    assert lines[1] == "[iteration 1] plan started"
    assert lines[2] == "  plan       done in 0.50s"
    assert lines[3] == "  retrieve   100%  sources merged and archived  (sources=7 new_sources=7)"
    assert plain_line({"type": "clarification", "questions": ["Which?"]}) is None
    assert plain_line({"type": "failed", "stage": "digest", "reason": "x"}) == "FAILED in digest: x"


def test_trace_printout_reads_full_and_partial_traces() -> None:
    full = {
        "job_id": "j1", "status": "COMPLETED",
        "iterations": [{
            "iteration": 0, "queries": [{"provider": "web", "text": "lighthouse automation"}],
            "results": {"web": {"count": 10, "new_sources": 6}},
            "checklist": [{"id": "c1", "description": "When were keepers replaced?", "status": "satisfied"}],
            "claims_kept": 5, "claims_rejected": 2,
            "stages": [{"stage": "plan", "duration_s": 0.42, "tokens": {"input": 900, "output": 100}}],
        }],
        "memory": {"insights": [{"text": "a"}], "open_gaps": []},
    }
    text = "\n".join(trace_lines(full))
    for part in ("trace of job j1", "status: COMPLETED", "iteration 1", "[web] lighthouse automation",
                 "web 10 results, 6 new sources", "satisfied  c1  When were keepers replaced?",
                 "claims: 5 kept, 2 rejected", "plan 0.4s/1,000 tok", "research memory: 1 insights"):
        assert part in text, part
    partial = "\n".join(trace_lines({"job_id": "j2", "iterations": [{"iteration": 1, "claims_kept": None, "stages": [{}]}]}))
    assert "iteration 2" in partial and "claims:" not in partial and "? 0.0s/0 tok" in partial
    assert "no iteration recorded yet" in "\n".join(trace_lines({}))


def test_mask_hides_keys_and_url_passwords() -> None:
    assert mask("database_url", "postgresql+asyncpg://app:s3cret@db:5432/x") == "postgresql+asyncpg://app:****@db:5432/x"
    assert mask("nats_url", "nats://u:p@a:4222,nats://u:p@b:4222") == "nats://u:****@a:4222,nats://u:****@b:4222"
    assert mask("research_api_keys", "k1:alice, k2:bob") == "****:alice,****:bob"
    assert mask("gateway_host", "127.0.0.1") == "127.0.0.1"


def _config(cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("RESEARCH_", "TAVILY_", "NCBI_", "ANTHROPIC_", "OPENAI_", "LLM_")) and k not in ("NATS_URL", "DATABASE_URL")}
    return subprocess.run([sys.executable, "-m", "services.cli", "config", "--json"], cwd=cwd,
                          env={**clean, "PYTHONPATH": str(ROOT), **env}, capture_output=True, text=True, timeout=60)


def test_config_reads_dotenv_lets_the_environment_win_and_masks_secrets(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(
        "TAVILY_API_KEY=tvly-dotenv-secret\n"
        "DATABASE_URL=postgresql://app:pg-secret@127.0.0.1:5432/research\n"
        "NCBI_EMAIL=dotenv@example.org\n"
        "RESEARCH_MAX_CONCURRENCY=7\n"
        "RESEARCH_DATA_DIR=data-from-dotenv\n"
    )
    r = _config(tmp_path, RESEARCH_MAX_CONCURRENCY="9")
    assert r.returncode == 0, r.stderr
    assert "tvly-dotenv-secret" not in r.stdout and "pg-secret" not in r.stdout
    out = json.loads(r.stdout)
    rows = {row["name"]: row for row in out["settings"]}
    assert rows["TAVILY_API_KEY"] == {"name": "TAVILY_API_KEY", "value": "****", "from": ".env"}
    assert rows["DATABASE_URL"]["value"] == "postgresql+asyncpg://app:****@127.0.0.1:5432/research"
    assert rows["RESEARCH_MAX_CONCURRENCY"] == {"name": "RESEARCH_MAX_CONCURRENCY", "value": 9, "from": "environment"}
    assert rows["NCBI_EMAIL"]["from"] == ".env" and rows["GATEWAY_PORT"]["from"] == "default"
    providers = out["providers"]
    assert providers["web"] == "Tavily" and providers["pubmed"].startswith("on")
    assert providers["model"].startswith("offline") and "data-from-dotenv" in providers["local"]


def test_config_without_dotenv_names_what_would_enable_each_provider(tmp_path: Path) -> None:
    r = _config(tmp_path, ANTHROPIC_API_KEY="sk-ant-env-secret")
    assert r.returncode == 0, r.stderr
    assert "sk-ant-env-secret" not in r.stdout
    providers = json.loads(r.stdout)["providers"]
    assert providers["model"].startswith("Anthropic, model ")
    assert providers["web"] == "off (set TAVILY_API_KEY)" and "NCBI_EMAIL" in providers["pubmed"]
    assert "deepresearch index" in providers["local"]
    human = subprocess.run([sys.executable, "-m", "services.cli", "config"], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                           env={k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"} | {"PYTHONPATH": str(ROOT)})
    assert human.returncode == 0 and "(absent)" in human.stdout and "providers:" in human.stdout


def test_help_documents_the_exit_codes() -> None:
    r = subprocess.run([sys.executable, "-m", "services.cli", "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0
    for code in ("0 ", "1 ", "2 ", "3 ", "4 ", "5 ", "130"):
        assert f"\n  {code}" in r.stdout, code
    bad = subprocess.run([sys.executable, "-m", "services.cli", "result"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2  # usage error
