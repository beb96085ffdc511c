"""Admission racing cancellation across two gateway processes: submissions and
cancellations hammered on both never admit more jobs than the limit, never lose a
transition and never leave a job between states.

Gateway processes run alone (no stages): an admitted job stays PROCESSING until it is
cancelled."""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.gateways import Gateways, submit
from tests.integration.harness import TERMINAL

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
                job_id = submit(c, f"Question {n}-{i} about tides?").json()["job_id"]
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
                    job_id = submit(a, f"Targeted {n}-{i}-{k}?").json()["job_id"]
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
