"""Context windows: the packer, the window each provider gets (``LLM_CONTEXT_TOKENS``,
Claude's, OpenAI's, Ollama's as its server says, a default logged once), the engine
never sending a prompt that leaves no room for the answer, and a server's refusal for
length becoming :class:`LLMContextExceeded`, on which a batch is split and asked again.
Through the real openai SDK against the loopback fake, which refuses (as vLLM does) a
request longer than its window."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from pydantic import BaseModel

from shared.llm.budget import estimate_tokens
from shared.llm.context import (
    OLLAMA_DEFAULT_WINDOW,
    UNKNOWN_WINDOW,
    answer_room,
    chars_in,
    pack,
    prompt_room,
    split_on_overflow,
)
from shared.llm.engine import make_engine
from shared.llm.providers import LLMContextExceeded, LLMError, LLMInvalidOutput
from shared.research.envelope import Usage
from shared.settings import StageSettings
from tests.fakes.openai import OpenAIFake


class Note(BaseModel):
    """Record one note."""

    text: str


def _engine(fake: OpenAIFake, **env: str):  # noqa: ANN202
    settings = StageSettings(**{k.lower(): v for k, v in {
        **fake.env(), "OPENAI_MODEL": "qwen3:8b", "LLM_MAX_RETRIES": "0", "LLM_TIMEOUT_S": "5", **env}.items()})
    return make_engine(settings)


async def _ask(llm: Any, prompt: str, max_tokens: int = 1024) -> Note:
    return await llm.structured(Note, system="You write notes.", prompt=prompt, tool_name="record_note",
                                offline=lambda: Note(text="offline"), max_tokens=max_tokens)


# -- the packer ----------------------------------------------------------------------


def test_answer_room_takes_at_most_half_a_small_window() -> None:
    assert answer_room(200_000, 8192) == 8192
    assert answer_room(4096, 8192) == 2048
    assert answer_room(4096, 1024) == 1024
    assert prompt_room(4096, 8192) == 2048
    assert answer_room(300, 2048) == 256  # never below the floor of a structured answer


def test_chars_in_is_what_the_estimate_counts_as_that_many_tokens() -> None:
    for tokens in (100, 1000, 5000):
        assert estimate_tokens("x" * chars_in(tokens)) - 32 <= tokens


def test_pack_keeps_order_and_fits_every_group() -> None:
    items = [f"item {n} " + "word " * (n * 7 % 40) for n in range(30)]
    render = lambda group: ("fixed system text " * 10, "\n".join(group))  # noqa: E731
    groups = pack(items, render, room=300, most=5)
    assert [i for g in groups for i in g] == items
    assert all(len(g) <= 5 for g in groups)
    assert all(estimate_tokens(*render(g)) <= 300 or len(g) == 1 for g in groups)
    # Greedy: no group could have taken the next group's first item.
    for g, nxt in zip(groups, groups[1:]):
        assert len(g) == 5 or estimate_tokens(*render([*g, nxt[0]])) > 300


def test_an_item_too_big_alone_is_a_group_of_its_own() -> None:
    groups = pack(["a", "b" * 5000, "c"], lambda g: g, room=200)
    assert groups == [["a"], ["b" * 5000], ["c"]]


async def test_split_on_overflow_halves_until_each_part_fits() -> None:
    seen: list[list[int]] = []

    async def run(batch: list[int]) -> int:
        seen.append(batch)
        if len(batch) > 3:
            raise LLMContextExceeded("too long")
        return sum(batch)

    parts = await split_on_overflow(list(range(10)), run)
    assert [b for b, _ in parts] == [[0, 1], [2, 3, 4], [5, 6], [7, 8, 9]]
    assert sum(r for _, r in parts) == 45
    assert seen[0] == list(range(10))


async def test_a_single_item_still_too_long_raises() -> None:
    async def run(batch: list[int]) -> int:
        raise LLMContextExceeded("too long")

    with pytest.raises(LLMContextExceeded):
        await split_on_overflow([1, 2], run)


def test_the_error_is_an_unusable_answer_and_a_permanent_one() -> None:
    # Callers that cannot split fall back to their offline answer as for an unusable
    # answer; code that treats LLMError as permanent does not retry it.
    assert issubclass(LLMContextExceeded, LLMInvalidOutput)
    assert issubclass(LLMContextExceeded, LLMError)


# -- the window of a provider ------------------------------------------------------------


async def test_the_setting_wins_and_no_server_is_asked() -> None:
    with OpenAIFake(show={"parameters": "num_ctx 32768"}) as fake:
        engine = _engine(fake, LLM_CONTEXT_TOKENS="4096")
        assert await engine.window.tokens() == 4096
        assert fake.show_requests == 0


async def test_ollama_is_asked_once_for_the_num_ctx_its_modelfile_sets(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "shared.llm.engine")
    show = {"parameters": "stop \"<|im_end|>\"\nnum_ctx 6144\ntemperature 0.6",
            "model_info": {"general.architecture": "qwen3", "qwen3.context_length": 40960}}
    with OpenAIFake(show=show) as fake:
        engine = _engine(fake)
        windows = await asyncio.gather(*(engine.window.tokens() for _ in range(5)))
        assert windows == [6144] * 5
        assert fake.show_requests == 1
    assert sum("context window of openai:qwen3:8b: 6144 tokens" in r.getMessage() for r in caplog.records) == 1


async def test_ollama_without_num_ctx_gets_its_default_not_the_models_trained_length() -> None:
    # Ollama runs a model with OLLAMA_CONTEXT_LENGTH (4,096 on a small GPU) whatever
    # the model was trained for, and cuts a longer prompt silently: the smaller wins.
    show = {"parameters": "temperature 0.6", "model_info": {"qwen3.context_length": 40960}}
    with OpenAIFake(show=show) as fake:
        assert await _engine(fake).window.tokens() == OLLAMA_DEFAULT_WINDOW
    with OpenAIFake(show={"model_info": {"llama.context_length": 2048}}) as fake:
        assert await _engine(fake).window.tokens() == 2048


async def test_ollamas_loaded_model_says_its_running_context() -> None:
    ps = [{"name": "other:1b", "context_length": 2048}, {"name": "qwen3:8b", "model": "qwen3:8b", "context_length": 16384}]
    with OpenAIFake(ps=ps, show={"model_info": {"qwen3.context_length": 40960}}) as fake:
        assert await _engine(fake).window.tokens() == 16384
        assert fake.show_requests == 0


async def test_a_server_that_does_not_say_gets_the_default(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "shared.llm.engine")
    with OpenAIFake() as fake:  # /api/show and /api/ps are 404, as on vLLM or llama.cpp
        assert await _engine(fake).window.tokens() == UNKNOWN_WINDOW
    assert any("LLM_CONTEXT_TOKENS sets it" in r.getMessage() for r in caplog.records)


async def test_claude_and_openai_have_their_known_windows() -> None:
    settings = StageSettings(llm_provider="anthropic", anthropic_api_key="sk-test")
    assert await make_engine(settings).window.tokens() == 200_000
    openai = StageSettings(llm_provider="openai", openai_model="gpt-4o", openai_api_key="sk-test")
    assert await make_engine(openai).window.tokens() == 128_000
    offline = StageSettings(llm_provider="offline")
    assert await make_engine(offline).window.tokens() > 10**6


# -- the engine never sends a prompt longer than the window -------------------------------


async def test_a_prompt_that_leaves_no_room_for_the_answer_is_never_sent(caplog: pytest.LogCaptureFixture) -> None:
    with OpenAIFake(context_tokens=2048) as fake:
        llm = _engine(fake, LLM_CONTEXT_TOKENS="2048").bind("digest", Usage())
        with pytest.raises(LLMContextExceeded) as caught:
            await _ask(llm, "lighthouse " * 900)
        assert fake.requests == []
        assert caught.value.window == 2048
        assert llm.usage().input_tokens == 0 and not llm.calls  # nothing was charged
    assert any("does not fit the context window of 2048" in r.getMessage() for r in caplog.records)


async def test_the_answer_allowance_shrinks_to_what_the_window_holds() -> None:
    with OpenAIFake(context_tokens=2048) as fake:
        llm = _engine(fake, LLM_CONTEXT_TOKENS="2048").bind("digest", Usage())
        note = await _ask(llm, "lighthouse " * 200, max_tokens=1500)
        assert note.text != "offline"
        (prompt, completion), = fake.prompt_sizes
        assert completion < 1500 and prompt + completion <= 2048
        assert fake.refused_for_length == 0


async def test_a_refusal_for_length_is_typed_and_not_a_structured_mode_switch() -> None:
    # The client believes the window is larger than the server's: the server refuses.
    with OpenAIFake(context_tokens=1024) as fake:
        engine = _engine(fake, LLM_CONTEXT_TOKENS="8192")
        llm = engine.bind("score", Usage())
        with pytest.raises(LLMContextExceeded, match="maximum context length is 1024"):
            await _ask(llm, "lighthouse " * 600)
        assert fake.refused_for_length == 1
        assert engine.provider.mode == "tools"
        # The refusal named the server's window: the engine uses it from now on, so the
        # next prompt too long for it is not even sent.
        assert await engine.window.tokens() == 1024
        with pytest.raises(LLMContextExceeded, match="does not fit the context window of 1024"):
            await _ask(llm, "lighthouse " * 600)
        assert fake.refused_for_length == 1 and len(fake.requests) == 1


async def test_a_batch_refused_for_length_is_split_and_asked_again() -> None:
    with OpenAIFake(context_tokens=1000) as fake:
        llm = _engine(fake, LLM_CONTEXT_TOKENS="100000").bind("score", Usage())
        paragraphs = [f"Paragraph {n}: " + "the keeper trimmed the wick " * 12 for n in range(8)]

        async def run(batch: list[str]) -> Note:
            return await _ask(llm, "\n".join(batch), max_tokens=300)

        parts = await split_on_overflow(paragraphs, run, what="test batch")
        assert [p for batch, _ in parts for p in batch] == paragraphs
        assert len(parts) > 1 and fake.refused_for_length >= 1
        assert all(note.text != "offline" for _, note in parts)
        answered = [p + c for p, c in fake.prompt_sizes[-len(parts):]]
        assert all(total <= 1000 for total in answered)


@pytest.mark.parametrize(("body", "window"), [
    ({"message": "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens",
      "type": "invalid_request_error", "code": 400}, 4096),  # vLLM
    ({"message": "the request exceeds the available context size, try increasing it",
      "type": "exceed_context_size_error", "code": 400, "n_prompt_tokens": 5000, "n_ctx": 2048}, 2048),  # llama.cpp
    ({"type": "error", "error": {"type": "invalid_request_error",
                                 "message": "prompt is too long: 201234 tokens > 200000 maximum"}}, 200_000),  # Claude
    ({"message": "Too long", "code": "context_length_exceeded"}, None),  # OpenAI, no number said
])
def test_refusals_for_length_are_recognised_with_the_window_they_name(body: dict[str, Any], window: int | None) -> None:
    from shared.llm.providers import _server_window, too_long

    class Refusal(Exception):
        status_code = 400

        def __init__(self, body: dict[str, Any]) -> None:
            self.body = body

    assert too_long(Refusal(body))
    assert _server_window(Refusal(body)) == window
    assert not too_long(Refusal({"message": "model does not support tools", "type": "invalid_request_error"}))
