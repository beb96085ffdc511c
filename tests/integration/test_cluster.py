"""The whole system on a 3-node NATS cluster with R3 streams, through the loss of the
node that leads the job stream.

Jobs are submitted without pause while the leader of RESEARCH_JOBS is SIGKILLed and
restarted. The contract under test: a submission answered 202 is a job that completes;
a submission answered anything else (503 while the stream elects a new leader) leaves
no job behind; and admission goes on after the node is back.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from shared import subjects
from tests.conftest import FIXTURE_CORPUS
from tests.integration.cluster import NatsCluster
from tests.integration.harness import System

pytestmark = pytest.mark.integration

QUESTIONS = (
    "How do lighthouses use Fresnel lenses?",
    "What causes spring and neap tides?",
    "How do honey bees make wax?",
)


@pytest.fixture(scope="module")
def cluster(tmp_root: Path) -> Iterator[NatsCluster]:
    c = NatsCluster(tmp_root / f"cluster-{uuid.uuid4().hex[:6]}").start()
    try:
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="module")
def system(tmp_root: Path, postgres, cluster: NatsCluster) -> Iterator[System]:  # noqa: ANN001
    s = System(
        root=tmp_root / uuid.uuid4().hex[:8], postgres=postgres, corpus=FIXTURE_CORPUS, nats_url=cluster.url,
        env_overrides={"RESEARCH_STREAM_REPLICAS": "3", "RESEARCH_RATE_LIMIT_MAX": "1000", "DIGEST_POLICY": "off"},
    )
    try:
        s.start()
        yield s
    finally:
        s.stop()


@dataclass
class Submitter:
    """Submits a job every ``interval_s`` on a thread until stopped; records every answer."""

    url: str
    interval_s: float = 0.4
    attempts: int = 0
    accepted: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # "503", "500", "ReadTimeout"...
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> Submitter:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        with httpx.Client(base_url=self.url, timeout=30) as c:
            i = 0
            while not self._stop.is_set():
                body = {"question": QUESTIONS[i % len(QUESTIONS)], "max_iterations": 1}
                i += 1
                self.attempts += 1
                try:
                    r = c.post("/api/research/jobs", json=body)
                except httpx.HTTPError as exc:
                    self.refused.append(type(exc).__name__)
                else:
                    if r.status_code == 202:
                        self.accepted.append(r.json()["job_id"])
                    else:
                        self.refused.append(str(r.status_code))
                self._stop.wait(self.interval_s)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(60)


def submit_until_accepted(system: System, question: str, timeout: float = 20) -> str:
    """A submission after recovery: a 503 with Retry-After is allowed while the cluster
    settles, but within ``timeout`` the gateway must accept."""
    deadline = time.monotonic() + timeout
    with system.client() as c:
        while True:
            r = c.post("/api/research/jobs", json={"question": question, "max_iterations": 1})
            if r.status_code == 202:
                return r.json()["job_id"]
            assert r.status_code == 503 and "retry-after" in r.headers, r.text
            assert time.monotonic() < deadline, f"admission did not resume within {timeout}s: {r.status_code} {r.text}"
            time.sleep(float(r.headers["retry-after"]))


def test_losing_the_job_stream_leader_loses_no_accepted_job_and_stores_no_refused_one(system: System, cluster: NatsCluster) -> None:
    submitter = Submitter(system.url).start()
    try:
        deadline = time.monotonic() + 30
        while len(submitter.accepted) < 2:
            assert time.monotonic() < deadline, f"no job accepted before the failover: {submitter.refused}\n{system.logs()}"
            time.sleep(0.1)

        leader = asyncio.run(cluster.stream_leader(subjects.JOBS_STREAM))
        leader.kill()
        attempts_at_kill = submitter.attempts
        time.sleep(3)  # submissions go on while the stream elects a new leader
        leader.start()
        asyncio.run(cluster.wait_meta_leader())
        asyncio.run(cluster.wait_stream_replicas_current(subjects.JOBS_STREAM))
        time.sleep(1)
        assert submitter.attempts > attempts_at_kill + 1, "the failover saw no submission"
    finally:
        submitter.stop()

    after = [submit_until_accepted(system, q) for q in QUESTIONS[:2]]
    accepted = [*submitter.accepted, *after]

    statuses = {job_id: system.wait_terminal(job_id, timeout=120)["status"] for job_id in accepted}
    assert set(statuses.values()) == {"COMPLETED"}, statuses
    stored = {r["id"] for r in system.sql("SELECT id FROM research_jobs")}
    assert stored == set(accepted), f"refused answers: {submitter.refused}; stored but never accepted: {stored - set(accepted)}"
    # Exactly one result per job, through redeliveries and the failover.
    results = system.sql("SELECT job_id, count(*) AS n FROM research_results GROUP BY job_id")
    assert {r["job_id"]: r["n"] for r in results} == dict.fromkeys(accepted, 1)
    assert all(code == "503" for code in submitter.refused), submitter.refused
