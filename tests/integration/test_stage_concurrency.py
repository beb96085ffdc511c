"""Several commands at once in one stage process, against a real nats-server: each
runs exactly once although it outlives the ack wait many times over, and no more run
at once than the process has slots."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections import Counter
from datetime import timedelta

import nats
import pytest
from faststream.nats import NatsBroker
from nats.js.errors import NotFoundError

from shared import subjects

from shared.stores import topology
from shared.research.envelope import JobEnvelope, ResearchRequest, utcnow
from shared.settings import CommonSettings
from shared.runtime.stage import StageContext, StageRunner
from shared.subjects import Stage


class Probe:
    """Counts starts per job and the most jobs running at once."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.starts: Counter[str] = Counter()
        self.running = 0
        self.most = 0

    async def work(self, envelope: JobEnvelope, ctx: StageContext) -> JobEnvelope:
        self.starts[envelope.job_id] += 1
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            await asyncio.sleep(self.seconds)
        finally:
            self.running -= 1
        return envelope.advance(Stage.SYNTHESIZE)


async def _run(nats_url: str, *, concurrency: int, jobs: int, seconds: float, ack_wait: float) -> tuple[Probe, int]:
    """Publish ``jobs`` score commands, serve them in one process and return the probe
    and the durable's redelivery count once every job reached the next stage."""
    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await topology.ensure_topology(js, ttl_s=600)
    # A fresh durable per run: the stage's durable name is fixed.
    with contextlib.suppress(NotFoundError):
        await js.delete_consumer(subjects.JOBS_STREAM, subjects.stage_durable(Stage.SCORE))
    await js.purge_stream(subjects.JOBS_STREAM)
    settings = CommonSettings(research_ack_wait_s=ack_wait, research_stage_concurrency=concurrency,
                              research_max_deliver=5)
    broker = NatsBroker(nats_url, graceful_timeout=ack_wait)
    runner = StageRunner(broker, Stage.SCORE, settings)
    probe = Probe(seconds)
    runner.work(probe.work)
    ids = [uuid.uuid4().hex for _ in range(jobs)]
    for job_id in ids:
        env = JobEnvelope(job_id=job_id, user_id="u", stage=Stage.SCORE, request=ResearchRequest(question="q"),
                          deadline_at=utcnow() + timedelta(minutes=10))
        await js.publish(subjects.SCORE, env.model_dump_json().encode(), headers={"Nats-Msg-Id": env.msg_id})
    done = await js.pull_subscribe(subjects.SYNTHESIZE, durable=f"probe-{uuid.uuid4().hex[:8]}",
                                   stream=subjects.JOBS_STREAM)
    await broker.start()
    try:
        reached: set[str] = set()
        deadline = time.monotonic() + seconds * (jobs / concurrency + 2) + 10
        while len(reached) < jobs:
            assert time.monotonic() < deadline, f"only {len(reached)} of {jobs} jobs reached synthesis"
            try:
                msgs = await done.fetch(jobs, timeout=1)
            except TimeoutError:  # nats-py raises its own subclass or asyncio's: nothing yet
                continue
            for m in msgs:
                reached.add(JobEnvelope.model_validate_json(m.data).job_id)
                await m.ack()
        info = await js.consumer_info(subjects.JOBS_STREAM, subjects.stage_durable(Stage.SCORE))
    finally:
        await broker.stop()
        await runner.control.stop()
        await nc.close()
    assert reached == set(ids)
    return probe, info.num_redelivered


async def test_long_jobs_run_once_each_and_no_more_than_the_slots_at_once(nats_url: str) -> None:
    # Each job outlives the 2 s ack wait more than twice; 9 jobs for 4 slots means
    # five wait their turn. A fetched message waiting for a slot without heartbeats
    # would be redelivered and run a second time.
    probe, redelivered = await _run(nats_url, concurrency=4, jobs=9, seconds=5.0, ack_wait=2.0)
    assert set(probe.starts.values()) == {1}, probe.starts
    assert probe.most == 4
    assert redelivered == 0


async def test_one_slot_runs_one_job_at_a_time(nats_url: str) -> None:
    probe, redelivered = await _run(nats_url, concurrency=1, jobs=3, seconds=0.5, ack_wait=2.0)
    assert set(probe.starts.values()) == {1} and probe.most == 1 and redelivered == 0


@pytest.mark.parametrize("concurrency", [0, 65])
def test_the_setting_is_bounded(concurrency: int) -> None:
    with pytest.raises(ValueError):
        CommonSettings(research_stage_concurrency=concurrency)
