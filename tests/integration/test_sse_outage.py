"""Outages and full disks as a client sees them, against real nats-server and PostgreSQL.

A job's event stream that NATS or PostgreSQL leaves ends with a typed ``error`` event
(a message and ``retry`` advice), not a hang; reconnecting with Last-Event-ID once the
server is back resumes after the last event received, with nothing missed or repeated;
``deepresearch watch`` shows the message and resumes by itself. A full JetStream store
or PostgreSQL disk answers a submission 503 with Retry-After and a message naming it,
and the gateway recovers by itself when space returns.

Gateway processes run alone (no stages): an admitted job stays PROCESSING until it is
cancelled.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import nats.js.errors
import pytest

from services.gateway import storage
from shared import subjects
from tests.integration.gateways import Gateways, submit
from tests.integration.test_gateway_reliability import _cancel_active, _database_accepts_connections


@pytest.fixture(scope="module")
def gw(tmp_root: Path, postgres) -> Iterator[Gateways]:  # noqa: ANN001
    g = Gateways(tmp_root / ("sse-" + uuid.uuid4().hex[:6]), postgres).start(1)
    try:
        yield g
    finally:
        g.stop()


class Sse(threading.Thread):
    """One connection to a job's event stream, read to its end: its blocks as dicts
    of fields (``event``, ``id``, ``retry``, ``data`` parsed)."""

    def __init__(self, url: str, job_id: str, last: str | None = None) -> None:
        super().__init__(daemon=True)
        self.url, self.job_id, self.last = url, job_id, last
        self.blocks: list[dict[str, Any]] = []
        self.status: int | None = None
        self.body = ""
        self.headers: dict[str, str] = {}
        self.start()

    def run(self) -> None:
        headers = {"Last-Event-ID": self.last} if self.last else {}
        with httpx.Client(base_url=self.url, timeout=httpx.Timeout(30, read=None)) as c, \
                c.stream("GET", f"/api/research/jobs/{self.job_id}/events", headers=headers) as r:
            self.status, self.headers = r.status_code, dict(r.headers)
            if not r.is_success:
                self.body = r.read().decode()
                return
            block: dict[str, Any] = {}
            for line in r.iter_lines():
                if not line:
                    if "data" in block:
                        block["data"] = json.loads(block["data"])
                        self.blocks.append(block)
                    block = {}
                elif not line.startswith(":"):
                    field, _, value = line.partition(":")
                    block[field] = value[1:] if value.startswith(" ") else value

    def events(self) -> list[dict[str, Any]]:
        return [b["data"] for b in self.blocks]

    def wait_for(self, n: int, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while len(self.blocks) < n:
            assert self.is_alive() or len(self.blocks) >= n, f"stream ended early: {self.status} {self.body} {self.blocks}"
            assert time.monotonic() < deadline, self.blocks
            time.sleep(0.1)

    def ended(self, timeout: float) -> bool:
        self.join(timeout)
        return not self.is_alive()


def _running(g: Gateways) -> str:
    _cancel_active(g)
    with g.client() as c:
        r = submit(c)
        assert r.status_code == 202, r.text
        job_id = r.json()["job_id"]
    g.wait_status(job_id, {"PROCESSING"})
    deadline = time.monotonic() + 30
    while [e["status"] for e in g.statuses(job_id)] != ["QUEUED", "PROCESSING"]:
        assert time.monotonic() < deadline, g.statuses(job_id)
        time.sleep(0.2)
    return job_id


def _ready(g: Gateways, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    with g.client() as c:
        while c.get("/readyz").status_code != 200:
            assert time.monotonic() < deadline, g.logs()
            time.sleep(0.3)


def _progress(g: Gateways, job_id: str, message: str) -> None:
    event = {"type": "progress", "job_id": job_id, "stage": "plan", "progress": 0.5, "message": message}

    async def pub(js) -> None:  # noqa: ANN001
        await js.publish(subjects.event_subject(job_id, "progress"), json.dumps(event).encode())

    g.js(pub)


def _assert_outage_event(block: dict[str, Any], names: str) -> None:
    assert block["event"] == "error", block
    assert "id" not in block, block  # a resuming client's Last-Event-ID stays the last real event
    assert block.get("retry") == "5000", block
    data = block["data"]
    assert data["type"] == "error" and data["retry"] == 5000, data
    assert names in data["message"], data


def _resume_after(g: Gateways, job_id: str, first: Sse) -> None:
    """Reconnect from the last event id received: only what came after it arrives."""
    last = first.blocks[-2]["id"]  # the error event carries no id
    _progress(g, job_id, "after the outage")
    second = Sse(g.urls[0], job_id, last=last)
    second.wait_for(1)
    with g.client() as c:
        assert c.post(f"/api/research/jobs/{job_id}/cancel").status_code == 200
    assert second.ended(30), second.blocks
    assert second.status == 200
    got = [(e["type"], e.get("status") or e.get("message")) for e in second.events()]
    assert got == [("progress", "after the outage"), ("status", "CANCELLED")], got
    ids = [int(b["id"]) for b in first.blocks + second.blocks if "id" in b]
    assert ids == sorted(set(ids)), ids  # no event twice, in stream order


# -- 1. the SSE stream through an outage -------------------------------------------------


def test_a_nats_outage_ends_the_stream_with_an_error_event_and_last_event_id_resumes(gw: Gateways) -> None:
    assert gw.nats is not None
    job_id = _running(gw)
    first = Sse(gw.urls[0], job_id)
    first.wait_for(2)
    assert [e["status"] for e in first.events()] == ["QUEUED", "PROCESSING"]
    gw.nats.stop()
    try:
        assert first.ended(20), f"the stream hung through the outage: {first.blocks}"
        _assert_outage_event(first.blocks[-1], "NATS is unreachable")
        # Reconnecting meanwhile is refused with advice, not answered by a stream that hangs.
        during = Sse(gw.urls[0], job_id, last=first.blocks[-2]["id"])
        assert during.ended(30)
        assert during.status == 503, (during.status, during.body, during.blocks)
        assert int(during.headers["retry-after"]) > 0
        assert json.loads(during.body)["message"].startswith("NATS is unreachable"), during.body
    finally:
        gw.nats.start()
    _ready(gw)
    _resume_after(gw, job_id, first)


def test_a_database_outage_ends_the_stream_with_an_error_event_and_last_event_id_resumes(gw: Gateways) -> None:
    job_id = _running(gw)
    first = Sse(gw.urls[0], job_id)
    first.wait_for(2)
    _database_accepts_connections(gw, False)
    try:
        assert first.ended(20), f"the stream hung through the outage: {first.blocks}"
        _assert_outage_event(first.blocks[-1], "PostgreSQL is unavailable")
        during = Sse(gw.urls[0], job_id, last=first.blocks[-2]["id"])
        assert during.ended(30)
        assert during.status == 503, (during.status, during.body)
        assert int(during.headers["retry-after"]) > 0
    finally:
        _database_accepts_connections(gw, True)
    _ready(gw)
    _resume_after(gw, job_id, first)


def test_watch_shows_the_outage_and_resumes_without_repeating_events(gw: Gateways, tmp_path: Path) -> None:
    assert gw.nats is not None
    job_id = _running(gw)
    err = tmp_path / "watch.err"
    env = {**os.environ, "RESEARCH_GATEWAY_URL": gw.urls[0], "NO_COLOR": "1"}
    env.pop("RESEARCH_API_KEY", None)
    with err.open("wb") as err_file:
        proc = subprocess.Popen([sys.executable, "-m", "services.cli", "watch", job_id, "--plain"],
                                stdout=subprocess.PIPE, stderr=err_file, env=env)
        try:
            deadline = time.monotonic() + 30
            while "PROCESSING" not in err.read_text() + "":
                assert time.monotonic() < deadline and proc.poll() is None, err.read_text()
                time.sleep(0.2)
            gw.nats.stop()
            try:
                deadline = time.monotonic() + 30
                while "event stream interrupted: NATS is unreachable" not in err.read_text():
                    assert time.monotonic() < deadline and proc.poll() is None, err.read_text()
                    time.sleep(0.2)
            finally:
                gw.nats.start()
            _ready(gw)
            _progress(gw, job_id, "after the outage")
            deadline = time.monotonic() + 30
            while "after the outage" not in err.read_text():
                assert time.monotonic() < deadline and proc.poll() is None, err.read_text()
                time.sleep(0.2)
            with gw.client() as c:
                assert c.post(f"/api/research/jobs/{job_id}/cancel").status_code == 200
            out, _ = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    text = err.read_text()
    assert proc.returncode == 3, (proc.returncode, text, out)  # cancelled
    lines = [line.strip() for line in text.splitlines()]
    for shown in ("status: QUEUED", "status: PROCESSING", "status: CANCELLED"):
        assert sum(line.startswith(shown) for line in lines) == 1, text
    assert sum("after the outage" in line for line in lines) == 1, text


# -- 2. full disks -------------------------------------------------------------------------


def test_a_postgres_disk_full_answers_503_with_a_clear_message_and_recovers(gw: Gateways) -> None:
    # What PostgreSQL answers when it cannot extend a file: SQLSTATE 53100 (DiskFullError).
    gw.sql("CREATE OR REPLACE FUNCTION sse_test_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
           "RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$")
    gw.sql("CREATE TRIGGER sse_test_disk_full BEFORE INSERT ON research_jobs FOR EACH ROW EXECUTE FUNCTION sse_test_disk_full()")
    key = uuid.uuid4().hex
    try:
        with gw.client() as c:
            r = submit(c, headers={"Idempotency-Key": key})
        assert r.status_code == 503, r.text
        assert int(r.headers["Retry-After"]) > 0
        assert r.json()["message"] == storage.POSTGRES_DISK_FULL
    finally:
        gw.sql("DROP TRIGGER sse_test_disk_full ON research_jobs")
    assert gw.sql("SELECT count(*) AS n FROM research_jobs WHERE idempotency_key = $1", key)[0]["n"] == 0
    with gw.client() as c:
        r = submit(c, headers={"Idempotency-Key": key})
        assert r.status_code == 202, r.text
    _cancel_active(gw)


FILLER = subjects.event_subject(str(uuid.UUID(int=1)), "filler")  # in the events stream; no consumer reads it


def test_a_full_jetstream_store_refuses_submissions_503_and_recovers_when_space_returns(tmp_root: Path, postgres) -> None:  # noqa: ANN001
    g = Gateways(tmp_root / ("full-" + uuid.uuid4().hex[:6]), postgres, nats_max_file_store=512 * 1024).start(1)
    try:
        async def fill(js) -> int:  # noqa: ANN001
            for n in range(10_000):
                try:
                    await js.publish(FILLER, b"x" * 4000, timeout=5)
                except nats.js.errors.APIError as exc:
                    assert storage.is_event_store_full(exc), exc
                    return n
            raise AssertionError("the store never filled")

        assert g.js(fill) > 0
        accepted: list[str] = []
        refused: list[str] = []
        deadline = time.monotonic() + 60
        with g.client() as c:
            while True:
                key = uuid.uuid4().hex
                r = submit(c, headers={"Idempotency-Key": key})
                if r.status_code == 503:
                    refused.append(key)
                    assert r.json()["message"] == storage.EVENT_STORE_FULL, r.text
                    assert int(r.headers["Retry-After"]) > 0
                    break
                # Stored before the gateway learnt the store is full: said so (202), and
                # announced once space returns (below).
                assert r.status_code == 202, r.text
                accepted.append(r.json()["job_id"])
                assert time.monotonic() < deadline, g.logs()
                time.sleep(0.5)
            assert len(accepted) <= 3
            # Refused means not stored.
            assert g.sql("SELECT count(*) AS n FROM research_jobs WHERE idempotency_key = ANY($1)", refused)[0]["n"] == 0
            # /readyz names the relay that cannot publish.
            deadline = time.monotonic() + 60
            while "outbox-relay" not in (r := c.get("/readyz")).json().get("loops", {}):
                assert time.monotonic() < deadline, r.text
                time.sleep(0.3)
            assert "insufficient resources" in r.json()["loops"]["outbox-relay"]

            g.js(lambda js: js.purge_stream(subjects.EVENTS_STREAM, subject=FILLER))  # space returns
            deadline = time.monotonic() + 60
            while (r := submit(c)).status_code != 202:
                assert r.status_code == 503 and time.monotonic() < deadline, r.text
                time.sleep(0.5)
            accepted.append(r.json()["job_id"])
        _ready(g)
        # Every job the gateway accepted is announced (the outbox kept retrying).
        for job_id in accepted:
            deadline = time.monotonic() + 30
            while not [e for e in g.statuses(job_id) if e["status"] == "QUEUED"]:
                assert time.monotonic() < deadline, (job_id, g.logs())
                time.sleep(0.3)
        assert g.sql("SELECT count(*) AS n FROM research_outbox")[0]["n"] == 0 or _settles(g)
    finally:
        g.stop()


def _settles(g: Gateways) -> bool:
    deadline = time.monotonic() + 15
    while g.sql("SELECT count(*) AS n FROM research_outbox")[0]["n"]:
        assert time.monotonic() < deadline, g.logs()
        time.sleep(0.3)
    return True
