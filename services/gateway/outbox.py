"""The transactional outbox: what the gateway announces is written in the same
transaction as the state it announces, and a relay publishes it afterwards.

So an answer never contradicts the database (a job stored while NATS is unreachable is
accepted, and announced once NATS is back), and no transition is lost to a crash
between commit and publish: the row stays until its publish is acknowledged, and the
repeated publish carries the same Nats-Msg-Id, which JetStream deduplicates.
"""

from __future__ import annotations

import uuid

import sqlalchemy as sa
from nats.js import JetStreamContext
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from services.gateway.models import OutboxMessage
from shared import subjects
from shared.research.envelope import utcnow
from shared.research.events import JobStatusChanged
from shared.runtime.publishing import MSG_ID

__all__ = ["RELAY_LOCK", "enqueue", "enqueue_status", "relay_once"]

RELAY_LOCK = 7_215_013  # pg_try_advisory_xact_lock key: one relay at a time keeps the order
BATCH = 100


def enqueue(session: AsyncSession, *, subject: str, message: BaseModel, msg_id: str) -> None:
    """Add a message to the session's transaction; it is published after commit."""
    session.add(OutboxMessage(subject=subject, msg_id=msg_id, payload=message.model_dump_json(), created_at=utcnow()))


def enqueue_status(session: AsyncSession, event: JobStatusChanged) -> None:
    """A status event. Its Msg-Id is fixed when the row is written, so every publish
    of this row is the same message; the random part tells this transition from an
    earlier one to the same status (a job resumed after clarification is QUEUED and
    PROCESSING twice)."""
    enqueue(
        session, subject=subjects.event_subject(event.job_id, event.type), message=event,
        msg_id=f"{event.job_id}:status:{event.status.value}:{uuid.uuid4().hex[:12]}",
    )


async def relay_once(sessions: async_sessionmaker[AsyncSession], js: JetStreamContext, *, timeout_s: float = 5.0) -> int:
    """Publish pending messages in the order they were written, deleting each one
    JetStream acknowledged. Only one gateway relays at a time (the others skip the
    pass), so two relays never reorder a job's events. Returns how many were published;
    a failed publish raises, after committing the deletions of those before it."""
    published = 0
    while True:
        async with sessions() as session:
            locked = (await session.exec(sa.select(sa.func.pg_try_advisory_xact_lock(RELAY_LOCK)))).one()  # type: ignore[call-overload]
            if not locked[0]:
                return published
            rows = (await session.exec(select(OutboxMessage).order_by(col(OutboxMessage.id)).limit(BATCH))).all()
            if not rows:
                return published
            done: list[int] = []
            try:
                for row in rows:
                    await js.publish(row.subject, row.payload.encode(), headers={MSG_ID: row.msg_id}, timeout=timeout_s)
                    done.append(row.id)  # type: ignore[arg-type]
            finally:
                if done:
                    await session.exec(sa.delete(OutboxMessage).where(col(OutboxMessage.id).in_(done)))  # type: ignore[call-overload]
                    await session.commit()
                    published += len(done)
            if len(rows) < BATCH:
                return published
