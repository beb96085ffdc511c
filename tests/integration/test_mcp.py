"""The deep_research tool over MCP, driven by the SDK's own client against a running
system: stdio (``deepresearch mcp``) and streamable HTTP at the gateway's /mcp."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.integration.conftest import KEYS, running_system
from tests.integration.harness import System

pytestmark = pytest.mark.integration

QUESTION = "How did automation change lighthouse keeping?"


@pytest.fixture(scope="module")
def system(tmp_root: Path, postgres) -> Iterator[System]:  # noqa: ANN001
    # Scoring waits a little each pass, so that a call can be cancelled mid-job.
    with running_system(tmp_root, postgres, env_overrides={"RESEARCH_API_KEYS": KEYS, "RESEARCH_CHAOS": "score:delay=2"}) as s:
        yield s


@asynccontextmanager
async def stdio_session(system: System, key: str) -> AsyncIterator[ClientSession]:
    env = {**os.environ, "RESEARCH_GATEWAY_URL": system.url, "RESEARCH_API_KEY": key}
    params = StdioServerParameters(command=sys.executable, args=["-m", "services.cli", "mcp"], env=env, cwd=str(Path.cwd()))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def http_session(system: System, key: str) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=httpx2.Timeout(30, read=300)) as client,
        streamable_http_client(f"{system.url}/mcp", http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def _research(session: ClientSession) -> tuple[dict[str, Any], list[tuple[float, float | None, str | None]]]:
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    result = await session.call_tool("deep_research", {"question": QUESTION, "max_iterations": 1}, progress_callback=on_progress)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content, progress


def _check_output(output: dict[str, Any], progress: list[tuple[float, float | None, str | None]]) -> None:
    assert set(output) >= {"trace_id", "answer", "sources", "checklist_coverage", "iterations_used", "status"}
    assert output["status"] in ("completed", "max_iterations_reached"), output
    assert output["sources"] and all(s["url"].startswith("corpus://") for s in output["sources"])
    assert "[1]" in output["answer"]
    values = [p[0] for p in progress]
    assert len(progress) >= 5 and values == sorted(values) and values[-1] == 1.0, progress
    assert any("retrieve" in (m or "") for _, _, m in progress), progress


async def test_stdio_lists_the_tool_and_researches_as_the_keys_user(system: System) -> None:
    async with stdio_session(system, "key-alice") as session:
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) >= {"deep_research", "list_corpora"}
        tool = tools["deep_research"]
        assert set(tool.input_schema["properties"]) == {"question", "context", "max_iterations", "report_depth", "trace_id",
                                                           "review_plan"}
        assert tool.input_schema["properties"]["report_depth"]["enum"] == ["brief", "standard", "detailed"]
        assert tool.input_schema["required"] == ["question"]
        assert {"trace_id", "answer", "sources", "checklist_coverage", "iterations_used", "status"} <= set(tool.output_schema["properties"])
        assert "minutes" in (tool.description or "")
        output, progress = await _research(session)
    _check_output(output, progress)
    # Submitted with the key's user: alice owns the job, bob cannot see it.
    assert system.job(output["trace_id"], key="key-alice")["status"] == "COMPLETED"
    with system.client("key-bob") as c:
        assert c.get(f"/api/research/jobs/{output['trace_id']}").status_code == 404


async def test_http_transport_researches_behind_the_bearer_keys(system: System) -> None:
    async with http_session(system, "key-bob") as session:
        assert "deep_research" in {t.name for t in (await session.list_tools()).tools}
        corpora = await session.call_tool("list_corpora", {})
        assert not corpora.is_error, corpora.content
        assert [c["name"] for c in corpora.structured_content["corpora"]] == ["testdocs"]  # type: ignore[index]
        output, progress = await _research(session)
    _check_output(output, progress)
    assert system.job(output["trace_id"], key="key-bob")["status"] == "COMPLETED"


def test_http_transport_refuses_a_request_without_a_valid_key(system: System) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    headers = {"Accept": "application/json, text/event-stream"}
    for auth in ({}, {"Authorization": "Bearer not-a-key"}, {"Authorization": "Basic a2V5LWFsaWNl"}):
        r = httpx.post(f"{system.url}/mcp", json=init, headers=headers | auth, timeout=10)
        assert r.status_code == 401, r.text
        assert "API key" in r.json()["message"] and r.headers["WWW-Authenticate"] == "Bearer"


async def test_a_tool_error_names_the_problem(system: System) -> None:
    async with http_session(system, "key-carol") as session:
        result = await session.call_tool("deep_research", {"question": "x" * 5000, "max_iterations": 1})
    assert result.is_error
    assert "longer than" in result.content[0].text  # the gateway's 422, passed on


@pytest.mark.parametrize("transport", ["http", "stdio"])
async def test_cancelling_the_call_cancels_the_job(system: System, transport: str) -> None:
    key = "key-carol"
    opened = http_session if transport == "http" else stdio_session
    async with opened(system, key) as session:
        seen = anyio.Event()
        messages: list[str] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            messages.append(message or "")
            if "retrieve" in (message or ""):
                seen.set()

        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: session.call_tool("deep_research", {"question": QUESTION, "max_iterations": 3}, progress_callback=on_progress))
            with anyio.fail_after(60):
                await seen.wait()
            tg.cancel_scope.cancel()
        job_id = messages[0].split()[2]  # "research job <id> submitted"
        with anyio.fail_after(30):
            while (job := system.job(job_id, key=key))["status"] not in ("CANCELLED", "COMPLETED", "FAILED"):
                await anyio.sleep(0.2)
    assert job["status"] == "CANCELLED", job
