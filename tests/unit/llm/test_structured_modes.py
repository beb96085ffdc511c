"""Structured output on any OpenAI-compatible server: the three modes (a forced tool
call, ``response_format`` json_schema, JSON asked for in the prompt), the switch from
one to the next on the server's first refusal, reasoning removed before parsing, and
the lenient JSON parser. Through the real openai SDK against the loopback fake."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from pydantic import BaseModel, Field

from shared.llm.engine import make_engine
from shared.llm.providers import LLMError, parse_json_lenient, strip_reasoning
from shared.research.envelope import Usage
from shared.settings import StageSettings
from tests.fakes.llm import Fail
from tests.fakes.openai import OpenAIFake, structured_mode_of


class Finding(BaseModel):
    """One finding with its support."""

    statement: str = Field(min_length=3)
    support: list[str] = Field(min_length=1)
    confidence: float = Field(ge=0, le=1)


VALID = {"statement": "Lenses focus light", "support": ["a quote"], "confidence": 0.8}
REASONING = "The user wants a finding. Let me think about lenses and the secret plan."


def _llm(fake: OpenAIFake, **env: str):  # noqa: ANN202
    settings = StageSettings(**{k.lower(): v for k, v in {
        **fake.env(), "OPENAI_MODEL": "qwen3:8b", "LLM_MAX_RETRIES": "0", "LLM_TIMEOUT_S": "5", **env}.items()})
    return make_engine(settings).bind("score", Usage())


def _offline() -> Finding:
    return Finding(statement="offline", support=["none"], confidence=0)


async def _ask(llm) -> Finding:  # noqa: ANN001
    return await llm.structured(Finding, system="You extract findings.", prompt="Record one finding.",
                                tool_name="record_finding", offline=_offline, max_tokens=512)


def _modes(fake: OpenAIFake) -> list[tuple[str, int | None]]:
    return [(structured_mode_of(r), r.status) for r in fake.requests]


def _switches(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "shared.llm.providers" and r.levelno == logging.WARNING and "refused" in r.getMessage()]


def _accounted(llm, fake: OpenAIFake) -> None:  # noqa: ANN001
    """Every token and every reply the server billed is in the job's usage."""
    usage = llm.usage()
    assert (usage.input_tokens, usage.output_tokens) == (fake.total_input_tokens, fake.total_output_tokens)
    assert sum(s.calls for s in usage.by_stage.values()) == len(fake.delivered)


# -- the lenient parser and reasoning --------------------------------------------------


@pytest.mark.parametrize("text", [
    '{"a": 1}',
    '  {"a": 1}\n',
    'Sure! Here is the JSON:\n```json\n{"a": 1}\n```\nHope it helps.',
    '```\n{"a": 1}\n```',
    'Here: ```python\nprint(1)\n``` and ```json\n{"a": 1}\n```',
    'The answer is {"a": 1} as requested.',
    'Thinking {not json} then {"a": 1} and {"b": 2}',
    '<think>maybe {"a": 2}?</think>\n{"a": 1}',
    '<thinking>\nreasoning\n</thinking>```json\n{"a": 1}\n```',
    'reasoning whose opening tag was in the template {"a": 2}</think>\n\n{"a": 1}',
])
def test_the_lenient_parser_finds_the_answer(text: str) -> None:
    assert parse_json_lenient(text) == {"a": 1}


def test_the_first_balanced_object_ignores_braces_in_strings() -> None:
    text = 'Answer: {"s": "a } and { and \\" quote", "n": {"m": [1, 2]}} -- done }'
    assert parse_json_lenient(text) == {"s": 'a } and { and " quote', "n": {"m": [1, 2]}}


@pytest.mark.parametrize("text", [None, "", "no json here", "{unbalanced", '<think>{"a": 1}', "```json\n{bad}\n```"])
def test_the_lenient_parser_returns_none_without_json(text: str | None) -> None:
    assert parse_json_lenient(text) is None


@pytest.mark.parametrize(("text", "expected"), [
    ("<think>\nplan\n</think>\n\nThe answer.", "The answer."),
    ("<THINK>a</THINK>One.<think>b</think> Two.", "One. Two."),
    ("<thinking>x</thinking>Hello", "Hello"),
    ("<think>cut off while thinking", ""),
    ("template-opened reasoning</think>The answer.", "The answer."),
    ("No reasoning at all.", "No reasoning at all."),
])
def test_reasoning_is_removed(text: str, expected: str) -> None:
    assert strip_reasoning(text) == expected


