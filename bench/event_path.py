"""The event path's figures: the JetStream floor (a publish to a pull already waiting on
the same server), the mean stage-to-stage hop and its ratio to the floor, and the
completion lag (a job's completed event stored by JetStream to COMPLETED in
PostgreSQL) with one and with three jobs in flight.

Run through ``python bench/pipeline.py --event-path --jobs 6``: it starts a system of
its own (offline engine, sample corpus) and reads the times from the streams
themselves (server timestamps of commands and events, and the events' own ``at``), so
the HTTP client's scheduling does not enter the figures.
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
import time
from dataclasses import dataclass

import httpx

from bench.jobs import (
    SAMPLE_CORPUS_NAME,
    JobRun,
    fmt,
    follow,
    headers,
    job_runs,
    percentile,
    sample_system_folder,
    submit,
    table,
    timestamp,
)

__all__ = ["Hop", "event_path_figures", "event_path_timings", "jetstream_floor", "print_hops"]


FLOOR_STREAM = "BENCH_FLOOR"
FLOOR_SUBJECT = "bench.floor"
FLOOR_SAMPLES = 200
LAG_LEVELS = (1, 3)  # jobs in flight while the completion lag is measured


async def jetstream_floor(nats_url: str, samples: int = FLOOR_SAMPLES) -> list[float]:
    """Seconds from a JetStream publish to its delivery to a pull that is already
    waiting, on the same server and with the stages' storage (file): the least one
    stage-to-stage hop can cost. A stream of its own, deleted afterwards."""
    import nats
    from nats.js.api import StorageType, StreamConfig

    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await js.add_stream(config=StreamConfig(name=FLOOR_STREAM, subjects=[FLOOR_SUBJECT], storage=StorageType.FILE))
    try:
        sub = await js.pull_subscribe(FLOOR_SUBJECT, durable="bench-floor", stream=FLOOR_STREAM)

        async def delivered() -> float:
            msgs = await sub.fetch(1, timeout=5)
            at = time.perf_counter()
            await msgs[0].ack()
            return at

        out = []
        for _ in range(samples):
            pull = asyncio.create_task(delivered())
            await asyncio.sleep(0.002)  # the pull request is waiting on the server
            sent = time.perf_counter()
            await js.publish(FLOOR_SUBJECT, b"x")
            out.append(await pull - sent)
        return out
    finally:
        await js.delete_stream(FLOOR_STREAM)
        await nc.close()


async def _stream_messages(nats_url: str, stream: str, filter_subject: str, settle_s: float = 1.0) -> list:
    """Every message of a stream (an ordered consumer), until none came for settle_s."""
    import nats
    import nats.errors

    nc = await nats.connect(nats_url)
    try:
        sub = await nc.jetstream().subscribe(filter_subject, stream=stream, ordered_consumer=True)
        out = []
        while True:
            try:
                out.append(await sub.next_msg(timeout=settle_s))
            except nats.errors.TimeoutError:
                return out
    finally:
        await nc.close()


@dataclass
class Hop:
    """One stage-to-stage hop: into which stage, how long, how large the command was."""

    stage: str
    seconds: float
    command_bytes: int


async def event_path_timings(nats_url: str, job_ids: set[str]) -> tuple[list[Hop], list[float]]:
    """From what the streams hold about these jobs: (stage-to-stage hops, completion
    lags in seconds). A hop is a stage command stored by JetStream (its server
    timestamp) to the ``started`` event of the stage that took it; the first plan
    command, published by the gateway, is not a hop between stages. A completion lag
    is the ``completed`` event stored by JetStream to the COMPLETED status event the
    gateway writes in the transaction that records it."""
    from shared import subjects

    commands = await _stream_messages(nats_url, subjects.JOBS_STREAM, subjects.STAGE_WILDCARD)
    events = await _stream_messages(nats_url, subjects.EVENTS_STREAM, subjects.EVENTS_WILDCARD)
    stored: dict[tuple[str, str, int], tuple[float, int]] = {}
    for msg in commands:
        body = json.loads(msg.data)
        key = (body["job_id"], body["stage"], int(body.get("iteration", 0)))
        if body["job_id"] in job_ids and key != (body["job_id"], "plan", 0):
            stored.setdefault(key, (msg.metadata.timestamp.timestamp(), len(msg.data)))
    hops: list[Hop] = []
    completed_at: dict[str, float] = {}
    lags: list[float] = []
    for msg in events:
        event = json.loads(msg.data)
        job_id = event.get("job_id")
        if job_id not in job_ids:
            continue
        if event["type"] == "stage" and event.get("state") == "started" and event.get("delivery", 1) == 1:
            sent = stored.pop((job_id, event["stage"], int(event.get("iteration", 0))), None)
            if sent is not None:
                hops.append(Hop(event["stage"], timestamp(event) - sent[0], sent[1]))
        elif event["type"] == "completed":
            completed_at.setdefault(job_id, msg.metadata.timestamp.timestamp())
        elif event["type"] == "status" and event.get("status") == "COMPLETED" and job_id in completed_at:
            lags.append(timestamp(event) - completed_at.pop(job_id))
    return hops, lags


async def run_in_waves(url: str, runs: list[JobRun], corpora: list[str] | None, in_flight: int, timeout_s: float) -> None:
    """Run the jobs ``in_flight`` at a time: submit that many, follow them to the end."""
    async with httpx.AsyncClient(base_url=url, headers=headers(), timeout=30) as client:
        for start in range(0, len(runs), in_flight):
            wave = runs[start:start + in_flight]
            for run in wave:
                await submit(client, run, corpora)
            await asyncio.wait_for(asyncio.gather(*(follow(client, run) for run in wave if run.job_id)), timeout_s)


def _mean_ms(values: list[float]) -> str:
    return f"{sum(values) / len(values) * 1000:.1f}" if values else "-"


def print_hops(floor: list[float], hops: list[Hop], title: str = "event path (offline engine, one process per service)") -> None:
    """The floor, the mean hop and its ratio, and the hops into each stage (a larger
    command takes longer to validate)."""
    floor_ms = sum(floor) / len(floor) * 1000
    seconds = [h.seconds for h in hops]
    hop_ms = sum(seconds) / len(seconds) * 1000 if seconds else math.nan
    print(title)
    print(f"JetStream floor (publish to a waiting pull): mean {floor_ms:.2f} ms, p50 {percentile(floor, 50) * 1000:.2f} ms "
          f"over {len(floor)} messages")
    print(f"stage-to-stage hop (command stored to the next stage started): mean {hop_ms:.2f} ms "
          f"(p50 {percentile(seconds, 50) * 1000:.2f} ms) over {len(hops)} hops, "
          f"{hop_ms / floor_ms:.1f}x the floor (target: within 3x)")
    rows = []
    for stage in dict.fromkeys(h.stage for h in hops):
        into = [h for h in hops if h.stage == stage]
        rows.append([stage, str(len(into)), _mean_ms([h.seconds for h in into]),
                     fmt(percentile([h.seconds for h in into], 50) * 1000),
                     f"{sum(h.command_bytes for h in into) / len(into) / 1024:.1f}"])
    print("\n".join(table(["hop into", "n", "mean ms", "p50 ms", "command KiB"], rows)))


def event_path_figures(jobs: int, timeout_s: float) -> int:
    """Start a system of its own (offline engine, sample corpus) and print the JetStream
    floor, the mean stage-to-stage hop and its ratio to the floor, and the completion
    lag with 1 and 3 jobs in flight; 0 when every job completed."""
    from services.cli.supervisor import running_system

    levels: dict[int, list[JobRun]] = {}
    with sample_system_folder("deepresearch-bench-events-", {"RESEARCH_MAX_CONCURRENCY": str(max(LAG_LEVELS))}) as data_dir:
        print(f"event path: starting a system, {jobs} jobs at each of {LAG_LEVELS} in flight...", file=sys.stderr, flush=True)
        with running_system(data_dir=data_dir, nats_url=None, database_url=None, quiet=True) as system:
            nats_url = system.env["NATS_URL"]
            floor = asyncio.run(jetstream_floor(nats_url))
            timings = {}
            for level in LAG_LEVELS:
                runs = levels[level] = job_runs(jobs)
                asyncio.run(run_in_waves(system.url, runs, [SAMPLE_CORPUS_NAME], level, timeout_s))
                timings[level] = asyncio.run(event_path_timings(nats_url, {r.job_id for r in runs if r.job_id}))
    print_hops(floor, [h for level in LAG_LEVELS for h in timings[level][0]])
    rows = [[str(level), str(len(timings[level][1])), _mean_ms(timings[level][1]),
             fmt(percentile(timings[level][1], 95) * 1000), fmt(max(timings[level][1], default=math.nan) * 1000)]
            for level in LAG_LEVELS]
    print("completion lag (completed event stored to COMPLETED in PostgreSQL, ms; target: under 100 at 3 in flight)")
    print("\n".join(table(["jobs in flight", "n", "mean", "p95", "max"], rows)))
    return 0 if all(r.status == "COMPLETED" for runs in levels.values() for r in runs) else 1
