"""The gateway under failure, against real nats-server and PostgreSQL: supervised loops
that outlive a broken publish, the outbox (no transition unannounced, no answer that
contradicts the database), idempotent submission, admission racing cancellation across
two gateway processes, and an event that can never be stored.

Gateway processes run alone (no stages): an admitted job stays PROCESSING until it is
cancelled, which makes slots and transitions easy to count.
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import nats
import pytest

from services.gateway import db, jobs, outbox
from services.supervisor import wait_ready
from shared import subjects, topology
from shared.envelope import JobConfidence, StageUsage, Usage
from shared.events import ChecklistCoverage, JobCompleted, JobStatus, ResearchOutput, ResearchResult
from shared.servers import NatsServer, free_port
from shared.settings import GatewaySettings
from shared.stage import MSG_ID
from tests.integration.harness import TERMINAL, new_database, process_env, read_stream, run_sql, spawn_logged, tail_logs


@dataclass
class Gateways:
    """One nats-server, one database, and gateway processes on both."""

    root: Path
    postgres: Any
    env_overrides: dict[str, str] = field(default_factory=dict)
    nats: NatsServer | None = None
    dsn: str = ""
    urls: list[str] = field(default_factory=list)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(self, count: int = 1) -> Gateways:
        self.root.mkdir(parents=True, exist_ok=True)
        self.nats = NatsServer(self.root / "nats").start()
        self.dsn = new_database(self.postgres, "g_")
        for _ in range(count):
            self.add_gateway()
        return self

    def add_gateway(self) -> str:
        assert self.nats is not None
        port = free_port()
        env = {
            **process_env(self.nats.url, self.dsn, self.root / "data", port),
            "RESEARCH_ADMISSION_INTERVAL_S": "0.2",
            "RESEARCH_RATE_LIMIT_MAX": "100000",
            "GATEWAY_EVENT_RETRY_DELAY_S": "0.1",
            **self.env_overrides,
        }
        (self.root / "logs").mkdir(exist_ok=True)
        self.procs.append(spawn_logged("gateway", env, self.root / "logs" / f"gateway-{len(self.procs)}.log"))
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, timeout=60)
        self.urls.append(url)
        return url

    def stop(self) -> None:
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        if self.nats:
            self.nats.stop()

    def log_text(self) -> str:
        return "\n".join(f.read_text(errors="replace") for f in sorted((self.root / "logs").glob("*.log")))

    def logs(self) -> str:
        return tail_logs(self.root / "logs", 60)

    def client(self, i: int = 0) -> httpx.Client:
        return httpx.Client(base_url=self.urls[i], timeout=30)

    def sql(self, query: str, *args: Any) -> list[asyncpg.Record]:
        return run_sql(self.dsn, query, *args)

    def status(self, job_id: str) -> str:
        return self.sql("SELECT status FROM research_jobs WHERE id = $1", job_id)[0]["status"]

    def wait_status(self, job_id: str, want: set[str], timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while (s := self.status(job_id)) not in want:
            assert time.monotonic() < deadline, f"job {job_id} is {s}, not {want}\n{self.logs()}"
            time.sleep(0.1)
        return s

    def events(self, filter_subject: str = subjects.EVENTS_WILDCARD, *, stream: str = subjects.EVENTS_STREAM, settle_s: float = 0.5) -> list[tuple[str, dict[str, Any]]]:
        assert self.nats is not None
        return read_stream(self.nats.url, filter_subject, stream=stream, settle_s=settle_s)

    def statuses(self, job_id: str | None = None) -> list[dict[str, Any]]:
        return [e for _, e in self.events() if e["type"] == "status" and (job_id is None or e["job_id"] == job_id)]

    def js(self, fn) -> Any:  # noqa: ANN001
        """Run ``await fn(js)`` on a fresh connection."""
        assert self.nats is not None

        async def run() -> Any:
            nc = await nats.connect(self.nats.url)  # type: ignore[union-attr]
            try:
                return await fn(nc.jetstream())
            finally:
                await nc.close()

        return asyncio.run(run())


def _submit(c: httpx.Client, question: str = "How do lighthouses use Fresnel lenses?", **kw: Any) -> httpx.Response:
    return c.post("/api/research/jobs", json={"question": question, "max_iterations": 1}, **kw)


@pytest.fixture(scope="module")
def gw(tmp_root: Path, postgres) -> Iterator[Gateways]:  # noqa: ANN001
    g = Gateways(tmp_root / ("gw-" + uuid.uuid4().hex[:6]), postgres, env_overrides={"RESEARCH_MAX_CONCURRENCY": "1"}).start(1)
    try:
        yield g
    finally:
        g.stop()


def _cancel_active(g: Gateways) -> None:
    with g.client() as c:
        for row in g.sql("SELECT id FROM research_jobs WHERE status IN ('QUEUED', 'PROCESSING', 'AWAITING_INPUT')"):
            c.post(f"/api/research/jobs/{row['id']}/cancel")


# -- 1. loops survive a publish that fails; /readyz says so meanwhile ----------------------


def test_admission_and_relay_survive_a_missing_stream_and_readyz_names_the_loop(gw: Gateways) -> None:
    _cancel_active(gw)
    gw.js(lambda js: js.delete_stream(subjects.JOBS_STREAM))  # every plan command now fails to publish
    with gw.client() as c:
        first = _submit(c).json()["job_id"]
        deadline = time.monotonic() + 60
        while True:
            r = c.get("/readyz")
            if r.status_code == 503 and "outbox-relay" in r.json().get("loops", {}):
                break
            assert time.monotonic() < deadline, f"/readyz never named the relay: {r.text}\n{gw.logs()}"
            time.sleep(0.3)
        assert gw.status(first) == "PROCESSING"  # admitted (stored); its plan command waits in the outbox

        gw.js(lambda js: topology.ensure_topology(js, ttl_s=86_400))
        deadline = time.monotonic() + 60
        while c.get("/readyz").status_code != 200:
            assert time.monotonic() < deadline, f"/readyz never recovered\n{gw.logs()}"
            time.sleep(0.3)
    plans = gw.events(subjects.PLAN, stream=subjects.JOBS_STREAM)
    assert [e["job_id"] for _, e in plans] == [first]
    assert [e["status"] for e in gw.statuses(first)] == ["QUEUED", "PROCESSING"]

    # Admission still runs: a slot freed by cancelling is taken by the next job.
    with gw.client() as c:
        second = _submit(c).json()["job_id"]
        assert gw.status(second) == "QUEUED"
        assert c.post(f"/api/research/jobs/{first}/cancel").status_code == 200
    gw.wait_status(second, {"PROCESSING"})
    deadline = time.monotonic() + 10
    while gw.sql("SELECT count(*) AS n FROM research_outbox")[0]["n"]:
        assert time.monotonic() < deadline
        time.sleep(0.2)


# -- 2. the answer matches what is stored --------------------------------------------------


def test_with_nats_down_a_submission_is_stored_answered_202_and_announced_later(gw: Gateways) -> None:
    _cancel_active(gw)
    assert gw.nats is not None
    gw.nats.stop()
    try:
        with gw.client() as c:
            r = _submit(c, headers={"Idempotency-Key": "outage-1"})
            assert r.status_code == 202, r.text
            job_id = r.json()["job_id"]
            # A client that retries (it saw a timeout, say) gets the same job back.
            again = _submit(c, headers={"Idempotency-Key": "outage-1"})
            assert again.status_code == 202 and again.json()["job_id"] == job_id
            # What cannot be done without NATS is refused with nothing stored.
            cancel = c.post(f"/api/research/jobs/{job_id}/cancel")
            assert cancel.status_code == 503, cancel.text
            assert int(cancel.headers["Retry-After"]) > 0
            assert "message" in cancel.json()
        assert gw.sql("SELECT count(*) AS n FROM research_jobs WHERE idempotency_key = 'outage-1'")[0]["n"] == 1
        assert gw.status(job_id) in ("QUEUED", "PROCESSING")
    finally:
        gw.nats.start()
    deadline = time.monotonic() + 60
    while [e["status"] for e in gw.statuses(job_id)] != ["QUEUED", "PROCESSING"]:
        assert time.monotonic() < deadline, f"{gw.statuses(job_id)}\n{gw.logs()}"
        time.sleep(0.5)
    with gw.client() as c:
        deadline = time.monotonic() + 60
        while c.get("/readyz").status_code != 200:
            assert time.monotonic() < deadline, gw.logs()
            time.sleep(0.3)
        assert c.post(f"/api/research/jobs/{job_id}/cancel").status_code == 200


def _database_accepts_connections(g: Gateways, yes: bool) -> None:
    """Switch the gateways' database off (existing sessions are ended) or on again."""
    name = g.dsn.rsplit("/", 1)[1]
    admin = g.dsn.rsplit("/", 1)[0].replace("+asyncpg", "") + "/postgres"

    async def run() -> None:
        conn = await asyncpg.connect(admin)
        try:
            await conn.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS {"true" if yes else "false"}')
            if not yes:
                await conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name)
        finally:
            await conn.close()

    asyncio.run(run())


