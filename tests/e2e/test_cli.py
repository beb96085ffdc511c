"""The front door: the CLI as a user runs it, starting its own servers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil

from shared.platform.processes import free_port
from tests.conftest import FIXTURE_CORPUS


def _env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NATS_URL", "DATABASE_URL", "RESEARCH_GATEWAY_URL")}
    return {**env, "RESEARCH_DATA_DIR": str(data_dir), **extra}


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "services.cli", *args]


def test_ask_starts_the_system_runs_one_job_and_leaves_nothing_running(tmp_root: Path) -> None:
    data = tmp_root / "cli-ask"
    # Point RESEARCH_GATEWAY_URL at a port where nothing listens, so `ask` starts its own.
    env = _env(data, RESEARCH_GATEWAY_URL=f"http://127.0.0.1:{free_port()}")
    before = {p.pid for p in psutil.process_iter()}
    r = subprocess.run(
        _cli("ask", "How did automation change lighthouse keeping?", "--corpus", str(FIXTURE_CORPUS), "--max-iterations", "2", "--json"),
        env=env, capture_output=True, text=True, timeout=180,
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["status"] in ("completed", "max_iterations_reached")
    assert out["sources"] and all(s["url"].startswith("corpus://corpus/") for s in out["sources"])
    assert "[1]" in out["answer"]
    assert "plan" in r.stderr and "synthesize" in r.stderr  # live progress went to the terminal
    time.sleep(0.5)
    leftovers = [
        p for p in psutil.process_iter(["pid", "cmdline"])
        if p.info["pid"] not in before and any(str(data) in part for part in (p.info["cmdline"] or []))
    ]
    assert not leftovers, [p.info for p in leftovers]


def test_up_runs_six_processes_and_stops_them_all_on_sigterm(tmp_root: Path) -> None:
    data = tmp_root / "cli-up"
    port = free_port()
    proc = subprocess.Popen(_cli("up"), env=_env(data, GATEWAY_PORT=str(port)), stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            assert time.monotonic() < deadline, "gateway never became ready"
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        children = psutil.Process(proc.pid).children(recursive=True)
        commands = [" ".join(c.cmdline()) for c in children]
        for name in ("gateway", "decomposition", "retrieval", "digest", "scoring", "synthesis"):
            assert any(f"service {name}" in c for c in commands), commands
        assert any("nats-server" in c for c in commands)
        assert any("postgres" in c for c in commands)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    gone, alive = psutil.wait_procs(children, timeout=10)
    assert not alive, [" ".join(p.cmdline()) for p in alive]


def test_index_reports_what_it_indexed_and_refuses_a_missing_folder(tmp_root: Path) -> None:
    data = tmp_root / "cli-index"
    ok = subprocess.run(_cli("index", str(FIXTURE_CORPUS), "--name", "fixtures"), env=_env(data), capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert "indexed corpus 'fixtures': 3 files" in ok.stderr
    bad = subprocess.run(_cli("index", str(tmp_root / "does-not-exist")), env=_env(data), capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "is not a folder" in bad.stderr


def test_a_lone_service_without_nats_url_says_what_is_missing(tmp_root: Path) -> None:
    r = subprocess.run(_cli("service", "scoring"), env=_env(tmp_root / "lone"), capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "NATS_URL is not set" in r.stderr


def test_ask_clarify_asks_at_the_terminal_and_uses_the_answer(tmp_root: Path) -> None:
    data = tmp_root / "cli-clarify"
    env = _env(data, RESEARCH_GATEWAY_URL=f"http://127.0.0.1:{free_port()}", LLM_PROVIDER="offline")
    r = subprocess.run(
        _cli("ask", "Is automation good?", "--clarify", "--corpus", str(FIXTURE_CORPUS), "--max-iterations", "1", "--json"),
        env=env, input="lighthouse keeping on remote coasts\n\n\n", capture_output=True, text=True, timeout=180,
    )
    assert r.returncode == 0, r.stderr
    assert "needs clarification" in r.stderr and "Which aspect of automation good" in r.stderr
    assert "AWAITING_INPUT" in r.stderr and "answer sent" in r.stderr
    out = json.loads(r.stdout)
    assert out["status"] in ("completed", "max_iterations_reached")
    assert any("lighthouse" in s["title"].lower() or "lighthouse" in s["snippet"].lower() for s in out["sources"])
