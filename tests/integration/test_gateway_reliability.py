"""The gateway under failure, against real nats-server and PostgreSQL: supervised loops
that outlive a broken publish, the outbox (no transition unannounced, no answer that
contradicts the database), idempotent submission, and an event that can never be
stored. Admission racing cancellation across two gateways is in test_gateway_pair.py.

Gateway processes run alone (no stages): an admitted job stays PROCESSING until it is
cancelled, which makes slots and transitions easy to count.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import nats
import pytest

from services.gateway import db, jobs, outbox
from shared import subjects
from shared.stores import topology
from shared.research.events import JobStatus
from shared.settings import GatewaySettings
from shared.runtime.publishing import MSG_ID
from tests.integration.gateways import Gateways, completed_result, publish_completed, submit



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
        first = submit(c).json()["job_id"]
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
        second = submit(c).json()["job_id"]
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
            r = submit(c, headers={"Idempotency-Key": "outage-1"})
            assert r.status_code == 202, r.text
            job_id = r.json()["job_id"]
            # A client that retries (it saw a timeout, say) gets the same job back.
            again = submit(c, headers={"Idempotency-Key": "outage-1"})
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
            r = submit(c, headers={"Idempotency-Key": "db-down"})
        assert r.status_code == 503, r.text + gw.log_text()
        assert int(r.headers["Retry-After"]) > 0
        assert "nothing was stored" in r.json()["message"]
    finally:
        allow(True)
    assert gw.sql("SELECT count(*) AS n FROM research_jobs")[0]["n"] == before
    with gw.client() as c:
        r = submit(c, headers={"Idempotency-Key": "db-down"})
        assert r.status_code == 202, r.text
        c.post(f"/api/research/jobs/{r.json()['job_id']}/cancel")


def test_idempotency_key_returns_the_same_job_and_refuses_a_different_request(gw: Gateways) -> None:
    key = uuid.uuid4().hex
    with gw.client() as c:
        a = submit(c, "What is a neap tide?", headers={"Idempotency-Key": key})
        b = submit(c, "What is a neap tide?", headers={"Idempotency-Key": key})
        assert a.status_code == b.status_code == 202
        assert a.json()["job_id"] == b.json()["job_id"]
        other = submit(c, "What is a spring tide?", headers={"Idempotency-Key": key})
        assert other.status_code == 409, other.text
        assert "Idempotency-Key" in other.json()["message"]
        fresh = submit(c, "What is a neap tide?", headers={"Idempotency-Key": uuid.uuid4().hex})
        assert fresh.json()["job_id"] != a.json()["job_id"]
        bad = submit(c, headers={"Idempotency-Key": "x" * 201})
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
    from shared.research.events import JobStatusChanged

    return JobStatusChanged(job_id=job_id, status=JobStatus(status), reason="duplicate check")


def test_a_relayed_message_published_twice_is_stored_once(gw: Gateways) -> None:
    job_id = str(uuid.uuid4())
    subject = subjects.event_subject(job_id, "status")

    async def twice(js) -> None:  # noqa: ANN001
        for _ in range(2):
            await js.publish(subject, _status("FAILED", job_id).model_dump_json().encode(), headers={MSG_ID: f"{job_id}:status:FAILED:abc"})

    gw.js(twice)
    assert len(gw.events(subject)) == 1


# -- 5. an event that can never be stored fails its job after a few attempts -----------------


def _running_job(g: Gateways) -> str:
    _cancel_active(g)
    with g.client() as c:
        job_id = submit(c).json()["job_id"]
    g.wait_status(job_id, {"PROCESSING"})
    return job_id


def test_a_result_holding_nul_is_stored_without_it(gw: Gateways) -> None:
    job_id = _running_job(gw)
    publish_completed(gw, job_id, completed_result("A report\x00 with a NUL."))
    assert gw.wait_status(job_id, {"COMPLETED", "FAILED"}) == "COMPLETED"
    report = gw.sql("SELECT report FROM research_results WHERE job_id = $1", job_id)[0]["report"]
    assert report == "A report with a NUL."


def test_an_event_that_cannot_be_stored_fails_its_job_after_a_few_attempts(gw: Gateways) -> None:
    job_id = _running_job(gw)
    log_before = gw.log_text().count(f"research.events.{job_id}.completed")
    # A token count beyond PostgreSQL's integer column: no retry can ever store it.
    t0 = time.monotonic()
    publish_completed(gw, job_id, completed_result("fine", tokens=2**40))
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
        nxt = submit(c).json()["job_id"]
    gw.wait_status(nxt, {"PROCESSING"})
    _cancel_active(gw)


def test_a_database_outage_does_not_use_up_an_events_attempts(gw: Gateways) -> None:
    job_id = _running_job(gw)
    _database_accepts_connections(gw, False)
    try:
        publish_completed(gw, job_id, completed_result("Stored once the database is back."))
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
