"""A stage hop against a real nats-server: every command and event passes the broker's
middlewares, an event published without waiting for its acknowledgement keeps its
place before what the process publishes next, and a command reaches the work
without a detour through a worker thread."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import fast_depends.utils
import nats
import nats.errors
import pytest
from faststream import BaseMiddleware
from faststream.nats import NatsBroker
from nats.js import JetStreamContext
from nats.js.errors import NotFoundError

from shared import subjects

from shared.stores import topology
from shared.research.envelope import JobEnvelope, ResearchRequest, utcnow
from shared.research.events import ProgressEvent, StageEvent, StageState
from shared.runtime.publishing import StagePublisher
from shared.settings import CommonSettings
from shared.runtime.stage import StageContext, StageRunner
from shared.subjects import Stage


class Seen:
    """The subjects published through a broker, as its middlewares see them."""

    def __init__(self) -> None:
        self.subjects: list[str] = []

    def middleware(self) -> type[BaseMiddleware]:
        seen = self

        class Recorder(BaseMiddleware):
            async def publish_scope(self, call_next: Any, cmd: Any) -> Any:
                seen.subjects.append(cmd.destination)
                return await call_next(cmd)

        return Recorder


async def _events(js: Any, job_id: str, settle_s: float = 0.5) -> list[dict[str, Any]]:
    sub = await js.subscribe(subjects.job_events_filter(job_id), stream=subjects.EVENTS_STREAM, ordered_consumer=True)
    out = []
    try:
        while True:
            out.append(json.loads((await sub.next_msg(timeout=settle_s)).data))
    except nats.errors.TimeoutError:
        return out
    finally:
        await sub.unsubscribe()


@contextlib.asynccontextmanager
async def _publishing(nats_url: str) -> AsyncIterator[tuple[JetStreamContext, StagePublisher]]:
    """A JetStream context on a declared topology and a stage publisher beside it."""
    nc = await nats.connect(nats_url)
    broker = NatsBroker(nats_url)
    try:
        js = nc.jetstream()
        await topology.ensure_topology(js, ttl_s=600)
        await broker.connect()
        yield js, StagePublisher(broker)
    finally:
        await broker.stop()
        await nc.close()


async def test_an_event_not_waited_for_is_stored_before_what_is_published_after_it(nats_url: str) -> None:
    async with _publishing(nats_url) as (js, publisher):
        job_id = uuid.uuid4().hex
        for i in range(40):
            started = StageEvent(job_id=job_id, stage=Stage.SCORE, iteration=i, state=StageState.STARTED, delivery=1, worker="w")
            await publisher.event_soon(started, f"{job_id}:score:{i}:stage:started:1")
            progress = ProgressEvent(job_id=job_id, stage=Stage.SCORE, iteration=i, progress=0.5, message="half")
            await publisher.event(progress, f"{job_id}:score:{i}:progress:1")
        await publisher.settle()
        events = await _events(js, job_id)
        assert [(e["type"], e["iteration"]) for e in events] == [(t, i) for i in range(40) for t in ("stage", "progress")]


async def test_an_event_that_cannot_be_stored_is_logged_and_the_caller_goes_on(nats_url: str, caplog: Any) -> None:
    async with _publishing(nats_url) as (js, publisher):
        await js.delete_stream(subjects.EVENTS_STREAM)  # no stream stores the event: no acknowledgement
        try:
            event = StageEvent(job_id=uuid.uuid4().hex, stage=Stage.SCORE, iteration=0, state=StageState.STARTED, delivery=1, worker="w")
            await publisher.event_soon(event, f"{event.job_id}:score:0:stage:started:1")
            await publisher.settle()
            assert [r for r in caplog.records if f"event {event.job_id}:score:0:stage:started:1 not stored" in r.getMessage()]
        finally:
            await topology.ensure_topology(js, ttl_s=600)


async def test_a_stage_hop_passes_the_broker_middlewares_with_every_event(nats_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # A sync dependency (an injected NatsMessage is one) is resolved in a worker thread:
    # a thread hop on every command. The runner takes the message from the context.
    threaded: list[object] = []
    run_in_threadpool = fast_depends.utils.run_in_threadpool

    async def counted(func: Any, *args: Any, **kwargs: Any) -> Any:
        threaded.append(func)
        return await run_in_threadpool(func, *args, **kwargs)

    monkeypatch.setattr(fast_depends.utils, "run_in_threadpool", counted)
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await topology.ensure_topology(js, ttl_s=600)
    with contextlib.suppress(NotFoundError):
        await js.delete_consumer(subjects.JOBS_STREAM, subjects.stage_durable(Stage.DIGEST))
    seen = Seen()
    broker = NatsBroker(nats_url, middlewares=[seen.middleware()])
    runner = StageRunner(broker, Stage.DIGEST, CommonSettings(research_stage_concurrency=1))

    async def digest(envelope: JobEnvelope, ctx: StageContext) -> JobEnvelope:
        await ctx.progress(0.5, "half way", sources=1)
        return envelope.advance(Stage.SCORE)

    runner.work(digest)
    env = JobEnvelope(job_id=uuid.uuid4().hex, user_id="u", stage=Stage.DIGEST, request=ResearchRequest(question="q"),
                      deadline_at=utcnow() + timedelta(minutes=10))
    await broker.start()
    try:
        await js.publish(subjects.DIGEST, env.model_dump_json().encode(), headers={"Nats-Msg-Id": env.msg_id})
        deadline = time.monotonic() + 15
        while not any(s.startswith(subjects.SCORE) for s in seen.subjects) or len(seen.subjects) < 4:
            assert time.monotonic() < deadline, f"the hop did not finish: {seen.subjects}"
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)  # the done event follows the command
        events = await _events(js, env.job_id)
        assert [(e["type"], e.get("state")) for e in events] == [("stage", "started"), ("progress", None), ("stage", "done")]
        stage_events = subjects.event_subject(env.job_id, "stage")
        assert seen.subjects.count(stage_events) == 2
        assert subjects.event_subject(env.job_id, "progress") in seen.subjects
        assert subjects.SCORE in seen.subjects
        assert threaded == []
    finally:
        await broker.stop()
        await nc.close()
