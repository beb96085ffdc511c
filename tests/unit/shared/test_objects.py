"""The one object-store wrapper (shared.stores.objects) and the two stores built on it,
against a real nats-server."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest
from nats.js import JetStreamContext

from shared.stores import topology
from shared.stores.objects import HashedTexts
from shared.stores.archive import Archive
from shared.platform.errors import PermanentError
from shared.research.text import text_hash
from shared.stores.textstore import TextStore


@pytest.fixture
async def js(js: JetStreamContext) -> JetStreamContext:
    """The shared fixture's context, with the digest archive declared too."""
    await topology.ensure_digest_storage(js, retention_s=3_600)
    return js


@pytest.fixture
async def bucket(js: JetStreamContext) -> AsyncIterator[str]:
    name = f"test-texts-{uuid.uuid4().hex[:8]}"
    await js.create_object_store(name)
    try:
        yield name
    finally:
        await js.delete_object_store(name)


async def test_a_text_is_stored_once_under_its_hash_and_read_back(js: JetStreamContext, bucket: str) -> None:
    texts = HashedTexts(js, bucket)
    text = f"Bees dance to tell where food is. {uuid.uuid4()}"
    key = await texts.put(text, description="pages")
    assert key == text_hash(text) and await texts.has(key)
    assert await texts.put(text, description="ignored: already stored") == key
    assert await texts.read(key) == (text, "pages")


async def test_a_missing_text_or_bucket_is_none(js: JetStreamContext, bucket: str) -> None:
    missing = text_hash(str(uuid.uuid4()))
    assert await HashedTexts(js, bucket).read(missing) is None
    assert not await HashedTexts(js, bucket).has(missing)
    assert await HashedTexts(js, f"absent-{uuid.uuid4().hex[:8]}").read(missing) is None


async def test_an_altered_text_is_refused(js: JetStreamContext, bucket: str) -> None:
    key = text_hash("the original")
    await (await js.object_store(bucket)).put(key, b"something else")
    with pytest.raises(PermanentError, match="does not match its hash"):
        await HashedTexts(js, bucket).read(key)


async def test_the_text_store_refuses_a_missing_text(js: JetStreamContext) -> None:
    store = TextStore(js)
    text = f"a canonical text {uuid.uuid4()}"
    assert await store.get(await store.put(text)) == text
    with pytest.raises(PermanentError, match="missing"):
        await store.get(text_hash(str(uuid.uuid4())))


async def test_the_archive_keeps_a_page_map(js: JetStreamContext) -> None:
    archive = Archive(js)
    text = f"Page one.\n\nPage two. {uuid.uuid4()}"
    key = await archive.put(text, page_starts=[0, 11])
    archived = await archive.get(key)
    assert archived is not None and archived.text == text and archived.page_starts == [0, 11]
    assert await archive.get(text_hash(str(uuid.uuid4()))) is None
