"""Checkpoints (shared.stores.checkpoints) against a real nats-server, and the message ids of
a resumed job's envelope."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import nats
import pytest
from nats.js import JetStreamContext

from shared.stores import checkpoints
from shared.research.envelope import JobEnvelope, ResearchRequest, new_job_id, utcnow
from shared.platform.errors import PermanentError
from shared.subjects import Stage


@pytest.fixture
async def js(nats_url: str) -> AsyncIterator[JetStreamContext]:
    nc = await nats.connect(nats_url)
    try:
        yield nc.jetstream()
    finally:
        await nc.close()


def envelope(stage: Stage = Stage.RETRIEVE, **changes: object) -> JobEnvelope:
    return JobEnvelope(job_id=new_job_id(), user_id="alice", stage=stage, request=ResearchRequest(question="Why?"),
                       deadline_at=utcnow() + timedelta(minutes=10), **changes)


async def test_the_latest_checkpoint_replaces_the_one_before(js: JetStreamContext) -> None:
    first = envelope(queries_run=["fresnel lens"])
    assert await checkpoints.latest(js, first.job_id) is None  # none yet (the bucket may not even exist)
    assert await checkpoints.save(js, first)
    later = first.advance(Stage.SYNTHESIZE, queries_run=["fresnel lens", "lighthouse optics"], iteration=1)
    assert await checkpoints.save(js, later)
    got = await checkpoints.latest(js, first.job_id)
    assert got == later
    assert await checkpoints.latest(js, new_job_id()) is None


async def test_a_stored_object_that_is_not_an_envelope_is_a_permanent_error(js: JetStreamContext) -> None:
    job_id = new_job_id()
    assert await checkpoints.save(js, envelope())  # the bucket exists
    store = await js.object_store(checkpoints.CHECKPOINT_BUCKET)
    await store.put(job_id, b'{"not": "an envelope"}')
    with pytest.raises(PermanentError, match="not a readable envelope"):
        await checkpoints.latest(js, job_id)


async def test_a_store_that_cannot_be_written_is_reported_not_raised(js: JetStreamContext, caplog: pytest.LogCaptureFixture) -> None:
    await js._nc.close()  # noqa: SLF001 - a connection gone under the runner
    assert await checkpoints.save(js, envelope()) is False
    assert "not stored" in caplog.text



def test_a_resumed_run_has_message_ids_of_its_own() -> None:
    first = envelope(Stage.SYNTHESIZE, iteration=2)
    resumed = first.model_copy(update={"resumes": 1})
    assert first.msg_id == f"{first.job_id}:synthesize:2"  # unchanged for a job never resumed
    assert resumed.msg_id == f"{first.job_id}:synthesize:2:r1" != first.msg_id
    assert first.outcome_msg_id("failed") == f"{first.job_id}:failed"
    assert resumed.outcome_msg_id("failed") == f"{first.job_id}:failed:r1"
