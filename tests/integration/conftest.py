from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import FIXTURE_CORPUS
from tests.integration.harness import System

KEYS = "key-alice:alice,key-bob:bob,key-carol:carol"


@contextlib.contextmanager
def running_system(tmp_root: Path, postgres, **kwargs) -> Iterator[System]:  # noqa: ANN001
    """A started system over the fixture corpus, stopped on exit."""
    s = System(root=tmp_root / uuid.uuid4().hex[:8], postgres=postgres, corpus=FIXTURE_CORPUS, **kwargs).start()
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture(scope="module")
def system(tmp_root: Path, postgres) -> Iterator[System]:  # noqa: ANN001
    """API keys for three users; the default rate limit (10 per 15 minutes)."""
    with running_system(tmp_root, postgres, env_overrides={"RESEARCH_API_KEYS": KEYS}) as s:
        yield s