def test_without_the_database_a_submission_is_refused_503_with_retry_after(gw: Gateways) -> None:
    def allow(yes: bool) -> None:
        _database_accepts_connections(gw, yes)

    before = gw.sql("SELECT count(*) AS n FROM research_jobs")[0]["n"]
    allow(False)
    try:
        with gw.client() as c:
            r = _submit(c, headers={"Idempotency-Key": "db-down"})
        assert r.status_code == 503, r.text + gw.log_text()
        assert int(r.headers["Retry-After"]) > 0
        assert "nothing was stored" in r.json()["message"]
    finally:
        allow(True)
    assert gw.sql("SELECT count(*) AS n FROM research_jobs")[0]["n"] == before
    with gw.client() as c:
        r = _submit(c, headers={"Idempotency-Key": "db-down"})
        assert r.status_code == 202, r.text
        c.post(f"/api/research/jobs/{r.json()['job_id']}/cancel")


def test_idempotency_key_returns_the_same_job_and_refuses_a_different_request(gw: Gateways) -> None:
    key = uuid.uuid4().hex
    with gw.client() as c:
        a = _submit(c, "What is a neap tide?", headers={"Idempotency-Key": key})
        b = _submit(c, "What is a neap tide?", headers={"Idempotency-Key": key})
        assert a.status_code == b.status_code == 202
        assert a.json()["job_id"] == b.json()["job_id"]
        other = _submit(c, "What is a spring tide?", headers={"Idempotency-Key": key})
        assert other.status_code == 409, other.text
        assert "Idempotency-Key" in other.json()["message"]
        fresh = _submit(c, "What is a neap tide?", headers={"Idempotency-Key": uuid.uuid4().hex})
        assert fresh.json()["job_id"] != a.json()["job_id"]
        bad = _submit(c, headers={"Idempotency-Key": "x" * 201})
        assert bad.status_code == 422 and "Idempotency-Key" in bad.json()["message"]
    assert gw.sql("SELECT count(*) AS n FROM research_jobs WHERE idempotency_key = $1", key)[0]["n"] == 1
    _cancel_active(gw)


