"""Takeover: a stage process killed mid-job, with default ack_wait, against real
servers and processes. Retrieval is slowed with RESEARCH_CHAOS so that the job is
certainly in flight when its process dies, and runs longer than ack_wait afterwards,
so heartbeats must keep the surviving copy from being delivered a second time. And the
per-process watch of the control bucket that tells in-flight work to stop."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest

from shared import subjects

from shared.settings import CommonSettings
from shared.stores.control import ControlWatch
from tests.integration.conftest import running_system
from tests.integration.harness import System, jetstream_with_topology

DEFAULT_ACK_WAIT_S = CommonSettings.model_fields["research_ack_wait_s"].default
WORK_S = DEFAULT_ACK_WAIT_S * 1.5


@pytest.fixture(scope="module")
def two_retrievers(tmp_root: Path, postgres) -> Iterator[System]:  # noqa: ANN001
    with running_system(
        tmp_root, postgres, extra={"retrieval": 1},
        env_overrides={"RESEARCH_CHAOS": f"retrieve:delay={WORK_S:g}", "RESEARCH_ACK_WAIT_S": str(DEFAULT_ACK_WAIT_S)},
    ) as s:
        yield s


def _retrieve_started(system: System, job_id: str) -> list[dict]:
    return [e for e in system.events(job_id, settle_s=0.05)
            if e["type"] == "stage" and e["stage"] == "retrieve" and e["state"] == "started"]


def test_the_other_process_takes_over_within_ten_seconds_and_the_job_completes_once(two_retrievers: System) -> None:
    s = two_retrievers
    job_id = s.submit("Why were lighthouse keepers withdrawn?", max_iterations=1)
    deadline = time.monotonic() + 30
    started: list[dict] = []
    while not started:
        assert time.monotonic() < deadline, "retrieval never started"
        started = _retrieve_started(s, job_id)
    pid = int(started[0]["worker"].rsplit(":", 1)[1])
    label = next(name for name, p in s.sup.procs.items() if p.pid == pid)  # type: ignore[union-attr]
    time.sleep(1.0)  # mid-job: heartbeats have been flowing
    killed_at = time.monotonic()
    s.kill(label)

    while len(taken := _retrieve_started(s, job_id)) < 2:
        assert time.monotonic() - killed_at < 15, f"no takeover 15 s after the kill\n{s.logs()}"
        time.sleep(0.05)
    takeover_s = time.monotonic() - killed_at
    print(f"takeover after {takeover_s:.1f}s (ack_wait {DEFAULT_ACK_WAIT_S:g}s)")
    assert takeover_s <= 10
    assert taken[1]["delivery"] == 2 and taken[1]["worker"] != started[0]["worker"]

    job = s.wait_terminal(job_id, timeout=60)
    assert job["status"] == "COMPLETED", job
    events = s.events(job_id)
    retrieve = [e for e in events if e["type"] == "stage" and e["stage"] == "retrieve"]
    # The surviving copy ran longer than ack_wait and was never delivered a third time.
    assert [e["state"] for e in retrieve] == ["started", "started", "done"]
    assert len([e for e in events if e["type"] == "completed"]) == 1
    assert s.sql("SELECT count(*) AS n FROM research_results WHERE job_id = $1", job_id)[0]["n"] == 1


@contextlib.asynccontextmanager
async def _control_watch() -> AsyncIterator[ControlWatch]:
    """A watch for the test to start when it is ready, stopped however the test ends
    so that its task does not outlive the connection it reads."""
    watch = ControlWatch()
    try:
        yield watch
    finally:
        await watch.stop()


async def test_the_control_watch_sees_a_cancellation_and_survives_losing_its_watch(nats_url: str) -> None:
    async with jetstream_with_topology(nats_url) as js, _control_watch() as watch:
        kv = await js.key_value(subjects.CONTROL_BUCKET)
        before = uuid.uuid4().hex
        await kv.put(before, b"CANCELLED")  # stopped before the process started
        watch.start(js)
        job = uuid.uuid4().hex
        assert not await watch.stopped(job)  # answered by a read while the watch starts
        await _until(lambda: watch.live)
        assert await watch.stopped(before) and not await watch.stopped(job)

        await kv.put(job, b"CANCELLED")
        await _until(lambda: job in watch._stopped, within=1.0)
        assert await watch.stopped(job)

        # The watch dies under it: reads stand in, then the watch comes back.
        await watch._watcher.stop()
        await _until(lambda: not watch.live, within=1.0)
        assert await watch.stopped(job)  # by a read of the key
        await _until(lambda: watch.live, within=5.0)
        later = uuid.uuid4().hex
        await kv.put(later, b"EXPIRED")
        await _until(lambda: later in watch._stopped, within=1.0)


async def _until(condition: Callable[[], bool], within: float = 5.0) -> None:
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def test_an_existing_durable_gets_the_new_ack_wait_and_keeps_its_position(nats_url: str) -> None:
    from faststream.nats import NatsBroker
    from nats.js.api import ConsumerConfig, DeliverPolicy

    from shared.runtime.stage import StageRunner
    from shared.subjects import Stage

    async with jetstream_with_topology(nats_url) as js:
        durable = subjects.stage_durable(Stage.SYNTHESIZE)
        # A durable left by an older version, with a message already consumed.
        await js.add_consumer(subjects.JOBS_STREAM, config=ConsumerConfig(
            durable_name=durable, filter_subject=subjects.SYNTHESIZE, ack_wait=30, max_deliver=5,
            deliver_policy=DeliverPolicy.ALL, ack_policy="explicit", max_ack_pending=1000))
        await js.publish(subjects.SYNTHESIZE, b"{}", headers={"Nats-Msg-Id": uuid.uuid4().hex})
        sub = await js.pull_subscribe_bind(durable, stream=subjects.JOBS_STREAM)
        (msg,) = await sub.fetch(1, timeout=5)
        await msg.ack_sync()

        runner = StageRunner(NatsBroker(), Stage.SYNTHESIZE, CommonSettings())
        await runner.update_durable(js)
        info = await js.consumer_info(subjects.JOBS_STREAM, durable)
        assert info.config.ack_wait == DEFAULT_ACK_WAIT_S
        assert info.delivered.stream_seq >= 1 and info.num_ack_pending == 0 and info.num_pending == 0
        await runner.update_durable(js)  # nothing to change: no update


async def test_the_control_watch_is_made_again_when_its_consumer_disappears(nats_url: str) -> None:
    from shared.stores.control import WATCH_CHECK_S

    async with jetstream_with_topology(nats_url) as js, _control_watch() as watch:
        watch.start(js)
        await _until(lambda: watch.live)
        first = watch._watcher
        info = await first._sub.consumer_info()
        await js.delete_consumer(info.stream_name, info.name)  # e.g. lost in a server restart
        await _until(lambda: watch._watcher is not first and watch.live, within=WATCH_CHECK_S + 5)
        kv = await js.key_value(subjects.CONTROL_BUCKET)
        job = uuid.uuid4().hex
        await kv.put(job, b"CANCELLED")
        await _until(lambda: job in watch._stopped, within=1.0)