# -- the modes and the switch --------------------------------------------------------


async def test_a_server_with_tools_stays_in_tool_mode(caplog: pytest.LogCaptureFixture) -> None:
    with OpenAIFake() as fake:
        fake.tool(VALID).tool(VALID)
        llm = _llm(fake)
        assert await _ask(llm) == await _ask(llm) == Finding.model_validate(VALID)
    assert _modes(fake) == [("tools", 200), ("tools", 200)]
    assert _switches(caplog) == []


async def test_refused_tools_switch_to_json_schema_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    with OpenAIFake(refuse_tools=True) as fake:
        fake.tool(VALID).tool(VALID)
        llm = _llm(fake)
        assert await _ask(llm) == Finding.model_validate(VALID)  # the refused call is made again at once
        assert await _ask(llm) == Finding.model_validate(VALID)
        body = fake.delivered[0].body
    assert _modes(fake) == [("tools", 400), ("json_schema", 200), ("json_schema", 200)]
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "record_finding"
    assert fmt["json_schema"]["schema"] == Finding.model_json_schema()
    switches = _switches(caplog)
    assert len(switches) == 1
    assert "does not support tools" in switches[0] and "response_format json_schema" in switches[0]
    assert llm.engine.provider.mode == "json_schema"
    _accounted(llm, fake)


async def test_concurrent_refusals_switch_and_log_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    with OpenAIFake(refuse_tools=True) as fake:
        llm = _llm(fake)
        answers = await asyncio.gather(*(_ask(llm) for _ in range(4)))
        assert all(a.statement != "offline" for a in answers)
        await _ask(llm)
    modes = _modes(fake)
    assert modes.count(("tools", 400)) <= 4 and modes.count(("json_schema", 200)) == 5
    assert modes[-1] == ("json_schema", 200)
    assert len(_switches(caplog)) == 1


