"""The CLI's job commands as a user runs them against a running system (real
nats-server, PostgreSQL and the six service processes): ask with --output, jobs,
status, watch, result in every format, cancel, trace, resume, their exit codes; the
report export route; the plain progress lines off a terminal and the rich live view."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import docx
import httpx
import pypdf
import pytest
from rich.console import Console

from services.cli.jobs import Gateway, follow
from tests.conftest import FIXTURE_CORPUS
from tests.integration.harness import System

KEYS = "key-alice:alice,key-bob:bob"
QUESTION = "How did automation change lighthouse keeping?"


@pytest.fixture(scope="module")
def system(tmp_root: Path, postgres) -> Iterator[System]:  # noqa: ANN001
    s = System(root=tmp_root / ("clij-" + uuid.uuid4().hex[:6]), postgres=postgres, corpus=FIXTURE_CORPUS,
               env_overrides={"RESEARCH_API_KEYS": KEYS}).start()
    try:
        yield s
    finally:
        s.stop()


def _env(system: System, key: str | None = "key-alice", **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NATS_URL", "DATABASE_URL", "RESEARCH_API_KEY")}
    env |= {"RESEARCH_GATEWAY_URL": system.url, "RESEARCH_DATA_DIR": str(system.root / "cli-data"), **extra}
    if key:
        env["RESEARCH_API_KEY"] = key
    return env


def cli(system: System, *args: str, key: str | None = "key-alice", timeout: float = 120, **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "services.cli", *args], env=_env(system, key), capture_output=True,
                          text=True, timeout=timeout, **kw)  # type: ignore[call-overload]


@pytest.fixture(scope="module")
def done(system: System, tmp_root: Path) -> tuple[str, Path]:
    """A job `ask` ran to completion, its report written as HTML by --output."""
    out = tmp_root / "asked.html"
    r = cli(system, "ask", QUESTION, "--max-iterations", "1", "--output", str(out), timeout=180)
    assert r.returncode == 0, r.stderr
    job_id = r.stderr.split("job ", 1)[1].split()[0]
    return job_id, out


def test_ask_off_a_terminal_prints_plain_lines_and_writes_the_report_file(system: System, done: tuple[str, Path]) -> None:
    job_id, out = done
    page = out.read_text()
    assert page.startswith("<!doctype html>") and 'href="#source-1"' in page and 'id="source-1"' in page
    r = cli(system, "watch", job_id)  # the finished job's events, replayed as plain lines
    assert r.returncode == 0, r.stderr
    assert "[iteration 1] plan started" in r.stderr and "synthesize" in r.stderr and "status: COMPLETED" in r.stderr
    assert "\x1b[" not in r.stderr  # no terminal control codes in a pipe


def test_jobs_and_status_show_the_job(system: System, done: tuple[str, Path]) -> None:
    job_id, _ = done
    listing = cli(system, "jobs")
    assert listing.returncode == 0, listing.stderr
    row = next(line for line in listing.stdout.splitlines() if line.startswith(job_id))
    assert "COMPLETED" in row and "100%" in row and "lighthouse" in row
    assert job_id not in cli(system, "jobs", key="key-bob").stdout  # only the user's own
    status = cli(system, "status", job_id)
    assert status.returncode == 0 and "status    COMPLETED" in status.stdout and "progress  100%" in status.stdout
    as_json = json.loads(cli(system, "status", job_id, "--json").stdout)
    assert as_json["job_id"] == job_id and as_json["status"] == "COMPLETED"


@pytest.mark.parametrize("fmt", ["md", "html", "json", "pdf", "docx"])
def test_result_in_every_format(system: System, done: tuple[str, Path], tmp_root: Path, fmt: str) -> None:
    job_id, _ = done
    path = tmp_root / f"result-{fmt}.{fmt}"
    r = cli(system, "result", job_id, "-o", str(path))  # the format from the extension
    assert r.returncode == 0, r.stderr
    data = path.read_bytes()
    if fmt == "md":
        assert data.decode().startswith("# ") and "## Sources" in data.decode()
    elif fmt == "html":
        assert b"<style>" in data and b'<a class="citation" href="#source-1">[1]</a>' in data
    elif fmt == "json":
        body = json.loads(data)
        assert body["job_id"] == job_id and body["output"]["sources"]
    elif fmt == "pdf":
        assert data.startswith(b"%PDF") and len(pypdf.PdfReader(io.BytesIO(data)).pages) >= 1
    else:
        headings = [p.text for p in docx.Document(io.BytesIO(data)).paragraphs if p.style.name.startswith("Heading")]
        assert "Executive summary" in headings and "Sources" in headings


def test_result_to_stdout_and_format_flag(system: System, done: tuple[str, Path]) -> None:
    job_id, _ = done
    md = cli(system, "result", job_id)
    assert md.returncode == 0 and md.stdout.startswith("# ") and "[1]" in md.stdout
    html = cli(system, "result", job_id, "--format", "html")
    assert html.stdout.startswith("<!doctype html>")


def test_report_route_formats_content_types_and_errors(system: System, done: tuple[str, Path]) -> None:
    job_id, _ = done
    types = {"md": "text/markdown", "html": "text/html", "pdf": "application/pdf",
             "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document"}
    with system.client("key-alice") as c:
        for fmt, media in types.items():
            r = c.get(f"/api/research/jobs/{job_id}/report", params={"format": fmt})
            assert r.status_code == 200 and r.headers["content-type"].startswith(media), (fmt, r.status_code, r.text[:200])
            assert f'filename="report-{job_id}.{fmt}"' in r.headers["content-disposition"]
        assert c.get(f"/api/research/jobs/{job_id}/report").headers["content-type"].startswith("text/markdown")
        bad = c.get(f"/api/research/jobs/{job_id}/report", params={"format": "rtf"})
        assert bad.status_code == 422 and "format" in bad.json()["message"]
    with system.client("key-bob") as c:  # owner-only, like the result
        assert c.get(f"/api/research/jobs/{job_id}/report", params={"format": "pdf"}).status_code == 404


def test_exit_codes_for_missing_foreign_malformed_unreachable_and_keyless(system: System, done: tuple[str, Path]) -> None:
    job_id, _ = done
    missing = cli(system, "status", str(uuid.uuid4()))
    assert missing.returncode == 4 and "not found" in missing.stderr
    assert cli(system, "result", job_id, key="key-bob").returncode == 4
    malformed = cli(system, "status", "not-a-job")
    assert malformed.returncode == 2 and "not a job id" in malformed.stderr
    keyless = cli(system, "jobs", key=None)
    assert keyless.returncode == 1 and "RESEARCH_API_KEY" in keyless.stderr
    env = _env(system) | {"RESEARCH_GATEWAY_URL": "http://127.0.0.1:9"}
    down = subprocess.run([sys.executable, "-m", "services.cli", "jobs"], env=env, capture_output=True, text=True, timeout=60)
    assert down.returncode == 1 and "no gateway answers" in down.stderr
    assert cli(system, "result", job_id, "--format", "rtf").returncode == 2  # argparse: usage error
    finished = cli(system, "cancel", job_id)
    assert finished.returncode == 5 and "already COMPLETED" in finished.stderr
    resumed = cli(system, "resume", job_id)
    assert resumed.returncode == 5 and "COMPLETED" in resumed.stderr


def test_trace_prints_each_iteration(system: System, done: tuple[str, Path]) -> None:
    job_id, _ = done
    r = cli(system, "trace", job_id)
    assert r.returncode == 0, r.stderr
    assert f"trace of job {job_id}" in r.stdout and "iteration 1" in r.stdout
    assert "stages: plan" in r.stdout and "synthesize" in r.stdout
    gone = cli(system, "trace", str(uuid.uuid4()))
    assert gone.returncode == 4 and "not found" in gone.stderr


def _awaiting(system: System) -> str:
    with system.client("key-alice") as c:
        r = c.post("/api/research/jobs", json={"question": "Is automation good?", "clarify": True, "max_iterations": 1})
    assert r.status_code == 202, r.text
    job_id = r.json()["job_id"]
    deadline = time.monotonic() + 60
    while system.job(job_id, key="key-alice")["status"] != "AWAITING_INPUT":
        assert time.monotonic() < deadline, system.job(job_id, key="key-alice")
        time.sleep(0.2)
    return job_id


def test_a_waiting_job_has_no_result_is_cancelled_then_resumed(system: System, tmp_root: Path) -> None:
    job_id = _awaiting(system)
    pending = cli(system, "result", job_id)
    assert pending.returncode == 5 and "AWAITING_INPUT" in pending.stderr
    # Ctrl-C while watching stops the watch, not the job.
    watch = subprocess.Popen([sys.executable, "-m", "services.cli", "watch", job_id], env=_env(system),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(3)
        watch.send_signal(signal.SIGINT)
        _, err = watch.communicate(timeout=30)
    finally:
        if watch.poll() is None:
            watch.kill()
    assert watch.returncode == 130 and "stopped watching" in err, err
    assert system.job(job_id, key="key-alice")["status"] == "AWAITING_INPUT"
    cancel = cli(system, "cancel", job_id)
    assert cancel.returncode == 0 and "CANCELLED" in cancel.stdout
    assert cli(system, "watch", job_id).returncode == 3
    assert cli(system, "result", job_id).returncode == 3
    # resume: queued again, plans again, asks again (answered here), completes
    out = tmp_root / "resumed.md"
    resumed = cli(system, "resume", job_id, "-o", str(out), input="lighthouse keeping on remote coasts\n\n\n", timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    assert f"job {job_id} resumed (QUEUED)" in resumed.stderr and "answer sent" in resumed.stderr
    assert out.read_text().startswith("# ") and system.job(job_id, key="key-alice")["status"] == "COMPLETED"


def test_the_live_view_on_a_terminal_shows_stage_progress_and_counts(system: System, done: tuple[str, Path]) -> None:
    job_id, _ = done
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=100)
    gw = Gateway(system.url, "key-alice")
    try:
        job = follow(gw, job_id, live=True, max_iterations=1, console=console)
    finally:
        gw.close()
    assert job["status"] == "COMPLETED"
    shown = screen.getvalue()
    assert "\x1b[" in shown  # drawn with terminal codes, redrawn in place
    for text in ("stage", "synthesize", "iteration 1 of at most 1", "100%", "sources,", "claims kept", "tokens", "elapsed", "COMPLETED"):
        assert text in shown, text
    with httpx.Client(base_url=system.url, headers={"Authorization": "Bearer key-alice"}) as c:
        sources = len(c.get(f"/api/research/jobs/{job_id}/sources").json()["sources"])
    assert f"{sources} sources," in shown
