"""Engine, sessions and migrations for the gateway."""

from __future__ import annotations

import asyncio
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import exc as sa_exc
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine
from sqlmodel.ext.asyncio.session import AsyncSession

ALEMBIC_INI = Path(__file__).with_name("alembic.ini")

# SQLSTATE classes that say "the server could not serve you now", not "this statement
# is wrong": connection exceptions, insufficient resources, operator intervention
# (shutdown, cannot connect now), transaction rollbacks (serialization, deadlock).
_UNAVAILABLE_SQLSTATE_CLASSES = ("08", "53", "57", "40")
_UNAVAILABLE_SQLSTATES = ("55000",)  # e.g. the database does not accept connections


def is_unavailable(exc: BaseException) -> bool:
    """True when ``exc`` says PostgreSQL (or the way to it) is unavailable, so the same
    work may succeed later; False when the work itself is at fault (bad data)."""
    if isinstance(exc, sa_exc.OperationalError | sa_exc.InterfaceError | sa_exc.DisconnectionError | sa_exc.TimeoutError | OSError | TimeoutError):
        return not isinstance(getattr(exc, "orig", None), ValueError)  # asyncpg's DataError is an "interface" error
    if isinstance(exc, sa_exc.DBAPIError):
        if exc.connection_invalidated:
            return True
        state = str(getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None) or "")
        return state[:2] in _UNAVAILABLE_SQLSTATE_CLASSES or state in _UNAVAILABLE_SQLSTATES
    return False


def make_engine(database_url: str, *, pool_size: int = 10) -> AsyncEngine:
    """A pool of a fixed ``pool_size`` connections, each opened once and kept: no
    overflow connections opened under load and closed after, no ping before each use.
    A connection the server dropped fails the unit of work that used it, as an outage
    (``is_unavailable``): the loops retry it, the API answers 503, and SQLAlchemy
    replaces every connection older than the failure."""
    return create_async_engine(database_url, pool_size=pool_size, max_overflow=0, pool_pre_ping=False)


def make_sessions(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, class_=AsyncSession, expire_on_commit=False)


def _upgrade(database_url: str) -> None:
    cfg = Config(str(ALEMBIC_INI))
    cfg.set_main_option("sqlalchemy.url", database_url.replace("%", "%%"))
    command.upgrade(cfg, "head")


async def migrate(database_url: str) -> None:
    """Run Alembic to head. In a thread: env.py runs its own event loop."""
    await asyncio.to_thread(_upgrade, database_url)
