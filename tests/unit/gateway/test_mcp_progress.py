"""The MCP tool's progress bar and the corpora listing it reads, without a system."""

from __future__ import annotations

import pytest

from services.gateway.mcp import loopback_url, overall_progress
from services.gateway.mcp_backend import _corpora_of
from shared.platform.errors import PermanentError


def _progress(stage: str, iteration: int, within: float) -> dict:
    return {"type": "progress", "stage": stage, "iteration": iteration, "progress": within, "message": "working"}


def test_progress_moves_forward_through_stages_and_iterations() -> None:
    events = [
        {"type": "stage", "stage": "plan", "iteration": 0, "state": "started"},
        _progress("retrieve", 0, 0.5),
        {"type": "stage", "stage": "score", "iteration": 0, "state": "done"},
        _progress("plan", 1, 0.0),
        _progress("digest", 1, 1.0),
        _progress("synthesize", 1, 0.0),
        _progress("synthesize", 1, 1.0),
    ]
    values = [overall_progress(e, max_iterations=2)[0] for e in events]  # type: ignore[index]
    assert values == sorted(values) and values[0] == 0.0 and values[-1] == 1.0
    assert values[2] == pytest.approx(0.45)  # one of two passes done: half the loop's share
    fraction, message = overall_progress(_progress("retrieve", 0, 0.5), max_iterations=2)  # type: ignore[misc]
    assert message == "iteration 1/2 · retrieve: working"


def test_events_without_progress_and_unknown_stages_are_not_shown() -> None:
    assert overall_progress({"type": "status", "status": "PROCESSING"}, 3) is None
    assert overall_progress({"type": "progress", "stage": "brew", "progress": 0.5}, 3) is None


def test_corpora_listing_shapes() -> None:
    assert [c.name for c in _corpora_of(["a", "b"])] == ["a", "b"]
    listed = _corpora_of({"corpora": [{"name": "notes", "documents": 3}]})
    assert listed[0].name == "notes" and listed[0].model_dump()["documents"] == 3
    assert _corpora_of({"items": []}) == []
    with pytest.raises(PermanentError, match="not a list"):
        _corpora_of({"corpora": "notes"})


def test_the_gateway_reaches_itself_on_loopback_when_it_listens_everywhere() -> None:
    assert loopback_url("0.0.0.0", 8080) == "http://127.0.0.1:8080"
    assert loopback_url("127.0.0.1", 9000) == "http://127.0.0.1:9000"
    assert loopback_url("::1", 9000) == "http://[::1]:9000"
