"""How a stage process publishes: through the FastStream broker, with deterministic ids.

Everything a stage sends (the next command, the job's closing events, its stage,
progress and failure events) goes through the broker, so the broker's middlewares
(metrics, trace context) see it, with a ``Nats-Msg-Id`` derived from the job, stage,
iteration and attempt, so a publish repeated after a crash is stored once.

Most publishes wait for the stream's acknowledgement: the next command and the
closing events must be stored before the command that produced them is acked. The
``started`` stage event and progress events need not hold up the work, so
:meth:`StagePublisher.event_soon` puts them on the wire at once and waits for their
acknowledgement in the background (a failure is logged). They still reach the stream
before anything published afterwards (the stage's ``done`` event among it):
publishes from one connection are written, and stored, in the order they are made.
"""

from __future__ import annotations

import asyncio
import logging

from faststream.nats import NatsBroker
from nats.js import JetStreamContext
from pydantic import BaseModel

from shared import subjects

__all__ = ["MSG_ID", "StagePublisher", "publish_event", "publish_json", "stream_of"]

log = logging.getLogger(__name__)

MSG_ID = "Nats-Msg-Id"
PUBLISH_TIMEOUT_S = 10.0


def stream_of(subject: str) -> str:
    """The stream that stores a subject: stage commands or job events."""
    return subjects.JOBS_STREAM if subject.startswith(subjects.STAGE_PREFIX) else subjects.EVENTS_STREAM


def _subject(event: BaseModel) -> str:
    return subjects.event_subject(event.job_id, event.type)  # type: ignore[attr-defined]


class StagePublisher:
    """A stage process's publishing, through its broker."""

    def __init__(self, broker: NatsBroker) -> None:
        self.broker = broker
        self._in_flight: set[asyncio.Task[None]] = set()

    async def publish(self, model: BaseModel, subject: str, msg_id: str) -> None:
        """Publish and wait until the stream has stored it."""
        await self.broker.publish(model.model_dump_json().encode(), subject, headers={MSG_ID: msg_id},
                                  stream=stream_of(subject), timeout=PUBLISH_TIMEOUT_S)

    async def event(self, event: BaseModel, msg_id: str) -> None:
        """Publish a job event (its subject names the job and the event type)."""
        await self.publish(event, _subject(event), msg_id)

    async def event_soon(self, event: BaseModel, msg_id: str) -> None:
        """Publish a job event without waiting for the stream's acknowledgement.

        Returns once the event is written to the connection (the publishing task has
        run its first step, and nothing in it waits before the write), so it keeps its
        place among this process's publishes; the acknowledgement is awaited in the
        background, and a failure is logged."""
        task = asyncio.create_task(self._event_logged(event, msg_id), name=f"publish-{msg_id}")
        self._in_flight.add(task)
        task.add_done_callback(self._in_flight.discard)
        await asyncio.sleep(0)  # one turn of the loop: the task's first step, the write

    async def _event_logged(self, event: BaseModel, msg_id: str) -> None:
        try:
            await self.event(event, msg_id)
        except Exception as exc:  # noqa: BLE001 - the work goes on; the event's absence is logged
            log.warning("event %s not stored (%s: %s); the work it announces goes on", msg_id, type(exc).__name__, exc)

    async def settle(self) -> None:
        """Wait for the acknowledgements still outstanding (at shutdown)."""
        if self._in_flight:
            await asyncio.gather(*self._in_flight, return_exceptions=True)


async def publish_json(js: JetStreamContext, subject: str, model: BaseModel, msg_id: str) -> None:
    """Publish straight to JetStream, for code that has no broker (tools, tests)."""
    await js.publish(subject, model.model_dump_json().encode(), headers={MSG_ID: msg_id}, timeout=PUBLISH_TIMEOUT_S)


async def publish_event(js: JetStreamContext, event: BaseModel, msg_id: str) -> None:
    """A job event straight to JetStream (its subject names the job and the event type)."""
    await publish_json(js, _subject(event), event, msg_id)
