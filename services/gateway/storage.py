"""Full disks, told apart from other outages so the client is told what is wrong.

Two stores can fill up: JetStream's file store (its ``max_file_store``, or the disk
under it: a publish answers "insufficient resources", err_code 10023) and PostgreSQL's
disk (SQLSTATE 53100, asyncpg's DiskFullError). Both are outages that end by
themselves once space is freed: the API answers 503 with Retry-After and a message
naming the full store, and the loops (the outbox relay above all) keep retrying.
"""

from __future__ import annotations

import nats.js.errors

__all__ = ["DISK_FULL_SQLSTATE", "EVENT_STORE_FULL", "JS_FULL_CODES", "disk_full_message", "is_event_store_full", "is_postgres_disk_full"]

JS_FULL_CODES = frozenset({
    10023,  # insufficient resources (max_file_store / max_memory_store reached, or the disk)
    10047,  # insufficient storage resources available (a stream cannot reserve its bytes)
})
DISK_FULL_SQLSTATE = "53100"
_JS_FULL_WORDS = ("insufficient resources", "insufficient storage", "no space left")

EVENT_STORE_FULL = ("the event store (NATS JetStream) is full: nothing was stored; free space (or raise "
                    "max_file_store) and retry: the gateway recovers by itself")
POSTGRES_DISK_FULL = ("PostgreSQL's disk is full (SQLSTATE 53100): nothing was stored; free space and retry: "
                      "the gateway recovers by itself")


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in seen and len(seen) < 8:
        seen.append(cur)
        cur = getattr(cur, "orig", None) or cur.__cause__ or cur.__context__
    return seen


def is_event_store_full(exc: BaseException) -> bool:
    """A JetStream answer that says its store has no room left."""
    for e in _chain(exc):
        if isinstance(e, nats.js.errors.APIError):
            if e.err_code in JS_FULL_CODES:
                return True
            if any(w in (e.description or "").lower() for w in _JS_FULL_WORDS):
                return True
    return False


def is_postgres_disk_full(exc: BaseException) -> bool:
    """PostgreSQL could not write for want of disk (SQLAlchemy wraps asyncpg's error)."""
    for e in _chain(exc):
        state = str(getattr(e, "sqlstate", None) or getattr(e, "pgcode", None) or "")
        if state == DISK_FULL_SQLSTATE or type(e).__name__ == "DiskFullError":
            return True
    return False


def disk_full_message(exc: BaseException) -> str | None:
    """The message for a full store, or None when ``exc`` is not about one."""
    if is_event_store_full(exc):
        return EVENT_STORE_FULL
    if is_postgres_disk_full(exc):
        return POSTGRES_DISK_FULL
    return None