async def test_refused_tools_and_response_format_end_in_prompt_mode(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    with OpenAIFake(refuse_tools=True, refuse_response_format=True) as fake:
        fake.tool(VALID).tool(VALID)
        llm = _llm(fake)
        assert await _ask(llm) == Finding.model_validate(VALID)
        assert await _ask(llm) == Finding.model_validate(VALID)
        system = fake.delivered[0].system
    assert _modes(fake) == [("tools", 400), ("json_schema", 400), ("prompt", 200), ("prompt", 200)]
    assert system.startswith("You extract findings.") and '"confidence"' in system
    switches = _switches(caplog)
    assert len(switches) == 2
    assert "does not support tools" in switches[0]
    assert "not supported" in switches[1] and "JSON asked for in the prompt" in switches[1]
    _accounted(llm, fake)


async def test_a_reply_without_a_tool_call_or_json_switches_and_is_counted(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    with OpenAIFake() as fake:
        fake.text("I am a small model and I will just chat instead.").tool(VALID).tool(VALID)
        llm = _llm(fake)
        assert await _ask(llm) == Finding.model_validate(VALID)
        assert await _ask(llm) == Finding.model_validate(VALID)
    assert _modes(fake) == [("tools", 200), ("json_schema", 200), ("json_schema", 200)]
    assert "no tool call and no JSON" in _switches(caplog)[0]
    _accounted(llm, fake)  # the chatty reply was billed: its tokens and the call are the job's


async def test_a_server_that_ignores_tools_but_answers_json_stays_in_tool_mode(caplog: pytest.LogCaptureFixture) -> None:
    with OpenAIFake(ignore_tools=True, fence_json=True, think=REASONING) as fake:
        fake.tool(VALID)
        llm = _llm(fake)
        assert await _ask(llm) == Finding.model_validate(VALID)
    assert _modes(fake) == [("tools", 200)]
    assert _switches(caplog) == []


async def test_an_unrelated_400_is_not_a_refusal(caplog: pytest.LogCaptureFixture) -> None:
    with OpenAIFake() as fake:
        fake.script(Fail(400, message="This model's maximum context length is 8192 tokens."))
        llm = _llm(fake)
        with pytest.raises(LLMError, match="maximum context length"):
            await _ask(llm)
        assert llm.engine.provider.mode == "tools"
    assert _switches(caplog) == []


async def test_the_fake_writes_reasoning_and_fences_as_local_servers_do() -> None:
    import openai

    with OpenAIFake(think=REASONING, reasoning_content=REASONING, fence_json=True, ignore_tools=True) as fake:
        fake.tool(VALID)
        client = openai.AsyncOpenAI(base_url=fake.base_url, api_key=fake.api_key, max_retries=0)
        reply = await client.chat.completions.create(
            model="qwen3:8b", messages=[{"role": "user", "content": "x"}], max_tokens=100)
        await client.close()
    message = reply.choices[0].message
    assert message.content.startswith(f"<think>\n{REASONING}\n</think>")
    assert "```json\n" in message.content and message.content.rstrip().endswith("anything else.")
    assert (message.model_extra or {}).get("reasoning_content") == REASONING


async def test_prompt_mode_re_asks_with_the_validation_error() -> None:
    with OpenAIFake() as fake:
        fake.tool({"statement": "x", "support": "not a list", "confidence": 5}).tool(VALID)
        llm = _llm(fake, LLM_STRUCTURED_MODE="prompt")
        assert await _ask(llm) == Finding.model_validate(VALID)
        second = fake.delivered[1]
    assert _modes(fake) == [("prompt", 200), ("prompt", 200)]
    assert [m["role"] for m in second.body["messages"]] == ["system", "user", "assistant", "user"]
    assert "failed validation" in second.prompt and "support" in second.prompt and "confidence" in second.prompt
    _accounted(llm, fake)


async def test_prompt_mode_answers_with_junk_twice_raise_after_the_re_ask() -> None:
    from shared.llm.providers import LLMInvalidOutput

    with OpenAIFake(think=REASONING) as fake:
        fake.text("I don't know.").text("Still no idea.")
        llm = _llm(fake, LLM_STRUCTURED_MODE="prompt")
        with pytest.raises(LLMInvalidOutput):
            await _ask(llm)
    assert _modes(fake) == [("prompt", 200), ("prompt", 200)]


@pytest.mark.parametrize(("mode", "first"), [("tools", "tools"), ("json_schema", "json_schema"), ("prompt", "prompt")])
async def test_a_named_mode_is_used_and_never_switched(mode: str, first: str) -> None:
    with OpenAIFake(refuse_tools=mode == "tools", refuse_response_format=mode == "json_schema") as fake:
        llm = _llm(fake, LLM_STRUCTURED_MODE=mode)
        if mode == "prompt":
            fake.tool(VALID)
            assert await _ask(llm) == Finding.model_validate(VALID)
        else:
            with pytest.raises(LLMError, match="rejected the request \\(400\\)"):
                await _ask(llm)
        assert llm.engine.provider.mode == mode
    assert _modes(fake) == [(first, 200 if mode == "prompt" else 400)]


def test_the_setting_rejects_an_unknown_mode() -> None:
    with pytest.raises(ValueError):
        StageSettings(llm_structured_mode="grammar")


# -- reasoning never reaches a caller ------------------------------------------------


@pytest.mark.parametrize("options", [
    {"think": REASONING},
    {"reasoning_content": REASONING},
    {"think": REASONING, "reasoning_content": REASONING, "refuse_tools": True},
    {"think": REASONING, "fence_json": True, "refuse_tools": True, "refuse_response_format": True},
])
async def test_structured_answers_carry_no_reasoning(options: dict[str, Any]) -> None:
    with OpenAIFake(**options) as fake:
        fake.tool(VALID)
        llm = _llm(fake)
        answer = await _ask(llm)
    assert answer == Finding.model_validate(VALID)
    assert "secret plan" not in answer.model_dump_json()


async def test_text_answers_carry_no_reasoning() -> None:
    with OpenAIFake(think=REASONING, reasoning_content=REASONING) as fake:
        fake.text("Lighthouses were automated between 1960 and 1998.")
        llm = _llm(fake)
        text = await llm.text(system="Write.", prompt="Write one sentence.", offline=lambda: "offline")
    assert text == "Lighthouses were automated between 1960 and 1998."


async def test_a_text_answer_that_is_all_reasoning_is_invalid() -> None:
    from shared.llm.providers import LLMInvalidOutput

    with OpenAIFake() as fake:
        fake.text("<think>I was cut off while thinking about the", stop_reason="length")
        llm = _llm(fake)
        with pytest.raises(LLMInvalidOutput):
            await llm.text(system="Write.", prompt="Write one sentence.", offline=lambda: "offline")
