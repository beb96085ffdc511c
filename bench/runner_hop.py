"""The stage runner's own hop: what a stage-to-stage hop costs with no work, no
gateway and no PostgreSQL competing for the CPU.

Starts a nats-server of its own and one process per stage (plan, retrieve, digest,
score), each a real :class:`shared.runtime.stage.StageRunner` with the stage services'
broker middleware and a work function that hands the envelope straight on. It then
sends ``--jobs`` plan commands one after another (each waits for its synthesize
command) and prints the JetStream floor, the mean hop (a command stored by JetStream
to the next stage's ``started`` event, read from the streams as ``--event-path``
does) and its ratio to the floor. Set against ``bench/pipeline.py --event-path``, the
difference is what the rest of the system adds to a hop.

    python bench/runner_hop.py [--jobs 40]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import subprocess
import sys
import tempfile
import uuid
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.event_path import event_path_timings, jetstream_floor, print_hops  # noqa: E402
from shared.research.envelope import JobEnvelope, ResearchRequest, utcnow  # noqa: E402
from shared.subjects import Stage  # noqa: E402

CHAIN = {Stage.PLAN: Stage.RETRIEVE, Stage.RETRIEVE: Stage.DIGEST, Stage.DIGEST: Stage.SCORE, Stage.SCORE: Stage.SYNTHESIZE}
START_S = 4.0  # for the stage processes to subscribe


async def serve(nats_url: str, stage: Stage) -> None:
    """One stage process: the runner with a work function that does nothing."""
    from faststream.nats import NatsBroker
    from faststream.nats.prometheus import NatsPrometheusMiddleware

    from shared.platform import metrics
    from shared.settings import CommonSettings
    from shared.runtime.stage import StageContext, StageRunner

    # As the stage services build theirs (shared.runtime.app.stage_app): FastStream's
    # per-message log lines at DEBUG, below the level that is written.
    broker = NatsBroker(nats_url, log_level=logging.DEBUG, middlewares=[NatsPrometheusMiddleware(registry=metrics.REGISTRY, app_name=stage.value)])
    runner = StageRunner(broker, stage, CommonSettings())

    async def hand_on(envelope: JobEnvelope, ctx: StageContext) -> JobEnvelope:
        return envelope.advance(CHAIN[envelope.stage])

    runner.work(hand_on)
    await broker.start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await broker.stop()


async def measure(nats_url: str, jobs: int) -> tuple[list[float], set[str]]:
    """The floor, then ``jobs`` jobs through the four stages one at a time."""
    import nats

    from shared import subjects

    floor = await jetstream_floor(nats_url)
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        done = await js.pull_subscribe(subjects.SYNTHESIZE, durable=f"bench-{uuid.uuid4().hex[:8]}", stream=subjects.JOBS_STREAM)
        job_ids = set()
        for _ in range(jobs):
            env = JobEnvelope(job_id=uuid.uuid4().hex, user_id="bench", stage=Stage.PLAN, request=ResearchRequest(question="q"),
                              deadline_at=utcnow() + timedelta(minutes=10))
            await js.publish(subjects.PLAN, env.model_dump_json().encode(), headers={"Nats-Msg-Id": env.msg_id})
            (msg,) = await done.fetch(1, timeout=30)
            await msg.ack()
            job_ids.add(env.job_id)
        return floor, job_ids
    finally:
        await nc.close()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=int, default=40, help="jobs sent through the stages, one at a time (default 40)")
    p.add_argument("--serve", metavar="NATS_URL STAGE", nargs=2, help=argparse.SUPPRESS)  # a stage process
    args = p.parse_args()
    if args.serve:
        asyncio.run(serve(args.serve[0], Stage(args.serve[1])))
        return 0

    import nats

    from shared.stores import topology
    from shared.platform.servers import NatsServer

    async def declare(url: str) -> None:
        nc = await nats.connect(url)
        await topology.ensure_topology(nc.jetstream(), ttl_s=600)
        await nc.close()

    with tempfile.TemporaryDirectory(prefix="bench-runner-hop-") as tmp:
        server = NatsServer(Path(tmp) / "nats").start()
        procs = []
        try:
            asyncio.run(declare(server.url))
            procs = [subprocess.Popen([sys.executable, __file__, "--serve", server.url, stage.value],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for stage in CHAIN]
            asyncio.run(asyncio.sleep(START_S))
            floor, job_ids = asyncio.run(measure(server.url, args.jobs))
            hops, _ = asyncio.run(event_path_timings(server.url, job_ids))
        finally:
            for proc in procs:
                proc.send_signal(signal.SIGTERM)
            for proc in procs:
                try:
                    proc.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    print(f"stage process {proc.pid} did not stop: killed", file=sys.stderr)
                    proc.kill()
            server.stop()
    print_hops(floor, hops, f"the stage runner alone (no-op work, one process per stage, {args.jobs} jobs one at a time)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
