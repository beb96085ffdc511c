"""Declares the JetStream streams, key-value bucket and object store, idempotently.

Every process calls :func:`ensure_topology` before its consumers start, so the system
comes up in any order. An existing stream is updated to this configuration (stream
configs, unlike consumer configs, can be updated in place).
"""

from __future__ import annotations

import asyncio
import logging
import time

import nats
import nats.errors
from nats.js import JetStreamContext
from nats.js.api import (
    ConsumerConfig,
    DeliverPolicy,
    DiscardPolicy,
    KeyValueConfig,
    ObjectStoreConfig,
    RetentionPolicy,
    StorageType,
    StreamConfig,
)
from nats.js.errors import BadRequestError, BucketNotFoundError, NotFoundError, ServiceUnavailableError

from shared import subjects

log = logging.getLogger(__name__)

MAX_MSG_BYTES = 1024 * 1024
# The dedupe window must cover the time between a publish and its retry after a crash
# (a redelivery after ack_wait); 20 minutes is far above any ack_wait we use.
DUPLICATE_WINDOW_S = 20 * 60
TEXT_RETENTION_S = 30 * 86_400  # archived texts are kept 30 days, so a locator can be checked later


def stream_configs(ttl_s: float, replicas: int = 1) -> list[StreamConfig]:
    common = dict(
        num_replicas=replicas,
        retention=RetentionPolicy.LIMITS,
        storage=StorageType.FILE,
        max_age=ttl_s,
        discard=DiscardPolicy.OLD,
        max_msg_size=MAX_MSG_BYTES,
    )
    return [
        StreamConfig(
            name=subjects.JOBS_STREAM,
            subjects=[subjects.STAGE_WILDCARD],
            duplicate_window=min(DUPLICATE_WINDOW_S, ttl_s),
            **common,
        ),
        StreamConfig(
            name=subjects.EVENTS_STREAM,
            subjects=[subjects.EVENTS_WILDCARD],
            duplicate_window=min(DUPLICATE_WINDOW_S, ttl_s),
            **common,
        ),
        StreamConfig(
            name=subjects.DEADLETTER_STREAM,
            subjects=[subjects.MAX_DELIVERIES_ADVISORY, subjects.EVENTS_MAX_DELIVERIES_ADVISORY, subjects.OUTCOMES_MAX_DELIVERIES_ADVISORY],
            **common,
        ),
    ]


def gateway_event_consumers(max_deliver: int) -> dict[str, tuple[str, ConsumerConfig]]:
    """The gateway's durables: name -> (stream, config). Job events are read by two of
    them, progress and stage events by one and outcomes by the other, so a job's
    completion is stored while a flood of progress from other jobs is still pending."""
    # A margin over the gateway's own limit: it fails the job on its last attempt, so
    # the server's cap is only reached if the process died on every attempt.
    events = dict(ack_wait=30, deliver_policy=DeliverPolicy.ALL, max_deliver=max_deliver + 2)
    advisories = dict(ack_wait=30, deliver_policy=DeliverPolicy.ALL)
    return {
        subjects.GATEWAY_EVENTS_DURABLE: (subjects.EVENTS_STREAM, ConsumerConfig(
            durable_name=subjects.GATEWAY_EVENTS_DURABLE, filter_subjects=subjects.event_kinds_filter(subjects.PROGRESS_KINDS), **events,
        )),
        subjects.GATEWAY_OUTCOMES_DURABLE: (subjects.EVENTS_STREAM, ConsumerConfig(
            durable_name=subjects.GATEWAY_OUTCOMES_DURABLE, filter_subjects=subjects.event_kinds_filter(subjects.OUTCOME_KINDS), **events,
        )),
        subjects.GATEWAY_DEADLETTER_DURABLE: (subjects.DEADLETTER_STREAM, ConsumerConfig(
            durable_name=subjects.GATEWAY_DEADLETTER_DURABLE, filter_subject=subjects.MAX_DELIVERIES_ADVISORY, **advisories,
        )),
        subjects.GATEWAY_EVENTS_DEADLETTER_DURABLE: (subjects.DEADLETTER_STREAM, ConsumerConfig(
            durable_name=subjects.GATEWAY_EVENTS_DEADLETTER_DURABLE,
            filter_subjects=[subjects.EVENTS_MAX_DELIVERIES_ADVISORY, subjects.OUTCOMES_MAX_DELIVERIES_ADVISORY], **advisories,
        )),
    }


async def ensure_gateway_consumer(js: JetStreamContext, durable: str, *, max_deliver: int) -> str:
    """Create one of the gateway's durables unless it exists (an existing one is left
    as it is: a consumer's config changes by a new name); returns its stream."""
    stream, config = gateway_event_consumers(max_deliver)[durable]
    try:
        await js.consumer_info(stream, durable)
    except NotFoundError:
        await js.add_consumer(stream, config=config)
    return stream


async def ensure_gateway_consumers(js: JetStreamContext, *, max_deliver: int) -> None:
    """Every durable of the gateway, and none of earlier versions."""
    for durable in gateway_event_consumers(max_deliver):
        await ensure_gateway_consumer(js, durable, max_deliver=max_deliver)
    for durable in subjects.GATEWAY_RETIRED_DURABLES:
        for stream in (subjects.EVENTS_STREAM, subjects.DEADLETTER_STREAM):
            try:
                await js.delete_consumer(stream, durable)
                log.info("deleted the retired durable %s of %s", durable, stream)
            except NotFoundError:
                pass  # never created, or already gone: nothing to retire


