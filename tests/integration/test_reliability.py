"""Delivery, admission, cancellation and recovery against real servers and processes.

Stages are slowed or broken with RESEARCH_CHAOS (the runner's fault injection), so
that jobs overlap, can be cancelled mid-stage, or fail on every attempt.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import nats
import pytest

from shared import subjects
from shared.runtime.publishing import MSG_ID
from tests.integration.conftest import running_system
from tests.integration.harness import TERMINAL, System


@pytest.fixture(scope="module")
def slow(tmp_root: Path, postgres) -> Iterator[System]:  # noqa: ANN001
    """Retrieval takes 2 s per job; at most 2 jobs run at once (across all gateways)."""
    with running_system(
        tmp_root, postgres,
        env_overrides={"RESEARCH_MAX_CONCURRENCY": "2", "RESEARCH_CHAOS": "retrieve:delay=2", "RESEARCH_RATE_LIMIT_MAX": "1000"},
    ) as s:
        yield s


def test_concurrency_limit_holds_across_two_gateways_and_jobs_start_in_order(slow: System) -> None:
    # Two gateway processes share the database; submissions alternate between them.
    urls = [slow.url, slow.second_gateway()]
    ids = [slow.submit(f"Question {i} about lighthouse fog signals?", url=urls[i % 2], max_iterations=1) for i in range(6)]
    for job_id in ids:
        assert slow.wait_terminal(job_id, timeout=90)["status"] == "COMPLETED"

    statuses = [e for e in slow.events() if e["type"] == "status" and e["job_id"] in ids]
    running: set[str] = set()
    peak = 0
    started_order = []
    for e in statuses:  # stream order is the order the gateway persisted them
        if e["status"] == "PROCESSING":
            running.add(e["job_id"])
            started_order.append(e["job_id"])
        elif e["status"] in ("COMPLETED", "FAILED", "CANCELLED", "EXPIRED"):
            running.discard(e["job_id"])
        peak = max(peak, len(running))
    assert peak == 2
    assert started_order == ids


def test_a_cancelled_job_stops_within_two_seconds_and_no_later_stage_runs(slow: System) -> None:
    job_id = slow.submit("How are fog signals sounded?", max_iterations=1)
    deadline = time.monotonic() + 30
    while not any(e["type"] == "stage" and e["stage"] == "retrieve" and e["state"] == "started" for e in slow.events(job_id, settle_s=0.1)):
        assert time.monotonic() < deadline, "retrieval never started"
    with slow.client() as c:
        t0 = time.monotonic()
        r = c.post(f"/api/research/jobs/{job_id}/cancel")
        assert r.status_code == 200 and r.json()["status"] == "CANCELLED"
    assert slow.wait_terminal(job_id, timeout=2)["status"] == "CANCELLED"
    assert time.monotonic() - t0 < 2

    time.sleep(3)  # longer than the 2 s the retrieval would have taken
    events = slow.events(job_id)
    retrieve = [e for e in events if e["type"] == "stage" and e["stage"] == "retrieve"]
    assert [e["state"] for e in retrieve] == ["started", "skipped"]  # abandoned in flight
    assert not [e for e in events if e["type"] == "stage" and e["stage"] in ("digest", "score", "synthesize")]
    assert not [e for e in events if e["type"] == "completed"]
    with slow.client() as c:
        assert c.post(f"/api/research/jobs/{job_id}/cancel").status_code == 409


@pytest.fixture(scope="module")
def redundant(tmp_root: Path, postgres) -> Iterator[System]:  # noqa: ANN001
    """Two retrieval processes sharing the durable; retrieval takes 3 s, ack_wait 2 s."""
    with running_system(
        tmp_root, postgres, extra={"retrieval": 1},
        env_overrides={"RESEARCH_CHAOS": "retrieve:delay=3", "RESEARCH_ACK_WAIT_S": "2"},
    ) as s:
        yield s


def test_a_stage_killed_mid_job_is_redelivered_and_the_job_completes_once(redundant: System) -> None:
    job_id = redundant.submit("Why were lighthouse keepers withdrawn?", max_iterations=1)
    deadline = time.monotonic() + 30
    started: list[dict] = []
    while not started:
        assert time.monotonic() < deadline, "retrieval never started"
        started = [e for e in redundant.events(job_id, settle_s=0.1) if e["type"] == "stage" and e["stage"] == "retrieve" and e["state"] == "started"]
    pid = int(started[0]["worker"].rsplit(":", 1)[1])
    label = next(name for name, p in redundant.sup.procs.items() if p.pid == pid)  # type: ignore[union-attr]
    redundant.kill(label)

    job = redundant.wait_terminal(job_id, timeout=60)
    assert job["status"] == "COMPLETED", job
    retrieve = [e for e in redundant.events(job_id) if e["type"] == "stage" and e["stage"] == "retrieve" and e["state"] == "started"]
    assert retrieve[-1]["delivery"] >= 2
    assert retrieve[-1]["worker"] != started[0]["worker"]
    assert redundant.sql("SELECT count(*) AS n FROM research_results WHERE job_id = $1", job_id)[0]["n"] == 1
    assert len([e for e in redundant.events(job_id) if e["type"] == "completed"]) == 1


@pytest.fixture(scope="module")
def broken(tmp_root: Path, postgres) -> Iterator[System]:  # noqa: ANN001
    """Scoring fails on every attempt; three deliveries at most."""
    with running_system(tmp_root, postgres, env_overrides={"RESEARCH_CHAOS": "score:fail", "RESEARCH_MAX_DELIVER": "3"}) as s:
        yield s


def test_a_message_that_always_fails_ends_the_job_failed_with_the_reason(broken: System) -> None:
    job_id = broken.submit("What are spring tides?", max_iterations=1)
    job = broken.wait_terminal(job_id, timeout=60)
    assert job["status"] == "FAILED"
    assert "score stage failed after 3 attempts" in job["error"]
    assert "injected failure" in job["error"]
    attempts = [e for e in broken.events(job_id) if e["type"] == "stage" and e["stage"] == "score"]
    assert [e["state"] for e in attempts] == ["started", "retrying", "started", "retrying", "started"]
    assert not [e for e in broken.events(job_id) if e["type"] == "stage" and e["stage"] == "synthesize"]


def test_a_malformed_command_fails_its_job_instead_of_vanishing(broken: System) -> None:
    job_id = broken.submit("How do bees make wax?", max_iterations=1)

    async def publish_poison() -> None:
        nc = await nats.connect(broken.nats.url)  # type: ignore[union-attr]
        try:
            await nc.jetstream().publish(
                subjects.DIGEST, b'{"version": 99, "job_id": "%s"}' % job_id.encode(), headers={MSG_ID: f"{job_id}:digest:7"}
            )
        finally:
            await nc.close()

    asyncio.run(publish_poison())
    job = broken.wait_terminal(job_id, timeout=30)
    assert job["status"] == "FAILED"
    assert "malformed digest command" in job["error"] or "score stage failed" in job["error"]
    failed = [e for e in broken.events(job_id) if e["type"] == "failed"]
    assert any(e["stage"] == "digest" and "malformed" in e["reason"] for e in failed)


def test_self_started_servers_leave_nothing_running(tmp_root: Path) -> None:
    from shared.platform.servers import ensure_servers

    data = tmp_root / "own"
    with ensure_servers(data_dir=data, nats_url=None, database_url=None) as (nats_url, dsn):
        # Self-started servers are loopback-only and require the data folder's credentials.
        nats, pg = urlsplit(nats_url), urlsplit(dsn or "")
        assert (nats.scheme, nats.hostname) == ("nats", "127.0.0.1") and nats.username and nats.password
        assert pg.scheme.startswith("postgresql") and pg.username and pg.password
        pids = [int(p.read_text().split()[0]) for p in (data / "postgres" / "pgdata").glob("postmaster.pid")]
        assert pids
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


@pytest.fixture(scope="module")
def short_lived(tmp_root: Path, postgres) -> Iterator[System]:  # noqa: ANN001
    """A 3 s TTL, one slot, and a retrieval that would take 30 s."""
    with running_system(
        tmp_root, postgres,
        env_overrides={"RESEARCH_JOB_TTL_S": "3", "RESEARCH_MAX_CONCURRENCY": "1", "RESEARCH_CHAOS": "retrieve:delay=30"},
    ) as s:
        yield s


def test_jobs_past_the_ttl_expire_running_or_queued_and_stages_drop_them(short_lived: System) -> None:
    running = short_lived.submit("Why do tides change?", max_iterations=1)
    queued = short_lived.submit("What are neap tides?", max_iterations=1)
    for job_id in (running, queued):
        job = short_lived.wait_terminal(job_id, timeout=15)
        assert job["status"] == "EXPIRED" and "TTL" in job["error"]
    time.sleep(1)
    retrieve = [e for e in short_lived.events(running) if e["type"] == "stage" and e["stage"] == "retrieve"]
    assert retrieve and retrieve[-1]["state"] == "skipped"  # abandoned, not run for 30 s


def _watch_until_terminal(system: System, job_id: str, seen: dict[str, dict], timeout: float) -> dict:
    """The job once it ends; its events as seen along the way are added to ``seen``
    (the events stream keeps them only for the TTL, 3 s here, so it is read every few
    tenths of a second)."""
    deadline = time.monotonic() + timeout
    while True:
        for e in system.events(job_id, settle_s=0.1):
            seen.setdefault(json.dumps(e, sort_keys=True), e)
        job = system.job(job_id)
        if job["status"] in TERMINAL:
            return job
        assert time.monotonic() < deadline, f"job {job_id} not finished after {timeout}s: {job}"


def test_an_expired_job_resumes_and_its_resumed_run_can_expire_in_turn(short_lived: System) -> None:
    """The expiry's control key stops the run that expired, not the resumed one: the
    resumed run starts retrieval again (from the checkpoint planning left), and the
    next expiry stops it in turn."""
    job_id = short_lived.submit("How high do spring tides rise?", max_iterations=1)
    seen: dict[str, dict] = {}
    first = _watch_until_terminal(short_lived, job_id, seen, timeout=15)
    assert first["status"] == "EXPIRED", first
    with short_lived.client() as c:
        r = c.post(f"/api/research/jobs/{job_id}/resume")
    assert r.status_code == 202 and r.json()["resumes"] == 1, r.text
    again = _watch_until_terminal(short_lived, job_id, seen, timeout=15)
    assert again["status"] == "EXPIRED" and again["resumes"] == 1, again
    stages = [(e["stage"], e["state"]) for e in seen.values() if e["type"] == "stage"]
    assert stages.count(("retrieve", "started")) == 2, stages  # once per run
    assert stages.count(("plan", "started")) == 1, stages  # the resumed run began at retrieval
