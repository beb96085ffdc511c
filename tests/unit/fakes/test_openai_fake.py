"""The fake OpenAI-compatible server speaks chat completions as the real `openai` SDK
expects, including the differences between servers (finish_reason, JSON in content,
null or empty content) that a provider must tolerate."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import httpx
import openai
import pytest
from pydantic import BaseModel, Field

from tests.fakes.llm import Delay, ToolCall
from tests.fakes.openai import OpenAIFake, openai_fake
from tests.fakes.server import wait_until

MODEL = "llama3.1:8b"


class Claim(BaseModel):
    text: str = Field(min_length=3)
    confidence: float = Field(ge=0, le=1)


class Digest(BaseModel):
    claims: list[Claim] = Field(min_length=1, max_length=5)
    topic: str


TOOL = {
    "type": "function",
    "function": {
        "name": "record_digest",
        "description": "Record.",
        "parameters": Digest.model_json_schema(),
    },
}
FORCE = {"type": "function", "function": {"name": "record_digest"}}
PROMPT = "<source>Regular coffee intake was associated with lower arrhythmia incidence.</source>"


@pytest.fixture
def fake() -> Iterator[OpenAIFake]:
    with openai_fake() as f:
        yield f


def client(fake: OpenAIFake, **kwargs: object) -> openai.AsyncOpenAI:
    options: dict[str, object] = {
        "base_url": fake.base_url,
        "api_key": fake.api_key,
        "max_retries": 0,
    }
    options.update(kwargs)
    return openai.AsyncOpenAI(**options)  # type: ignore[arg-type]


async def digest_call(
    c: openai.AsyncOpenAI, **kwargs: object
) -> openai.types.chat.ChatCompletion:
    options: dict[str, object] = {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "Extract claims."},
            {"role": "user", "content": PROMPT},
        ],
        "tools": [TOOL],
        "tool_choice": FORCE,
    }
    options.update(kwargs)
    return await c.chat.completions.create(**options)  # type: ignore[call-overload]


async def test_base_url_ends_in_v1(fake: OpenAIFake) -> None:
    assert fake.base_url.endswith("/v1")
    assert fake.env()["OPENAI_BASE_URL"] == fake.base_url


async def test_tool_call_round_trip_and_usage(fake: OpenAIFake) -> None:
    scripted = {
        "claims": [{"text": "coffee lowers AF", "confidence": 0.7}],
        "topic": "coffee",
    }
    fake.tool(scripted)
    raw = await client(fake).chat.completions.with_raw_response.create(
        model=MODEL,
        messages=[{"role": "user", "content": PROMPT}],
        tools=[TOOL],
        tool_choice=FORCE,  # type: ignore[list-item,arg-type]
    )
    assert raw.headers["x-request-id"].startswith("req_")
    completion = raw.parse()
    assert completion.object == "chat.completion" and completion.model == MODEL
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content is None
    [call] = choice.message.tool_calls or []
    assert call.type == "function" and call.id.startswith("call_")
    assert call.function.name == "record_digest"
    assert (
        isinstance(call.function.arguments, str)
        and json.loads(call.function.arguments) == scripted
    )
    usage = completion.usage
    assert (
        usage is not None
        and usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    )
    assert (fake.total_input_tokens, fake.total_output_tokens) == (
        usage.prompt_tokens,
        usage.completion_tokens,
    )
    [rec] = fake.requests
    assert (
        rec.forced_tool == "record_digest"
        and rec.tool_schema == Digest.model_json_schema()
    )
    assert rec.headers["authorization"] == f"Bearer {fake.api_key}"


async def test_default_responder_answers_schema_validly(fake: OpenAIFake) -> None:
    completion = await digest_call(client(fake))
    args = completion.choices[0].message.tool_calls[0].function.arguments  # type: ignore[index,union-attr]
    digest = Digest.model_validate_json(args)
    assert any(w in digest.topic for w in ("coffee", "Regular", "intake", "arrhythmia"))
    text = await client(fake).chat.completions.create(
        model=MODEL, messages=[{"role": "user", "content": PROMPT}]
    )
    assert text.choices[0].finish_reason == "stop" and "coffee" in (
        text.choices[0].message.content or ""
    )


async def test_untrustworthy_finish_reason_and_empty_content() -> None:
    with openai_fake(tool_finish_reason="stop", empty_content="") as fake:
        completion = await digest_call(client(fake))
    choice = completion.choices[0]
    assert choice.finish_reason == "stop" and choice.message.content == ""
    Digest.model_validate_json(choice.message.tool_calls[0].function.arguments)  # type: ignore[index,union-attr]


async def test_per_step_finish_reason_and_truncated_arguments(fake: OpenAIFake) -> None:
    fake.script(ToolCall(raw='{"claims": [{"text": "cof', stop_reason="length"))
    choice = (await digest_call(client(fake))).choices[0]
    assert choice.finish_reason == "length"
    assert (
        choice.message.tool_calls[0].function.arguments == '{"claims": [{"text": "cof'
    )  # type: ignore[index,union-attr]


async def test_server_that_ignores_tools_answers_json_in_content() -> None:
    with openai_fake(ignore_tools=True) as fake:
        completion = await digest_call(client(fake))
    message = completion.choices[0].message
    assert not message.tool_calls and completion.choices[0].finish_reason == "stop"
    Digest.model_validate_json(message.content or "")


async def test_fenced_json_in_content_can_be_scripted(fake: OpenAIFake) -> None:
    fake.text('```json\n{"claims": [], "topic": "t"}\n```')
    message = (await digest_call(client(fake))).choices[0].message
    assert (
        message.content is not None
        and message.content.startswith("```json")
        and not message.tool_calls
    )


async def test_response_format_json_schema_is_answered_in_content(
    fake: OpenAIFake,
) -> None:
    completion = await client(fake).chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": PROMPT}],
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "digest", "schema": Digest.model_json_schema()},
        },
    )
    Digest.model_validate_json(completion.choices[0].message.content or "")
    assert (
        fake.requests[0].answer_in_content and fake.requests[0].forced_tool == "digest"
    )


# --- auth and errors ---------------------------------------------------------------------


async def test_wrong_key_is_authentication_error(fake: OpenAIFake) -> None:
    with pytest.raises(openai.AuthenticationError) as info:
        await digest_call(client(fake, api_key="sk-wrong", max_retries=2))
    err = info.value
    assert (
        err.status_code == 401
        and err.code == "invalid_api_key"
        and err.type == "invalid_request_error"
    )
    assert len(fake.requests) == 1 and fake.total_tokens == 0


async def test_local_server_mode_accepts_any_key() -> None:
    with openai_fake(require_auth=False) as fake:
        completion = await digest_call(client(fake, api_key="dummy"))
    assert completion.choices[0].message.tool_calls


@pytest.mark.parametrize(
    ("status", "exc", "error_type", "code"),
    [
        (400, openai.BadRequestError, "invalid_request_error", None),
        (401, openai.AuthenticationError, "invalid_request_error", "invalid_api_key"),
        (
            403,
            openai.PermissionDeniedError,
            "invalid_request_error",
            "permission_denied",
        ),
        (429, openai.RateLimitError, "requests", "rate_limit_exceeded"),
        (500, openai.InternalServerError, "server_error", None),
    ],
)
async def test_scripted_errors_map_to_typed_sdk_exceptions(
    fake: OpenAIFake,
    status: int,
    exc: type[openai.APIStatusError],
    error_type: str,
    code: str | None,
) -> None:
    fake.fail(status, retry_after=1 if status == 429 else None)
    with pytest.raises(exc) as info:
        await digest_call(client(fake))
    err = info.value
    assert type(err) is exc and err.status_code == status
    assert err.type == error_type and err.code == code and err.message
    assert isinstance(err.body, dict) and set(err.body) == {
        "message",
        "type",
        "param",
        "code",
    }
    if status == 429:
        assert err.response.headers["retry-after"] == "1"


async def test_tool_choice_naming_an_unknown_function_is_a_bad_request(
    fake: OpenAIFake,
) -> None:
    with pytest.raises(openai.BadRequestError) as info:
        await digest_call(
            client(fake), tool_choice={"type": "function", "function": {"name": "nope"}}
        )
    assert "nope" in info.value.message


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"messages": [{"role": "user", "content": "q"}]}, "model"),
        ({"model": MODEL}, "messages"),
        ({"model": MODEL, "messages": []}, "messages"),
        (
            {
                "model": MODEL,
                "messages": [{"role": "user", "content": "q"}],
                "tool_choice": "required",
            },
            "tools",
        ),
    ],
)
async def test_invalid_requests_are_400(
    fake: OpenAIFake, body: dict, needle: str
) -> None:
    async with httpx.AsyncClient() as h:
        r = await h.post(
            f"{fake.base_url}/chat/completions",
            headers={"authorization": f"Bearer {fake.api_key}"},
            json=body,
        )
    assert r.status_code == 400
    assert (
        r.json()["error"]["type"] == "invalid_request_error"
        and needle in r.json()["error"]["message"]
    )


# --- retries and timeouts ----------------------------------------------------------------


async def test_429_with_retry_after_is_retried_then_succeeds(fake: OpenAIFake) -> None:
    # 1 s is above the SDK's first backoff (at most 0.5 s): the header decided the wait.
    fake.fail(429, retry_after=1).tool({"claims": [], "topic": "after the wait"})
    completion = await digest_call(client(fake, max_retries=1))
    args = json.loads(completion.choices[0].message.tool_calls[0].function.arguments)  # type: ignore[index,union-attr]
    assert args["topic"] == "after the wait"
    first, second = fake.requests
    assert (first.status, second.status) == (429, 200)
    assert second.received_at - first.received_at >= 0.95
    assert fake.total_input_tokens == completion.usage.prompt_tokens  # type: ignore[union-attr]


async def test_slower_than_timeout_raises_api_timeout_error(fake: OpenAIFake) -> None:
    fake.delay(3.0)
    with pytest.raises(openai.APITimeoutError):
        await digest_call(client(fake, timeout=0.3))
    assert await asyncio.to_thread(wait_until, lambda: fake.requests[0].abandoned)
    assert fake.total_tokens == 0


async def test_slow_call_is_abandoned_and_the_retry_succeeds(fake: OpenAIFake) -> None:
    fake.script(
        Delay(3.0, then=ToolCall(input={"claims": [], "topic": "late"})),
        ToolCall(input={"claims": [], "topic": "ok"}),
    )
    completion = await digest_call(client(fake, timeout=0.3, max_retries=1))
    args = json.loads(completion.choices[0].message.tool_calls[0].function.arguments)  # type: ignore[index,union-attr]
    assert args["topic"] == "ok"
    assert await asyncio.to_thread(wait_until, lambda: fake.requests[0].abandoned)
    assert fake.total_output_tokens == completion.usage.completion_tokens  # type: ignore[union-attr]


async def test_concurrent_calls_totals_equal_reported_usage(fake: OpenAIFake) -> None:
    c = client(fake)
    completions = await asyncio.gather(*(digest_call(c) for _ in range(10)))
    assert fake.total_input_tokens == sum(x.usage.prompt_tokens for x in completions)  # type: ignore[union-attr]
    assert fake.total_output_tokens == sum(
        x.usage.completion_tokens for x in completions
    )  # type: ignore[union-attr]