# -- 3. a committed transition is announced even if the process dies right after -----------


def test_a_transition_committed_without_announcing_is_published_by_the_relay(gw: Gateways) -> None:
    settings = GatewaySettings(database_url=gw.dsn)
    assert settings.database_url is not None
    job_id = str(uuid.uuid4())

    async def crash_then_relay() -> int:
        engine = db.make_engine(settings.database_url)  # type: ignore[arg-type]
        sessions = db.make_sessions(engine)
        try:
            # What a gateway does before it dies: commit, and never publish.
            async with sessions() as session:
                await jobs.create_job(
                    session, job_id=job_id, user_id="crash", question="q?", context=None, max_iterations=1, corpora=None,
                    rate_max=100, rate_window_s=60,
                )
            async with sessions() as session:
                assert await jobs.fail_job(session, job_id=job_id, reason="the stage said so")
            # Another process's relay (here: this one, after "restart") announces it.
            nc = await nats.connect(gw.nats.url)  # type: ignore[union-attr]
            try:
                js = nc.jetstream()
                published = await outbox.relay_once(sessions, js)
                # Relaying a row again (the crash came between publish and delete) is
                # deduplicated by its Nats-Msg-Id.
                async with sessions() as session:
                    outbox.enqueue_status(session, _status("FAILED", job_id))
                    await session.commit()
                return published
            finally:
                await nc.close()
        finally:
            await engine.dispose()

    # The running gateway may relay first; either way the event must be on the subject.
    asyncio.run(crash_then_relay())
    deadline = time.monotonic() + 10
    while [e["status"] for e in gw.statuses(job_id)][:2] != ["QUEUED", "FAILED"]:
        assert time.monotonic() < deadline, gw.statuses(job_id)
        time.sleep(0.2)
    subjects_seen = [s for s, e in gw.events(subjects.job_events_filter(job_id))]
    assert subjects_seen[0] == subjects.event_subject(job_id, "status")
    failed = [e for e in gw.statuses(job_id) if e["status"] == "FAILED"]
    assert failed[0]["reason"] == "the stage said so" and failed[0]["previous"] == "QUEUED"


