"""Per-provider limits: calls in flight to one server (``OPENAI_MAX_CONCURRENCY``) hold
across every engine of the process that calls it (the default model and a role's),
and a provider's own time limit (``OPENAI_TIMEOUT_S``) replaces ``LLM_TIMEOUT_S``.
Against the loopback OpenAI-compatible fake, answering slowly as a local server does."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from shared.llm.engine import make_engine
from shared.llm.providers import LLMUnavailable
from shared.research.envelope import Usage
from shared.settings import StageSettings
from tests.fakes.llm import Delay
from tests.fakes.openai import OpenAIFake


class Note(BaseModel):
    """Record one note."""

    text: str


def _settings(fake: OpenAIFake, **env: str) -> StageSettings:
    return StageSettings(**{k.lower(): v for k, v in {
        **fake.env(), "OPENAI_MODEL": "qwen3:8b", "LLM_MAX_RETRIES": "0", "LLM_TIMEOUT_S": "5",
        "LLM_CONTEXT_TOKENS": "8192", **env}.items()})


async def _ask(llm: Any) -> Note:
    return await llm.structured(Note, system="You write notes.", prompt="Write a note on lighthouses.",
                                tool_name="record_note", offline=lambda: Note(text="offline"), max_tokens=256)


async def _four_calls(fake: OpenAIFake, **env: str) -> list[float]:
    """Four calls at once through two engines, each answered after 0.3 s: the gaps
    between the server's arrivals, in order."""
    settings = _settings(fake, LLM_MODEL_DIGEST="openai:qwen3:8b", **env)
    default, role = make_engine(settings), make_engine(settings, "digest")
    assert default is not role and default.provider is not role.provider
    fake.script(*(Delay(0.3) for _ in range(4)))
    notes = await asyncio.gather(*(_ask(e.bind("digest", Usage())) for e in (default, role, default, role)))
    assert all(n.text != "offline" for n in notes)
    arrived = sorted(r.received_at for r in fake.delivered)
    return [b - a for a, b in zip(arrived, arrived[1:])]


async def test_one_call_at_a_time_to_a_local_server_across_engines() -> None:
    # One at a time: each call reaches the server only after the one before was answered
    # (a loaded machine only widens the gaps).
    with OpenAIFake() as fake:
        assert min(await _four_calls(fake, OPENAI_MAX_CONCURRENCY="1")) >= 0.29
    with OpenAIFake() as fake:  # without it, only LLM_MAX_CONCURRENCY per engine: calls overlap
        assert min(await _four_calls(fake)) < 0.29


async def test_the_providers_own_time_limit_replaces_the_layers() -> None:
    with OpenAIFake() as fake:
        slow = make_engine(_settings(fake, OPENAI_TIMEOUT_S="0.2"))
        fake.script(Delay(1.0))
        with pytest.raises(LLMUnavailable, match="OPENAI_TIMEOUT_S"):
            await _ask(slow.bind("digest", Usage(), degrade=False))
        patient = make_engine(_settings(fake, LLM_TIMEOUT_S="0.2", OPENAI_TIMEOUT_S="5"))
        fake.script(Delay(0.5))
        assert (await _ask(patient.bind("digest", Usage()))).text != "offline"


def test_claude_has_its_own_limits_too() -> None:
    settings = StageSettings(llm_provider="anthropic", anthropic_api_key="sk-test", llm_timeout_s=60,
                             anthropic_timeout_s=120, anthropic_max_concurrency=4)
    provider = make_engine(settings).provider
    assert provider.max_in_flight == 4 and provider._client.timeout == 120


async def test_a_providers_own_window_wins_over_the_layers() -> None:
    with OpenAIFake() as fake:
        settings = _settings(fake, LLM_MODEL_WRITE="anthropic:claude-x", ANTHROPIC_API_KEY="sk-test",
                             OPENAI_CONTEXT_TOKENS="4096")
        assert await make_engine(settings).window.tokens() == 4096  # the local default model
        assert await make_engine(settings, "write").window.tokens() == 8192  # Claude: LLM_CONTEXT_TOKENS
        claude = StageSettings(llm_provider="anthropic", anthropic_api_key="sk-test")
        assert await make_engine(claude).window.tokens() == 200_000
