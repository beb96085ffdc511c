from __future__ import annotations

import pytest

from shared.subjects import overall_progress
from services.gateway.service import check_bind
from shared.platform.errors import ConfigurationError
from shared.settings import GatewaySettings


def test_no_keys_means_loopback_only() -> None:
    check_bind("127.0.0.1", {})
    check_bind("::1", {})
    check_bind("localhost", {})
    with pytest.raises(ConfigurationError, match="RESEARCH_API_KEYS"):
        check_bind("0.0.0.0", {})
    check_bind("0.0.0.0", {"k": "alice"})


def test_api_keys_parse_and_reject_junk() -> None:
    assert GatewaySettings(research_api_keys="a:alice, b:bob").api_key_map() == {"a": "alice", "b": "bob"}
    assert GatewaySettings(research_api_keys="").api_key_map() == {}
    with pytest.raises(ValueError, match="key:user"):
        GatewaySettings(research_api_keys="just-a-key").api_key_map()


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("postgres://u@h:5/db", "postgresql+asyncpg://u@h:5/db"),
        ("postgresql://u@h/db", "postgresql+asyncpg://u@h/db"),
        ("postgresql+asyncpg://u@h/db", "postgresql+asyncpg://u@h/db"),
    ],
)
def test_database_url_is_normalized_for_asyncpg(given: str, expected: str) -> None:
    assert GatewaySettings(database_url=given).database_url == expected


def test_overall_progress_maps_stages_onto_one_scale() -> None:
    assert overall_progress("plan", 0.0) == 0.0
    assert overall_progress("retrieve", 0.5) == 0.25
    assert overall_progress("synthesize", 1.0) == 1.0
    assert overall_progress("score", 7.0) == 0.8  # clamped within the stage
