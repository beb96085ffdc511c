"""The heartbeat against a real nats-server: while it beats, JetStream does not hand
the message to anyone else although the work outlives the ack wait; once it stops
(the process died), the message is delivered again after the ack wait."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid

import nats
import nats.errors
import pytest
from nats.js.api import ConsumerConfig, StorageType, StreamConfig

from shared.runtime.heartbeat import heartbeat

ACK_WAIT_S = 1.0


async def _nothing_within(sub: object, seconds: float) -> bool:
    try:
        await sub.fetch(1, timeout=seconds)  # type: ignore[attr-defined]
    except (nats.errors.TimeoutError, asyncio.TimeoutError):
        return True
    return False


async def test_a_beating_message_stays_with_its_worker_and_comes_back_once_the_beat_stops(nats_url: str) -> None:
    nc = await nats.connect(nats_url)
    stream = f"HB_{uuid.uuid4().hex[:8]}"
    js = nc.jetstream()
    await js.add_stream(StreamConfig(name=stream, subjects=[f"{stream}.work"], storage=StorageType.MEMORY))
    try:
        await js.publish(f"{stream}.work", b"job")
        sub = await js.pull_subscribe(f"{stream}.work", durable="worker", stream=stream,
                                      config=ConsumerConfig(ack_wait=ACK_WAIT_S, max_deliver=5))
        (msg,) = await sub.fetch(1, timeout=5)
        beat = asyncio.create_task(heartbeat(msg, ACK_WAIT_S))
        # Three ack waits of work: without the beat it would be redelivered twice by now.
        assert await _nothing_within(sub, 3 * ACK_WAIT_S)
        beat.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beat
        t0 = time.monotonic()
        (again,) = await sub.fetch(1, timeout=5 * ACK_WAIT_S)
        assert again.data == b"job" and again.metadata.num_delivered == 2
        assert time.monotonic() - t0 <= 2 * ACK_WAIT_S
        await again.ack()
    finally:
        await js.delete_stream(stream)
        await nc.close()


async def test_a_heartbeat_that_cannot_be_sent_is_logged_and_beating_goes_on(nats_url: str, caplog: pytest.LogCaptureFixture) -> None:
    nc = await nats.connect(nats_url)
    stream = f"HB_{uuid.uuid4().hex[:8]}"
    js = nc.jetstream()
    await js.add_stream(StreamConfig(name=stream, subjects=[f"{stream}.work"], storage=StorageType.MEMORY))
    await js.publish(f"{stream}.work", b"job")
    sub = await js.pull_subscribe(f"{stream}.work", durable="worker", stream=stream,
                                  config=ConsumerConfig(ack_wait=ACK_WAIT_S, max_deliver=5))
    (msg,) = await sub.fetch(1, timeout=5)
    await js.delete_stream(stream)
    await nc.close()  # the connection is gone: every in_progress fails
    beat = asyncio.create_task(heartbeat(msg, ACK_WAIT_S))
    await asyncio.sleep(2.2 * ACK_WAIT_S / 4 + 0.1)  # two beats' time
    assert not beat.done()  # a failed beat does not end the heartbeat
    beat.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await beat
    failures = [r for r in caplog.records if r.getMessage().startswith("heartbeat not sent")]
    assert len(failures) >= 2
