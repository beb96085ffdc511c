"""`deepresearch ask --review-plan` against a running system (real nats-server,
PostgreSQL and the service processes): off a terminal the plan is accepted as it is; on
one (a pseudo-terminal here) `e` opens it in $EDITOR, a plan the gateway refuses is
shown with the reason and edited again, and the report follows the edited plan."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import FIXTURE_CORPUS
from tests.integration.harness import System

QUESTION = "How did automation change lighthouse keeping?"
ADDED = "What lighthouse keepers did once the lights were automated"


@pytest.fixture(scope="module")
def system(tmp_root: Path, postgres) -> Iterator[System]:  # noqa: ANN001
    s = System(root=tmp_root / ("clip-" + uuid.uuid4().hex[:6]), postgres=postgres, corpus=FIXTURE_CORPUS).start()
    try:
        yield s
    finally:
        s.stop()


def _env(system: System, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NATS_URL", "DATABASE_URL", "RESEARCH_API_KEY", "VISUAL")}
    return env | {"RESEARCH_GATEWAY_URL": system.url, "RESEARCH_DATA_DIR": str(system.root / "cli-data"), **extra}


def _ask(system: System, *, stdin: int, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "services.cli", "ask", QUESTION, "--review-plan", "--max-iterations", "1", "--json"],
        env=env, stdin=stdin, capture_output=True, text=True, timeout=180,
    )


def test_off_a_terminal_the_plan_is_accepted_as_it_is(system: System) -> None:
    r = _ask(system, stdin=subprocess.DEVNULL, env=_env(system))
    assert r.returncode == 0, r.stderr
    assert "The research plan, for your review" in r.stderr and "Checklist:" in r.stderr
    assert "plan accepted as it is (not a terminal" in r.stderr
    assert json.loads(r.stdout)["status"] in ("completed", "max_iterations_reached")


def test_on_a_terminal_the_plan_is_edited_in_the_editor(system: System, tmp_path: Path) -> None:
    # The "editor": the first time it empties the checklist (refused), the second time
    # it drops the first item and adds one without an id.
    editor = tmp_path / "editor.py"
    runs = tmp_path / "runs"
    editor.write_text(textwrap.dedent(f"""
        import json, pathlib, sys
        runs = pathlib.Path({str(runs)!r})
        n = int(runs.read_text()) if runs.exists() else 0
        runs.write_text(str(n + 1))
        path = pathlib.Path(sys.argv[1])
        plan = json.loads(path.read_text())
        if n == 0:
            plan["checklist"] = []
        else:
            plan["checklist"] = [*plan["checklist"][1:], {{"description": {ADDED!r}}}]
        path.write_text(json.dumps(plan))
    """))
    master, slave = pty.openpty()
    try:
        os.write(master, b"e\ne\n")  # read by the prompts as they come (the terminal buffers them)
        r = _ask(system, stdin=slave, env=_env(system, EDITOR=f"{sys.executable} {editor}"))
    finally:
        os.close(slave)
        os.close(master)
    assert r.returncode == 0, r.stderr
    assert runs.read_text() == "2"
    assert "the plan was refused" in r.stderr and "checklist" in r.stderr
    assert "plan sent with your changes; research continues" in r.stderr
    out = json.loads(r.stdout)
    coverage = " | ".join([*out["checklist_coverage"]["satisfied"], *out["checklist_coverage"]["gaps"]])
    assert ADDED in coverage, out["checklist_coverage"]
    # `deepresearch trace` shows what the user changed.
    job_id = r.stderr.split("job ", 1)[1].split()[0]
    trace = subprocess.run([sys.executable, "-m", "services.cli", "trace", job_id], env=_env(system),
                           capture_output=True, text=True, timeout=60)
    assert trace.returncode == 0, trace.stderr
    assert "plan review: waited" in trace.stdout and "added    checklist c" in trace.stdout, trace.stdout
