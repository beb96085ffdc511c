"""Fixtures of the retrieval tests: JetStream on the shared real nats-server
(``nats_url`` of tests/conftest.py) with the topology and the retrieval buckets declared."""

from __future__ import annotations

from collections.abc import AsyncIterator

import nats
import pytest
from nats.js import JetStreamContext

from shared import topology


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
