"""The gateway's event path against real nats-server and PostgreSQL: an outcome has a
consumer of its own, so a job's completion is stored while a flood of other jobs'
progress is still pending; progress is coalesced, yet the latest of it is stored.

Gateway processes run alone (no stages): the tests publish the stages' events.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared import subjects
from shared.research.envelope import StageUsage, Usage
from shared.research.events import ProgressEvent, StageEvent, StageState
from shared.runtime.publishing import MSG_ID
from shared.subjects import Stage
from tests.integration.gateways import Gateways, completed_result, publish_completed, submit

FLOOD = 3000


def _gateways(tmp_root: Path, postgres, **env: str) -> Gateways:  # noqa: ANN001
    return Gateways(tmp_root / ("gwe-" + uuid.uuid4().hex[:6]), postgres, env_overrides={"RESEARCH_MAX_CONCURRENCY": "1", **env}).start(1)


@pytest.fixture(scope="module")
def slow_progress(tmp_root: Path, postgres) -> Iterator[Gateways]:  # noqa: ANN001
    # One progress event per transaction: a flood then takes seconds to store, long
    # enough to see whether an outcome waits behind it.
    g = _gateways(tmp_root, postgres, GATEWAY_EVENT_BATCH="1")
    try:
        yield g
    finally:
        g.stop()


@pytest.fixture(scope="module")
def gw(tmp_root: Path, postgres) -> Iterator[Gateways]:  # noqa: ANN001
    g = _gateways(tmp_root, postgres)
    try:
        yield g
    finally:
        g.stop()


def _running_job(g: Gateways) -> str:
    with g.client() as c:
        job_id = submit(c).json()["job_id"]
    g.wait_status(job_id, {"PROCESSING"})
    return job_id


def _usage(input_tokens: int, output_tokens: int, calls: int) -> Usage:
    return Usage(by_stage={"plan": StageUsage(input_tokens=input_tokens, output_tokens=output_tokens, calls=calls)})


def _pending(g: Gateways, durable: str) -> int:
    async def info(js) -> int:  # noqa: ANN001
        ci = await js.consumer_info(subjects.EVENTS_STREAM, durable)
        return ci.num_pending + ci.num_ack_pending

    return g.js(info)


def _wait_drained(g: Gateways, durable: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while _pending(g, durable):
        assert time.monotonic() < deadline, f"{durable} still has events pending\n{g.logs()}"
        time.sleep(0.1)


def test_a_completed_event_is_stored_promptly_while_other_jobs_progress_is_pending(slow_progress: Gateways) -> None:
    g = slow_progress
    job_id = _running_job(g)
    others = [str(uuid.uuid4()) for _ in range(30)]

    async def flood(js) -> None:  # noqa: ANN001
        for i in range(FLOOD):
            other = others[i % len(others)]
            event = ProgressEvent(job_id=other, stage=Stage.RETRIEVE, progress=i / FLOOD, message="searching")
            await js.publish(subjects.event_subject(other, "progress"), event.model_dump_json().encode())

    g.js(flood)
    published = time.monotonic()
    publish_completed(g, job_id, completed_result("Stored ahead of the flood."))
    g.wait_status(job_id, {"COMPLETED", "FAILED"}, timeout=30)
    lag = time.monotonic() - published
    # The flood is still being stored: the outcome did not wait behind it.
    backlog = _pending(g, subjects.GATEWAY_EVENTS_DURABLE)
    assert g.status(job_id) == "COMPLETED"
    assert backlog > FLOOD // 3, f"the progress flood was already stored ({backlog} left): the test proves nothing"
    assert lag < 3.0, f"COMPLETED recorded {lag:.2f}s after its event"
    assert g.sql("SELECT report FROM research_results WHERE job_id = $1", job_id)[0]["report"] == "Stored ahead of the flood."


def test_coalesced_progress_stores_each_jobs_latest_stage_progress_error_and_usage(gw: Gateways) -> None:
    job_id = _running_job(gw)
    events = [
        StageEvent(job_id=job_id, stage=Stage.PLAN, state=StageState.STARTED),
        ProgressEvent(job_id=job_id, stage=Stage.PLAN, progress=0.5, message="planning"),
        StageEvent(job_id=job_id, stage=Stage.PLAN, state=StageState.DONE, usage=_usage(120, 30, 2)),
        StageEvent(job_id=job_id, stage=Stage.RETRIEVE, state=StageState.STARTED, iteration=1),
        ProgressEvent(job_id=job_id, stage=Stage.RETRIEVE, progress=0.5, iteration=1, message="searching"),
        StageEvent(job_id=job_id, stage=Stage.RETRIEVE, state=StageState.RETRYING, iteration=1, delivery=2, error="search timed out"),
        # Out of order: a stale, lower progress or usage must not lower what is stored.
        ProgressEvent(job_id=job_id, stage=Stage.RETRIEVE, progress=0.25, iteration=1, message="searching"),
        StageEvent(job_id=job_id, stage=Stage.PLAN, state=StageState.DONE, iteration=1, usage=_usage(100, 40, 1)),
    ]

    async def publish(js) -> None:  # noqa: ANN001
        for i, event in enumerate(events):
            await js.publish(subjects.event_subject(job_id, event.type), event.model_dump_json().encode(), headers={MSG_ID: f"{job_id}:t{i}"})

    gw.js(publish)
    _wait_drained(gw, subjects.GATEWAY_EVENTS_DURABLE)
    row = gw.sql("SELECT * FROM research_jobs WHERE id = $1", job_id)[0]
    assert row["status"] == "PROCESSING"
    assert row["stage"] == "retrieve"
    assert row["iteration"] == 1
    assert row["progress"] == pytest.approx(0.1 + 0.3 * 0.5)
    assert row["error"] == "retrieve attempt 2 failed: search timed out"
    assert (row["input_tokens"], row["output_tokens"], row["llm_calls"]) == (120, 40, 2)
    # Every event still reached the subjects (what SSE replays), whatever was stored.
    seen = [e for _, e in gw.events(subjects.job_events_filter(job_id)) if e["type"] in ("progress", "stage")]
    assert len(seen) == len(events)
