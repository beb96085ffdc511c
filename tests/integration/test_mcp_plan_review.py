"""``deep_research`` with ``review_plan`` over MCP, driven by the SDK's own client
against a running system: a client that supports elicitation is asked, and its edit
(an empty checklist first, refused and asked again with the reason; then an item
removed and one added) is what research follows; a client without elicitation gets the
plan approved as it is and its answer as usual."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

from tests.integration.conftest import KEYS, running_system
from tests.integration.harness import System

pytestmark = pytest.mark.integration

QUESTION = "How did automation change lighthouse keeping?"
ADDED = "What lighthouse keepers did once the lights were automated"


@pytest.fixture(scope="module")
def system(tmp_root: Path, postgres) -> Iterator[System]:  # noqa: ANN001
    with running_system(tmp_root, postgres, env_overrides={"RESEARCH_API_KEYS": KEYS}) as s:
        yield s


@asynccontextmanager
async def session_of(system: System, key: str, **callbacks: Any) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=httpx2.Timeout(30, read=300)) as client,
        streamable_http_client(f"{system.url}/mcp", http_client=client) as (read, write),
        ClientSession(read, write, **callbacks) as session,
    ):
        await session.initialize()
        yield session


async def test_the_tool_asks_the_user_and_research_follows_their_plan(system: System) -> None:
    asked: list[types.ElicitRequestParams] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:  # noqa: ANN401
        asked.append(params)
        shown = params.requested_schema["properties"]
        if len(asked) == 1:  # nothing left to check: refused
            return types.ElicitResult(action="accept", content={
                "refined_question": shown["refined_question"]["default"], "checklist": " ", "steps": shown["steps"]["default"]})
        items = shown["checklist"]["default"].splitlines()
        return types.ElicitResult(action="accept", content={
            "refined_question": shown["refined_question"]["default"],
            "checklist": "\n".join([*items[1:], ADDED]), "steps": shown["steps"]["default"]})

    async with session_of(system, "key-alice", elicitation_callback=elicit) as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert tools["deep_research"].input_schema["properties"]["review_plan"]["default"] is False
        result = await session.call_tool("deep_research", {"question": QUESTION, "max_iterations": 1, "review_plan": True})
    assert not result.is_error, result.content
    output = result.structured_content
    assert output is not None and output["status"] in ("completed", "max_iterations_reached"), output
    assert len(asked) == 2 and "Checklist:" in asked[0].message
    assert "The plan was refused" in asked[1].message and "checklist" in asked[1].message
    covered = " | ".join([*output["checklist_coverage"]["satisfied"], *output["checklist_coverage"]["gaps"]])
    assert ADDED in covered, output["checklist_coverage"]
    job = system.job(output["trace_id"], key="key-alice")
    assert job["review_plan"] is True
    assert {(c["part"], c["action"]) for c in job["plan_changes"]} == {("checklist", "removed"), ("checklist", "added")}


async def test_without_elicitation_the_plan_is_approved_as_it_is(system: System) -> None:
    messages: list[str] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    async with session_of(system, "key-bob") as session:
        result = await session.call_tool("deep_research", {"question": QUESTION, "max_iterations": 1, "review_plan": True},
                                         progress_callback=on_progress)
    assert not result.is_error, result.content
    assert result.structured_content["status"] in ("completed", "max_iterations_reached")  # type: ignore[index]
    assert any("approved as it is" in m for m in messages), messages
    job = system.job(result.structured_content["trace_id"], key="key-bob")  # type: ignore[index]
    assert job["review_plan"] is True and job["plan_changes"] == []
