"""The fake Anthropic server speaks the Messages API as the real `anthropic` SDK expects:
every test drives it through `AsyncAnthropic` (or raw HTTP where the SDK would refuse
to send the request), so a provider tested against the fake is tested against the
wire format, not against the fake's own idea of it. This module covers successful
answers, responders, concurrency and other processes; auth, errors, retries and
timeouts are in `test_anthropic_fake_failures.py`."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anthropic
import httpx
import pytest
from pydantic import BaseModel

from tests.fakes.anthropic import AnthropicFake, anthropic_fake
from tests.fakes.anthropic_sdk import FORCE_PLAN, MODEL, PLAN_TOOL, QUESTION, Plan, PlanStep, client, plan_call
from tests.fakes.llm import (
    RecordedRequest,
    Step,
    Text,
    ToolCall,
    synthesize,
)

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def fake() -> Iterator[AnthropicFake]:
    with anthropic_fake() as f:
        yield f


# --- successful answers ------------------------------------------------------------------


async def test_tool_use_round_trip_and_usage(fake: AnthropicFake) -> None:
    scripted = {"refined": "coffee and AF", "checklist": ["a", "b", "c"], "steps": []}
    fake.tool(scripted)
    raw = await client(fake).messages.with_raw_response.create(
        model=MODEL,
        max_tokens=1024,
        messages=[{"role": "user", "content": QUESTION}],
        tools=[PLAN_TOOL],  # type: ignore[list-item]
        tool_choice=FORCE_PLAN,  # type: ignore[arg-type]
    )
    assert raw.headers["request-id"].startswith("req_")
    message = await raw.parse()
    assert (
        message.type == "message"
        and message.role == "assistant"
        and message.model == MODEL
    )
    assert message.id.startswith("msg_")
    assert message.stop_reason == "tool_use" and message.stop_sequence is None
    [block] = message.content
    assert isinstance(block, anthropic.types.ToolUseBlock)
    assert (
        block.id.startswith("toolu_")
        and block.name == "record_plan"
        and block.input == scripted
    )

    usage = message.usage
    assert usage.input_tokens > 0 and usage.output_tokens > 0
    assert usage.cache_creation_input_tokens == 0 and usage.cache_read_input_tokens == 0
    assert usage.cache_creation is not None and usage.service_tier == "standard"
    assert (fake.total_input_tokens, fake.total_output_tokens) == (
        usage.input_tokens,
        usage.output_tokens,
    )

    [rec] = fake.requests
    assert rec.status == 200 and rec.body["tool_choice"] == FORCE_PLAN
    assert rec.headers["anthropic-version"]
    assert (
        rec.forced_tool == "record_plan"
        and rec.tool_schema == PLAN_TOOL["input_schema"]
    )
    assert "atrial fibrillation" in rec.prompt
    assert fake.pending == 0


async def test_usage_is_deterministic_and_derived_from_lengths(
    fake: AnthropicFake,
) -> None:
    c = client(fake)
    fake.tool({"refined": "x"}).tool({"refined": "x"}).tool({"refined": "x" * 400})
    first, second, longer = [await plan_call(c) for _ in range(3)]
    assert (
        first.usage.input_tokens
        == second.usage.input_tokens
        == longer.usage.input_tokens
    )
    assert (
        first.usage.output_tokens
        == second.usage.output_tokens
        < longer.usage.output_tokens
    )
    assert fake.total_output_tokens == sum(
        m.usage.output_tokens for m in (first, second, longer)
    )


async def test_text_answer_and_tool_with_preamble(fake: AnthropicFake) -> None:
    c = client(fake)
    fake.text("A short summary.")
    fake.tool({"refined": "r"}, text="I will record the plan.")
    message = await c.messages.create(
        model=MODEL, max_tokens=50, messages=[{"role": "user", "content": "hi"}]
    )
    assert message.stop_reason == "end_turn"
    assert [b.type for b in message.content] == ["text"] and message.content[
        0
    ].text == "A short summary."  # type: ignore[union-attr]
    message = await plan_call(c)
    assert [b.type for b in message.content] == ["text", "tool_use"]


async def test_truncated_and_junk_tool_input_pass_through(fake: AnthropicFake) -> None:
    c = client(fake)
    fake.script(
        ToolCall(input={"refined": "cut sho"}, stop_reason="max_tokens"),
        ToolCall(input=["not", "an", "object"]),
        ToolCall(raw='{"refined": "trunc'),
    )
    truncated = await plan_call(c)
    assert truncated.stop_reason == "max_tokens" and truncated.content[0].input == {
        "refined": "cut sho"
    }  # type: ignore[union-attr]
    junk = await plan_call(c)
    assert junk.content[0].input == ["not", "an", "object"]  # type: ignore[union-attr]
    raw = await plan_call(c)
    assert raw.content[0].input == '{"refined": "trunc'  # type: ignore[union-attr]


async def test_token_override_for_budget_tests(fake: AnthropicFake) -> None:
    fake.script(
        ToolCall(input={"refined": "r"}, input_tokens=150_000, output_tokens=60_000)
    )
    message = await plan_call(client(fake))
    assert (message.usage.input_tokens, message.usage.output_tokens) == (
        150_000,
        60_000,
    )
    assert fake.total_tokens == 210_000


# --- default and custom responders -------------------------------------------------------


async def test_default_responder_answers_any_schema_validly(
    fake: AnthropicFake,
) -> None:
    c = client(fake)
    for _ in range(3):
        message = await plan_call(c)
        plan = Plan.model_validate(message.content[0].input)  # type: ignore[union-attr]
        assert 3 <= len(plan.checklist) <= 7 and 1 <= len(plan.steps) <= 8
        # Strings are made of the prompt's words, not of fixed filler.
        assert any(
            w in plan.refined for w in ("coffee", "consumption", "risk", "atrial")
        )
    text = await c.messages.create(
        model=MODEL, max_tokens=50, messages=[{"role": "user", "content": QUESTION}]
    )
    assert text.stop_reason == "end_turn" and "coffee" in text.content[0].text  # type: ignore[union-attr]


async def test_script_first_then_custom_responder(fake: AnthropicFake) -> None:
    seen: list[str] = []

    def responder(rec: RecordedRequest) -> Step:
        seen.append(rec.prompt)
        return Text(text=f"echo {len(seen)}")

    fake.responder = responder
    fake.text("scripted")
    c = client(fake)
    answers = []
    for _ in range(3):
        m = await c.messages.create(
            model=MODEL, max_tokens=5, messages=[{"role": "user", "content": "q"}]
        )
        answers.append(m.content[0].text)  # type: ignore[union-attr]
    assert answers == ["scripted", "echo 1", "echo 2"] and seen == ["q", "q"]


async def test_a_broken_responder_is_a_500_the_sdk_does_not_retry(
    fake: AnthropicFake,
) -> None:
    def responder(rec: RecordedRequest) -> Step:
        raise KeyError("no such field")

    fake.responder = responder
    with pytest.raises(anthropic.InternalServerError) as info:
        await plan_call(client(fake, max_retries=3))
    assert "fake server bug" in (info.value.api_message or "")
    assert len(fake.requests) == 1 and isinstance(fake.errors[0], KeyError)


@pytest.mark.parametrize(
    "model",
    [Plan, PlanStep],
)
def test_synthesize_validates_for_pydantic_schemas(model: type[BaseModel]) -> None:
    for words in ("", "one", "coffee heart rhythm risk adults cohort"):
        model.model_validate(synthesize(model.model_json_schema(), words))


def test_synthesize_respects_bounds_and_makes_items_distinct() -> None:
    schema = {
        "type": "object",
        "required": ["xs", "n", "tag"],
        "properties": {
            "xs": {
                "type": "array",
                "items": {"type": "string"},
                "minItems": 4,
                "maxItems": 5,
                "uniqueItems": True,
            },
            "few": {"type": "array", "items": {"type": "integer"}, "maxItems": 1},
            "n": {"type": "integer", "exclusiveMinimum": 10, "maximum": 12},
            "x": {"type": "number", "minimum": 2, "maximum": 3},
            "tag": {"enum": ["b", "a"]},
            "short": {"type": "string", "maxLength": 3},
            "long": {"type": "string", "minLength": 40},
            "either": {"anyOf": [{"type": "null"}, {"type": "boolean"}]},
        },
    }
    value = synthesize(schema, "alpha")
    assert len(value["xs"]) == 4 and len(set(value["xs"])) == 4
    assert len(value["few"]) == 1 and value["n"] == 11 and 2 <= value["x"] <= 3
    assert value["tag"] == "b" and len(value["short"]) <= 3 and len(value["long"]) >= 40
    assert value["either"] is True


# --- concurrency and other processes -----------------------------------------------------


async def test_concurrent_calls_totals_equal_reported_usage(
    fake: AnthropicFake,
) -> None:
    c = client(fake)
    messages = await asyncio.gather(*(plan_call(c) for _ in range(12)))
    assert len(fake.delivered) == 12
    assert fake.total_input_tokens == sum(m.usage.input_tokens for m in messages)
    assert fake.total_output_tokens == sum(m.usage.output_tokens for m in messages)


def test_a_separate_process_reaches_the_fake_through_the_environment(
    fake: AnthropicFake,
) -> None:
    fake.tool({"refined": "from another process"})
    code = (
        "import anthropic\n"
        "m = anthropic.Anthropic(max_retries=0).messages.create(model='m', max_tokens=10, "
        "messages=[{'role': 'user', 'content': 'q'}])\n"
        "print(m.content[0].input['refined'], m.usage.output_tokens)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env.update(fake.env())
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    text, tokens = out.stdout.strip().rsplit(" ", 1)
    assert text == "from another process" and int(tokens) == fake.total_output_tokens
    totals = httpx.get(f"{fake.base_url}/_fake/totals").json()
    assert totals == {
        "requests": 1,
        "delivered": 1,
        "input_tokens": fake.total_input_tokens,
        "output_tokens": int(tokens),
    }


def test_fake_runs_as_its_own_process() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.anthropic"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        env = json.loads(proc.stdout.readline())
        r = httpx.post(
            f"{env['ANTHROPIC_BASE_URL']}/v1/messages",
            headers={
                "x-api-key": env["ANTHROPIC_API_KEY"],
                "anthropic-version": "2023-06-01",
            },
            json={
                "model": MODEL,
                "max_tokens": 5,
                "messages": [{"role": "user", "content": "coffee"}],
            },
        )
        assert r.status_code == 200 and r.json()["content"][0]["text"].startswith(
            "coffee"
        )
    finally:
        proc.terminate()
        proc.wait(timeout=10)
