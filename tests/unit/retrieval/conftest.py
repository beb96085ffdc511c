"""Fixtures of the retrieval tests: JetStream on the shared real nats-server
(``nats_url`` of tests/conftest.py) with the topology and the retrieval buckets declared."""

from __future__ import annotations

import pytest
from nats.js import JetStreamContext

from shared.stores import topology


@pytest.fixture
async def js(js: JetStreamContext) -> JetStreamContext:
    """The shared fixture's context, with retrieval's buckets declared too."""
    await topology.ensure_retrieval_buckets(js, cache_ttl_s=3_600)
    return js
