"""A job's events as server-sent events: replayed from the events stream, then live,
resumable from ``Last-Event-ID`` (every event carries its stream sequence as ``id:``)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator
from typing import Annotated, Any

import nats.errors
from fastapi import APIRouter, Depends, Header, HTTPException
from fastapi.responses import StreamingResponse
from nats.js.api import ConsumerConfig, DeliverPolicy

from services.gateway import db, jobs
from services.gateway.api import Life, User, _owned_job, _valid_ids
from services.gateway.lifecycle import Lifecycle
from shared import subjects
from shared.research.events import parse_event

SSE_KEEPALIVE_S = 15.0
SSE_RETRY_MS = 5000  # the reconnect delay an `error` event advises

router = APIRouter(dependencies=[Depends(_valid_ids)])


@router.get(
    "/api/research/jobs/{job_id}/events", tags=["jobs"], response_class=StreamingResponse,
    responses={200: {"description": "Server-sent events, one JSON job event per `data:` line", "content": {"text/event-stream": {"schema": {"type": "string"}}}}},
)
async def job_events(
    job_id: str, user: User, life: Life,
    last_event_id: Annotated[str | None, Header(
        alias="Last-Event-ID", max_length=20,
        description="The `id:` of the last event received: a reconnecting client gets only the events after it",
    )] = None,
) -> StreamingResponse:
    """Server-sent events: the job's events from the start (or after `Last-Event-ID`),
    then live; each carries its stream sequence as `id:`. The stream closes after the
    terminal status event (COMPLETED, FAILED, CANCELLED, EXPIRED), or, when NATS or
    PostgreSQL becomes unavailable, after an `error` event (`message`, and `retry`:
    milliseconds to wait before reconnecting with `Last-Event-ID`)."""
    await _owned_job(life, job_id, user)
    # Every id this endpoint sends is the event's sequence in the events stream, so
    # resuming is "deliver from the next sequence" (the filter keeps it to this job).
    config = ConsumerConfig(deliver_policy=DeliverPolicy.ALL)
    if last_event_id is not None:
        if not re.fullmatch(r"[0-9]{1,19}", last_event_id):
            raise HTTPException(422, [{"loc": ["header", "Last-Event-ID"], "msg": f"Last-Event-ID {last_event_id!r} is not an event id this stream sent (a sequence number)", "type": "value_error"}])
        config = ConsumerConfig(deliver_policy=DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=int(last_event_id) + 1)
    # Subscribed before answering: with NATS unreachable the client gets a 503 at once
    # (not after a request's timeout), not a 200 whose stream breaks.
    unreachable = HTTPException(503, "NATS is unreachable: the job's events cannot be read now; reconnect with "
                                "Last-Event-ID after Retry-After", headers={"Retry-After": str(SSE_RETRY_MS // 1000)})
    if not _nats_connected(life):
        raise unreachable
    try:
        sub = await life.js.subscribe(
            subjects.job_events_filter(job_id), stream=subjects.EVENTS_STREAM, ordered_consumer=True, config=config,
        )
    except nats.errors.Error as exc:
        raise unreachable from exc
    return StreamingResponse(_event_stream(life, job_id, sub), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})


async def _event_stream(life: Lifecycle, job_id: str, sub: Any) -> AsyncIterator[bytes]:
    idle = 0.0
    try:
        while True:
            try:
                msg = await sub.next_msg(timeout=1.0)
            except nats.errors.TimeoutError:
                idle += 1.0
                # A lost NATS connection shows only as silence here: say so, rather
                # than send keep-alives over a stream that will not carry events.
                if not _nats_connected(life):
                    yield _outage(job_id, "NATS is unreachable: the job's events cannot be read now")
                    return
                # Events may have aged out of the stream; the database still knows.
                try:
                    async with life.sessions() as session:
                        job = await jobs.get_job(session, job_id=job_id)
                except Exception as exc:
                    if not db.is_unavailable(exc):
                        raise
                    yield _outage(job_id, f"PostgreSQL is unavailable ({type(exc).__name__}): the job's state cannot be read now")
                    return
                if job is None or jobs.is_terminal(job.status):
                    status = job.status.value if job else "EXPIRED"
                    yield _sse("status", {"type": "status", "job_id": job_id, "status": status, "reason": job.error if job else None})
                    return
                if idle >= SSE_KEEPALIVE_S:
                    idle = 0.0
                    yield b": keep-alive\n\n"
                continue
            except nats.errors.Error as exc:  # the connection closed, the subscription broke
                yield _outage(job_id, f"NATS is unreachable ({type(exc).__name__}): the job's events cannot be read now")
                return
            idle = 0.0
            event = parse_event(msg.data)
            seq = msg.metadata.sequence.stream if msg.metadata else None
            yield _sse(event.type, event.model_dump(mode="json"), seq)
            # Close on the gateway's terminal status event, which is emitted only after
            # the outcome is persisted: a client that then reads the result finds it.
            if event.type == "status" and event.status.terminal:
                return
    finally:
        # With NATS gone the unsubscribe cannot reach it; the server drops the
        # ordered consumer by itself (it is ephemeral).
        with contextlib.suppress(Exception):
            await asyncio.wait_for(sub.unsubscribe(), 2.0)


def _nats_connected(life: Lifecycle) -> bool:
    nc = getattr(life.js, "_nc", None)
    return nc is None or bool(nc.is_connected)


def _outage(job_id: str, message: str) -> bytes:
    """The last event of a stream that a NATS or PostgreSQL outage ends: a message and
    when to reconnect (``retry``, in milliseconds, also as SSE's own ``retry:`` field).
    It carries no ``id:``, so a client resuming with Last-Event-ID misses nothing."""
    data = {"type": "error", "job_id": job_id, "message": message, "retry": SSE_RETRY_MS}
    return f"retry: {SSE_RETRY_MS}\n".encode() + _sse("error", data)


def _sse(kind: str, data: dict[str, Any], seq: int | None = None) -> bytes:
    lines = [f"event: {kind}"]
    if seq is not None:
        lines.append(f"id: {seq}")
    lines.append("data: " + json.dumps(data, separators=(",", ":")))
    return ("\n".join(lines) + "\n\n").encode()


__all__ = ["SSE_KEEPALIVE_S", "SSE_RETRY_MS", "job_events", "router"]
