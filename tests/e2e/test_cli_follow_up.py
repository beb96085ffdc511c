"""``deepresearch follow-up ID "question"`` as a user runs it against a running system
(real nats-server, PostgreSQL and the six service processes, the offline engine over
the fixture corpus): it follows the new job with ask's plain progress lines, prints the
report naming the parent, and exits with ask's codes (4 for an unknown or another
user's job, 5 for a job that did not complete, 2 for an empty question)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import FIXTURE_CORPUS
from tests.integration.harness import System

KEYS = "key-alice:alice,key-bob:bob"
QUESTION = "How did automation change lighthouse keeping?"
FOLLOW_UP = "What did lighthouse keepers maintain before automation?"


@pytest.fixture(scope="module")
def system(tmp_root: Path, postgres) -> Iterator[System]:  # noqa: ANN001
    s = System(root=tmp_root / ("clif-" + uuid.uuid4().hex[:6]), postgres=postgres, corpus=FIXTURE_CORPUS,
               env_overrides={"RESEARCH_API_KEYS": KEYS}).start()
    try:
        yield s
    finally:
        s.stop()


def cli(system: System, *args: str, key: str = "key-alice", timeout: float = 180) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NATS_URL", "DATABASE_URL", "RESEARCH_API_KEY")}
    env |= {"RESEARCH_GATEWAY_URL": system.url, "RESEARCH_DATA_DIR": str(system.root / "cli-data"),
            "RESEARCH_API_KEY": key}
    return subprocess.run([sys.executable, "-m", "services.cli", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def parent(system: System) -> str:
    r = cli(system, "ask", QUESTION, "--max-iterations", "1")
    assert r.returncode == 0, r.stderr
    return r.stderr.split("job ", 1)[1].split()[0]


def test_follow_up_follows_the_new_job_and_prints_its_report(system: System, parent: str) -> None:
    r = cli(system, "follow-up", parent, FOLLOW_UP)
    assert r.returncode == 0, r.stderr
    assert f"following up job {parent}" in r.stderr
    job_id = r.stderr.split("job ", 1)[1].split()[0]
    assert "[iteration 1] plan started" in r.stderr and "status: COMPLETED" in r.stderr, r.stderr
    assert "\x1b[" not in r.stderr  # plain lines off a terminal, as ask's
    assert r.stdout.startswith(f"# {FOLLOW_UP}") and f"Follow-up of job {parent}" in r.stdout, r.stdout[-1500:]
    assert system.job(job_id, key="key-alice")["parent_job_id"] == parent

    as_json = cli(system, "follow-up", parent, "Which lighthouses were automated first?", "--json")
    assert as_json.returncode == 0, as_json.stderr
    body = json.loads(as_json.stdout)
    assert body["parent_job_id"] == parent and body["sources"] and body["job_id"] != job_id


def test_follow_up_exit_codes(system: System, parent: str) -> None:
    assert cli(system, "follow-up", parent, FOLLOW_UP, key="key-bob").returncode == 4  # another user's job
    assert cli(system, "follow-up", str(uuid.uuid4()), FOLLOW_UP).returncode == 4
    empty = cli(system, "follow-up", parent, "   ")
    assert empty.returncode == 2 and "question" in empty.stderr, empty.stderr
    with system.client("key-alice") as c:
        job_id = c.post("/api/research/jobs", json={"question": QUESTION}).json()["job_id"]
        c.post(f"/api/research/jobs/{job_id}/cancel")
        status = c.get(f"/api/research/jobs/{job_id}").json()["status"]
    r = cli(system, "follow-up", job_id, FOLLOW_UP)
    if status == "CANCELLED":
        assert r.returncode == 5 and "CANCELLED" in r.stderr, r.stderr
