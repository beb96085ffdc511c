"""Keeping a command alive while its work runs: ``in_progress`` heartbeats.

JetStream redelivers a message that is not acked within ``ack_wait``. A stage's work
may run longer than that, so while it runs the message is told ``in_progress`` every
quarter of ``ack_wait``; a process that dies stops beating, and another process takes
the message over after at most ``ack_wait``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Protocol

__all__ = ["HEARTBEATS_PER_ACK_WAIT", "heartbeat"]

log = logging.getLogger(__name__)

HEARTBEATS_PER_ACK_WAIT = 4


class InProgress(Protocol):
    async def in_progress(self) -> None: ...


async def heartbeat(msg: InProgress, ack_wait: float) -> None:
    """``in_progress`` every quarter of ack_wait, until cancelled. A heartbeat that
    cannot be sent, or that comes late because the event loop was blocked, is logged:
    either may let JetStream hand the message to another process while this one still
    works."""
    interval = ack_wait / HEARTBEATS_PER_ACK_WAIT
    last = time.monotonic()
    while True:
        await asyncio.sleep(interval)
        now = time.monotonic()
        if now - last > ack_wait / 2:
            log.warning("heartbeat %.1fs late (event loop blocked?); ack_wait is %.1fs", now - last - interval, ack_wait)
        last = now
        try:
            await msg.in_progress()
        except Exception as exc:  # noqa: BLE001 - keep beating: the next one may get through
            log.warning("heartbeat not sent (%s: %s): the command may be redelivered after %.1fs",
                        type(exc).__name__, exc, ack_wait)
