"""Fixtures of the retrieval tests: a real nats-server with the topology and the
retrieval buckets declared."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import nats
import pytest
from nats.js import JetStreamContext

from shared import topology
from shared.servers import NatsServer


@pytest.fixture(scope="module")
def nats_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = NatsServer(Path(tmp_path_factory.mktemp("nats"))).start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
async def js(nats_url: str) -> AsyncIterator[JetStreamContext]:
    nc = await nats.connect(nats_url)
    stream = nc.jetstream()
    await topology.ensure_topology(stream, ttl_s=3_600)
    await topology.ensure_retrieval_buckets(stream, cache_ttl_s=3_600)
    try:
        yield stream
    finally:
        await nc.close()
