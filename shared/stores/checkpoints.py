"""Checkpoints: the envelope a job carried across its last stage boundary.

Whenever a stage hands a job on, the runner keeps a copy of the envelope it sent
(:func:`save`), so that a job that failed, expired or was cancelled can start again
from the last stage that finished instead of from the beginning, and so that a later,
similar question can start from a finished job's sources and claims. The envelope
holds what the next stage needs and nothing that must be recomputed: the plan, the
queries already run, the sources (with digests), the claims, the usage so far.

One object per job in the ``research_checkpoints`` object store, named by the job id
(so the gateway finds it from the job row alone) and replaced at every boundary; its
description records the stage and iteration it was taken at. Envelopes are bounded
well under NATS's 1 MiB message limit, and the object store chunks them anyway.
Checkpoints are kept as long as the canonical texts their sources point to.
"""

from __future__ import annotations

import asyncio
import json
import logging
import weakref

from nats.js import JetStreamContext
from nats.js.api import ObjectMeta, ObjectStoreConfig, StorageType
from nats.js.errors import BucketNotFoundError, NotFoundError, ObjectNotFoundError
from pydantic import ValidationError

from shared.research.envelope import JobEnvelope
from shared.platform.errors import PermanentError, TransientError
from shared.stores.topology import TEXT_RETENTION_S

__all__ = ["CHECKPOINT_BUCKET", "CHECKPOINT_RETENTION_S", "READ_TIMEOUT_S", "latest", "save"]

log = logging.getLogger(__name__)

CHECKPOINT_BUCKET = "research_checkpoints"
# As long as the texts in the text store: a checkpoint whose sources' texts are gone
# could be resumed but not verified.
CHECKPOINT_RETENTION_S = TEXT_RETENTION_S
READ_TIMEOUT_S = 10.0  # nats-py's object read waits without limit on an expiring object


# The store handle per connection: looking the bucket up is a stream-info round trip,
# which would otherwise sit on every stage-to-stage hop. A failed write forgets it.
_handles: weakref.WeakKeyDictionary[JetStreamContext, object] = weakref.WeakKeyDictionary()


async def _store(js: JetStreamContext, *, create: bool):  # noqa: ANN202 - nats.js.object_store.ObjectStore
    cached = _handles.get(js)
    if cached is not None:
        return cached
    store = await _lookup(js, create=create)
    if store is not None:
        _handles[js] = store
    return store


async def _lookup(js: JetStreamContext, *, create: bool):  # noqa: ANN202 - nats.js.object_store.ObjectStore
    try:
        return await js.object_store(CHECKPOINT_BUCKET)
    except (NotFoundError, BucketNotFoundError):
        if not create:
            return None
    # The first checkpoint anywhere creates the bucket: every stage writes them, and
    # none should depend on another having started first. Creating an existing bucket
    # with the same config is a no-op on the server.
    return await js.create_object_store(
        bucket=CHECKPOINT_BUCKET,
        config=ObjectStoreConfig(ttl=CHECKPOINT_RETENTION_S, storage=StorageType.FILE),
    )


async def save(js: JetStreamContext, envelope: JobEnvelope) -> bool:
    """Keep ``envelope`` as its job's latest checkpoint. True when stored.

    A checkpoint is a means of recovery, not part of the job's progress: a store that
    cannot be written is logged and reported as False, and the job goes on (it could
    then resume only from an earlier checkpoint, or from the start)."""
    position = {"stage": envelope.stage.value, "iteration": envelope.iteration}
    try:
        store = await _store(js, create=True)
        await store.put(envelope.job_id, envelope.model_dump_json().encode(),
                        meta=ObjectMeta(name=envelope.job_id, description=json.dumps(position)))
    except Exception as exc:  # noqa: BLE001 - any failure: logged, the job goes on without this checkpoint
        _handles.pop(js, None)  # the bucket may be gone: look it up again next time
        log.warning("checkpoint of job %s at %s not stored (%s: %s): a resume would start from an earlier one",
                    envelope.job_id, position, type(exc).__name__, exc)
        return False
    return True


async def latest(js: JetStreamContext, job_id: str, *, timeout_s: float = READ_TIMEOUT_S) -> JobEnvelope | None:
    """The job's latest checkpoint; None when it has none (it never crossed a stage
    boundary, or the checkpoint aged out). A read that times out is transient; a stored
    checkpoint that is not an envelope is permanent."""
    store = await _store(js, create=False)
    if store is None:
        return None
    try:
        result = await asyncio.wait_for(store.get(job_id), timeout_s)
    except (ObjectNotFoundError, NotFoundError):
        return None
    except TimeoutError as exc:
        raise TransientError(f"checkpoint of job {job_id}: read timed out") from exc
    try:
        envelope = JobEnvelope.model_validate_json(result.data or b"")
    except ValidationError as exc:
        raise PermanentError(f"checkpoint of job {job_id} is not a readable envelope: {exc.errors()[0]['msg']}") from exc
    if envelope.job_id != job_id:
        raise PermanentError(f"checkpoint stored under job {job_id} belongs to job {envelope.job_id}")
    return envelope
