"""A PostgreSQL that the system did not start (here: the test's own, standing for an
operator's) is SIGKILLed under a running system and started again on the same data
folder and port. Nothing restarts it for the gateway; the gateway answers 503 with
Retry-After meanwhile, storing nothing, and is ready again within 15 s of the
server's return, with what was committed before the kill, and a job submitted then
completes."""

from __future__ import annotations

import os
import signal
import time
import uuid
from pathlib import Path

import httpx
import pytest

from shared.platform.servers import PostgresServer
from tests.conftest import FIXTURE_CORPUS
from tests.integration.harness import System

pytestmark = pytest.mark.integration


def _readyz(url: str) -> httpx.Response | None:
    try:
        return httpx.get(f"{url}/readyz", timeout=5)
    except httpx.HTTPError:
        return None


def test_an_external_postgres_killed_and_restarted_under_the_gateway(tmp_root: Path) -> None:
    pg = PostgresServer(tmp_root / f"ext-pg-{uuid.uuid4().hex[:6]}").start()
    system = System(tmp_root / f"ext-sys-{uuid.uuid4().hex[:6]}", pg, corpus=FIXTURE_CORPUS).start()
    try:
        before = system.submit(max_iterations=1)
        assert system.wait_terminal(before, timeout=120)["status"] == "COMPLETED"
        port, pid = pg.port, pg.pid
        assert pid is not None

        os.kill(pid, signal.SIGKILL)
        assert pg.proc is not None
        pg.proc.wait(10)
        deadline = time.monotonic() + 30
        while (r := _readyz(system.url)) is None or r.status_code != 503:
            assert time.monotonic() < deadline, r.text if r is not None else "no answer"
            time.sleep(0.2)
        assert r.json()["postgres"] is False, r.text
        with system.client() as c:
            refused = c.post("/api/research/jobs", json={"question": "stored while PostgreSQL is down?"},
                             headers={"Idempotency-Key": "ext-pg-down"})
        assert refused.status_code == 503, refused.text
        assert int(refused.headers["Retry-After"]) > 0

        # Started again as its operator would: the same data folder and port. Its old
        # backends may hold the shared memory for a moment: retry, as `up` does.
        deadline = time.monotonic() + 60
        while True:
            try:
                pg.restart()
                break
            except RuntimeError:
                assert time.monotonic() < deadline, (pg.data_dir / "postgres.log").read_text(errors="replace")[-3000:]
                time.sleep(0.5)
        returned = time.monotonic()
        assert pg.port == port and pg.pid != pid
        while (r := _readyz(system.url)) is None or r.status_code != 200:
            assert time.monotonic() - returned < 15, (r.text if r is not None else "no answer") + system.logs()
            time.sleep(0.2)
        print(f"external PostgreSQL: ready {time.monotonic() - returned:.1f} s after its return")  # noqa: T201

        # What was committed before the kill is there; the refused submission is not.
        assert system.sql("SELECT status FROM research_jobs WHERE id = $1", before)[0]["status"] == "COMPLETED"
        assert system.sql("SELECT count(*) AS n FROM research_results WHERE job_id = $1", before)[0]["n"] == 1
        assert system.sql("SELECT count(*) AS n FROM research_jobs WHERE idempotency_key = 'ext-pg-down'")[0]["n"] == 0
        after = system.submit(max_iterations=1)
        assert system.wait_terminal(after, timeout=120)["status"] == "COMPLETED"
        assert system.sql("SELECT count(*) AS n FROM research_results WHERE job_id = $1", after)[0]["n"] == 1
    finally:
        system.stop()
        pg.stop()