async def ensure_topology(js: JetStreamContext, *, ttl_s: float, replicas: int = 1) -> None:
    for config in stream_configs(ttl_s, replicas):
        try:
            await js.add_stream(config=config)
        except BadRequestError:
            await js.update_stream(config=config)
    await _create_kv(js, KeyValueConfig(bucket=subjects.CONTROL_BUCKET, ttl=ttl_s, storage=StorageType.FILE, replicas=replicas))
    await _ensure_kv(js, KeyValueConfig(bucket=subjects.USAGE_BUCKET, history=1, ttl=ttl_s, storage=StorageType.FILE, replicas=replicas))
    await _create_object_store(js, subjects.TEXT_BUCKET, ttl_s=TEXT_RETENTION_S, replicas=replicas)


async def ensure_digest_storage(js: JetStreamContext, *, retention_s: float, replicas: int = 1) -> None:
    """The digest archive (object store) and the shared digest cache (key-value), both
    kept ``retention_s``. An existing bucket's retention is updated in place: its
    backing stream's ``max_age`` is what expires entries."""
    await _create_object_store(js, subjects.DIGEST_ARCHIVE_BUCKET, ttl_s=retention_s, replicas=replicas)
    await _create_kv(js, KeyValueConfig(
        bucket=subjects.DIGEST_CACHE_BUCKET, ttl=retention_s, storage=StorageType.FILE, replicas=replicas,
    ))
    for stream in (f"OBJ_{subjects.DIGEST_ARCHIVE_BUCKET}", f"KV_{subjects.DIGEST_CACHE_BUCKET}"):
        info = await js.stream_info(stream)
        if info.config.max_age != retention_s:
            info.config.max_age = retention_s
            await js.update_stream(config=info.config)


# JetStream's answers while a cluster elects a leader: wait and declare again.
_ELECTION_ERRORS = (nats.errors.TimeoutError, nats.errors.NoRespondersError, asyncio.TimeoutError, ServiceUnavailableError)
DECLARE_RETRY_S = 60.0  # how long a starting process waits for JetStream before it fails


async def declare(servers: list[str], *, ttl_s: float, replicas: int = 1, retry_for_s: float = DECLARE_RETRY_S) -> None:
    """Connect, declare everything, disconnect: for start-up hooks that run before
    a broker's own connection exists. A process started while JetStream elects a
    leader (its requests time out or find no responder) waits for it, up to
    ``retry_for_s``, instead of exiting at start-up with nobody to restart it."""
    deadline = time.monotonic() + retry_for_s
    delay = 0.5
    while True:
        nc = await nats.connect(servers=servers, connect_timeout=5, max_reconnect_attempts=3)
        try:
            await ensure_topology(nc.jetstream(), ttl_s=ttl_s, replicas=replicas)
            return
        except _ELECTION_ERRORS as exc:
            if time.monotonic() + delay > deadline:
                raise
            log.warning("declaring the topology failed (%s: %s): JetStream may be electing a leader; again in %.1fs",
                        type(exc).__name__, exc, delay)
        finally:
            await nc.drain()
        await asyncio.sleep(delay)
        delay = min(delay * 2, 5.0)


RATELIMIT_IDLE_S = 3_600  # a limiter key nobody touched for an hour is forgotten


async def _create_kv(js: JetStreamContext, config: KeyValueConfig) -> bool:
    """Create a key-value bucket unless it exists (an existing one is left as it is);
    True when it was created."""
    try:
        await js.key_value(config.bucket)
    except BucketNotFoundError:
        await js.create_key_value(config=config)
        return True
    return False


async def _create_object_store(js: JetStreamContext, bucket: str, *, ttl_s: float, replicas: int) -> None:
    """Create an object store unless it exists (an existing one is left as it is)."""
    try:
        await js.object_store(bucket)
    except (NotFoundError, BucketNotFoundError):
        await js.create_object_store(
            bucket=bucket, config=ObjectStoreConfig(ttl=ttl_s, storage=StorageType.FILE, replicas=replicas),
        )


async def _ensure_kv(js: JetStreamContext, config: KeyValueConfig) -> None:
    """Create a key-value bucket, or bring an existing one's TTL to ``config.ttl``
    (a bucket is a stream ``KV_<bucket>`` whose max_age is the TTL)."""
    if await _create_kv(js, config):
        return
    info = await js.stream_info(f"KV_{config.bucket}")
    if config.ttl and info.config.max_age != config.ttl:
        info.config.max_age = config.ttl
        # The server refuses a duplicate window longer than max_age.
        info.config.duplicate_window = min(info.config.duplicate_window or config.ttl, config.ttl)
        await js.update_stream(config=info.config)


async def ensure_retrieval_buckets(js: JetStreamContext, *, cache_ttl_s: float, replicas: int = 1) -> None:
    """The retrieval service's own buckets: the search cache shared by all its processes
    (skipped when ``cache_ttl_s`` is 0: caching is off) and the cross-process rate
    limiters. Called by the retrieval service at start-up; idempotent."""
    await _ensure_kv(js, KeyValueConfig(
        bucket=subjects.RATELIMIT_BUCKET, history=1, ttl=RATELIMIT_IDLE_S, storage=StorageType.FILE, replicas=replicas,
    ))
    if cache_ttl_s > 0:
        await _ensure_kv(js, KeyValueConfig(
            bucket=subjects.SEARCH_CACHE_BUCKET, history=1, ttl=cache_ttl_s, storage=StorageType.FILE, replicas=replicas,
        ))