def _status(status: str, job_id: str):  # noqa: ANN202
    from shared.events import JobStatusChanged

    return JobStatusChanged(job_id=job_id, status=JobStatus(status), reason="duplicate check")


def test_a_relayed_message_published_twice_is_stored_once(gw: Gateways) -> None:
    job_id = str(uuid.uuid4())
    subject = subjects.event_subject(job_id, "status")

    async def twice(js) -> None:  # noqa: ANN001
        for _ in range(2):
            await js.publish(subject, _status("FAILED", job_id).model_dump_json().encode(), headers={MSG_ID: f"{job_id}:status:FAILED:abc"})

    gw.js(twice)
    assert len(gw.events(subject)) == 1


# -- 4. admission racing cancellation, across two gateway processes --------------------------


@pytest.fixture(scope="module")
def pair(tmp_root: Path, postgres) -> Iterator[Gateways]:  # noqa: ANN001
    g = Gateways(tmp_root / ("pair-" + uuid.uuid4().hex[:6]), postgres, env_overrides={"RESEARCH_MAX_CONCURRENCY": "2", "RESEARCH_ADMISSION_INTERVAL_S": "0.05"}).start(2)
    try:
        yield g
    finally:
        g.stop()


def test_submit_and_cancel_hammered_on_two_gateways_never_break_the_lifecycle(pair: Gateways) -> None:
    limit = 2
    peak = 0
    stop = threading.Event()

    def watch() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, pair.sql("SELECT count(*) AS n FROM research_jobs WHERE status = 'PROCESSING'")[0]["n"])

    watcher = threading.Thread(target=watch)
    watcher.start()
    cancelled: set[str] = set()
    submitted: list[str] = []
    lock = threading.Lock()

    def worker(n: int) -> None:
        rnd = random.Random(n)
        with pair.client(n % 2) as c, pair.client((n + 1) % 2) as other:
            for i in range(12):
                job_id = _submit(c, f"Question {n}-{i} about tides?").json()["job_id"]
                with lock:
                    submitted.append(job_id)
                time.sleep(rnd.random() * 0.05)
                # Cancel through the *other* gateway, often while admission is moving it.
                with lock:
                    victim = rnd.choice(submitted)
                r = other.post(f"/api/research/jobs/{victim}/cancel")
                assert r.status_code in (200, 409), r.text
                if r.status_code == 200:
                    assert r.json()["status"] == "CANCELLED", r.text
                    with lock:
                        cancelled.add(victim)

    def targeted(n: int) -> None:
        """Free a slot on one gateway while the other cancels the job admission is
        about to take: the interleaving that used to leave it PROCESSING yet cancelled."""
        rnd = random.Random(100 + n)
        with pair.client(n % 2) as a, pair.client((n + 1) % 2) as b:
            for i in range(25):
                for k in range(2):
                    job_id = _submit(a, f"Targeted {n}-{i}-{k}?").json()["job_id"]
                    with lock:
                        submitted.append(job_id)
                running = [r["id"] for r in pair.sql("SELECT id FROM research_jobs WHERE status = 'PROCESSING'")]
                head = pair.sql("SELECT id FROM research_jobs WHERE status = 'QUEUED' ORDER BY seq LIMIT 1")
                if not running or not head:
                    continue
                pause = rnd.random() * 0.004

                def free() -> None:
                    if a.post(f"/api/research/jobs/{running[0]}/cancel").status_code == 200:
                        with lock:
                            cancelled.add(running[0])

                def race() -> None:
                    time.sleep(pause)
                    r = b.post(f"/api/research/jobs/{head[0]['id']}/cancel")
                    assert r.status_code in (200, 409), r.text
                    if r.status_code == 200:
                        assert r.json()["status"] == "CANCELLED", r.text
                        with lock:
                            cancelled.add(head[0]["id"])

                pair_threads = [threading.Thread(target=free), threading.Thread(target=race)]
                for t in pair_threads:
                    t.start()
                for t in pair_threads:
                    t.join()

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)] + [threading.Thread(target=targeted, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # Drain: cancel whatever still runs or waits, until nothing is active.
    deadline = time.monotonic() + 60
    with pair.client() as c:
        while active := pair.sql("SELECT id FROM research_jobs WHERE status IN ('QUEUED', 'PROCESSING')"):
            assert time.monotonic() < deadline, active
            for row in active:
                if c.post(f"/api/research/jobs/{row['id']}/cancel").status_code == 200:
                    cancelled.add(row["id"])
    stop.set()
    watcher.join()

    rows = pair.sql("SELECT id, status, error, started_at, finished_at FROM research_jobs")
    by_id = {r["id"]: r for r in rows}
    assert set(submitted) <= set(by_id)
    assert peak <= limit
    for job_id in cancelled:
        assert by_id[job_id]["status"] == "CANCELLED", by_id[job_id]
    for r in rows:
        assert r["status"] == "CANCELLED"  # every job was cancelled in the end; none left running
        if r["started_at"] is not None:
            assert r["finished_at"] >= r["started_at"], dict(r)

    # The status events, in stream order, agree: never more than `limit` running, and
    # nothing starts after it was cancelled.
    deadline = time.monotonic() + 30
    while pair.sql("SELECT count(*) AS n FROM research_outbox")[0]["n"]:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    running: set[str] = set()
    done: set[str] = set()
    seen_peak = 0
    for e in pair.statuses():
        if e["status"] == "PROCESSING":
            assert e["job_id"] not in done, e
            running.add(e["job_id"])
        elif e["status"] in TERMINAL:
            running.discard(e["job_id"])
            done.add(e["job_id"])
        seen_peak = max(seen_peak, len(running))
    assert seen_peak <= limit
    assert done == set(by_id)


# -- 5. an event that can never be stored fails its job after a few attempts -----------------


def _result(report: str, *, engine: str = "offline", tokens: int = 0) -> ResearchResult:
    return ResearchResult(
        report=report,
        output=ResearchOutput(
            trace_id="t", answer=report, sources=[], checklist_coverage=ChecklistCoverage(satisfied=[], gaps=[]),
            iterations_used=1, status="completed",
        ),
        scored_sources=[], claims=[],
        confidence=JobConfidence(confidence=0.5, claim_count=0, source_count=0, has_contradictions=False),
        usage=Usage(by_stage={"synthesize": StageUsage(input_tokens=tokens)}), engine=engine,
    )


def _publish_completed(g: Gateways, job_id: str, result: ResearchResult) -> None:
    event = JobCompleted(job_id=job_id, result=result)

    async def pub(js) -> None:  # noqa: ANN001
        await js.publish(subjects.event_subject(job_id, "completed"), event.model_dump_json().encode(), headers={MSG_ID: f"{job_id}:completed:{uuid.uuid4().hex[:6]}"})

    g.js(pub)


def _running_job(g: Gateways) -> str:
    _cancel_active(g)
    with g.client() as c:
        job_id = _submit(c).json()["job_id"]
    g.wait_status(job_id, {"PROCESSING"})
    return job_id


def test_a_result_holding_nul_is_stored_without_it(gw: Gateways) -> None:
    job_id = _running_job(gw)
    _publish_completed(gw, job_id, _result("A report\x00 with a NUL."))
    assert gw.wait_status(job_id, {"COMPLETED", "FAILED"}) == "COMPLETED"
    report = gw.sql("SELECT report FROM research_results WHERE job_id = $1", job_id)[0]["report"]
    assert report == "A report with a NUL."


def test_an_event_that_cannot_be_stored_fails_its_job_after_a_few_attempts(gw: Gateways) -> None:
    job_id = _running_job(gw)
    log_before = gw.log_text().count(f"research.events.{job_id}.completed")
    # A token count beyond PostgreSQL's integer column: no retry can ever store it.
    t0 = time.monotonic()
    _publish_completed(gw, job_id, _result("fine", tokens=2**40))
    assert gw.wait_status(job_id, {"COMPLETED", "FAILED"}, timeout=30) == "FAILED"
    assert time.monotonic() - t0 > 0.1 + 0.2 + 0.4 + 0.8  # the attempts backed off
    error = gw.sql("SELECT error FROM research_jobs WHERE id = $1", job_id)[0]["error"]
    assert "could not store the job's completed event after 5 attempts" in error, error
    assert [e["status"] for e in gw.statuses(job_id)][-1] == "FAILED"
    time.sleep(1.5)
    # Five attempts, a handful of log lines each: not an endless loop.
    assert gw.log_text().count(f"research.events.{job_id}.completed") - log_before <= 12
    # The slot is free again.
    with gw.client() as c:
        nxt = _submit(c).json()["job_id"]
    gw.wait_status(nxt, {"PROCESSING"})
    _cancel_active(gw)


def test_a_database_outage_does_not_use_up_an_events_attempts(gw: Gateways) -> None:
    job_id = _running_job(gw)
    _database_accepts_connections(gw, False)
    try:
        _publish_completed(gw, job_id, _result("Stored once the database is back."))
        # Far longer than five attempts with their 0.1 s base delay would take.
        time.sleep(4)
    finally:
        _database_accepts_connections(gw, True)
    assert gw.wait_status(job_id, {"COMPLETED", "FAILED"}, timeout=60) == "COMPLETED", gw.logs()
    assert gw.sql("SELECT report FROM research_results WHERE job_id = $1", job_id)[0]["report"] == "Stored once the database is back."


def test_an_event_whose_handling_never_finished_fails_its_job_through_the_dead_letter_stream(gw: Gateways) -> None:
    job_id = _running_job(gw)
    progress = {"type": "progress", "job_id": job_id, "stage": "plan", "progress": 0.5, "message": "m"}

    async def dead_event(js) -> None:  # noqa: ANN001
        ack = await js.publish(subjects.event_subject(job_id, "progress"), json.dumps(progress).encode())
        # What JetStream publishes when the gateway's consumer reached max_deliver
        # (every process that took the event died before acking it).
        advisory = {
            "type": "io.nats.jetstream.advisory.v1.max_deliver", "stream": subjects.EVENTS_STREAM,
            "consumer": subjects.GATEWAY_EVENTS_DURABLE, "stream_seq": ack.seq, "deliveries": 7,
        }
        await js.publish(subjects.EVENTS_MAX_DELIVERIES_ADVISORY, json.dumps(advisory).encode())

    gw.js(dead_event)
    assert gw.wait_status(job_id, {"FAILED"}, timeout=30) == "FAILED"
    error = gw.sql("SELECT error FROM research_jobs WHERE id = $1", job_id)[0]["error"]
    assert error == "the gateway gave up on the job's progress event after 7 deliveries (its handling never finished)"
