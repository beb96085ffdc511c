"""The fake Anthropic server's failures as the real `anthropic` SDK sees them: auth,
scripted and invalid-request errors, retries and timeouts. Successful answers,
responders and concurrency are in `test_anthropic_fake.py`."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import anthropic
import httpx
import pytest

from tests.fakes.anthropic import AnthropicFake, anthropic_fake
from tests.fakes.anthropic_sdk import MODEL, PLAN_TOOL, Plan, client, plan_call
from tests.fakes.llm import Delay, Fail, ToolCall
from tests.fakes.server import wait_until


@pytest.fixture
def fake() -> Iterator[AnthropicFake]:
    with anthropic_fake() as f:
        yield f


# --- auth --------------------------------------------------------------------------------


async def test_sdk_api_key_is_accepted(fake: AnthropicFake) -> None:
    await plan_call(client(fake))
    headers = fake.requests[0].headers
    # This SDK version sends the key as a bearer token; older ones as x-api-key.
    assert (
        headers.get("authorization") == f"Bearer {fake.api_key}"
        or headers.get("x-api-key") == fake.api_key
    )


async def test_x_api_key_header_style_is_accepted(
    fake: AnthropicFake, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    c = anthropic.AsyncAnthropic(
        base_url=fake.base_url,
        default_headers={"x-api-key": fake.api_key},
        max_retries=0,
    )
    message = await plan_call(c)
    assert message.stop_reason == "tool_use"
    assert fake.requests[-1].headers["x-api-key"] == fake.api_key
    assert "authorization" not in fake.requests[-1].headers


async def test_bearer_auth_token_style_is_accepted(fake: AnthropicFake) -> None:
    c = anthropic.AsyncAnthropic(
        base_url=fake.base_url, auth_token=fake.api_key, max_retries=0
    )
    assert (await plan_call(c)).stop_reason == "tool_use"


@pytest.mark.parametrize(
    "headers",
    [{}, {"x-api-key": "sk-ant-wrong"}, {"authorization": "Bearer sk-ant-wrong"}],
)
async def test_missing_or_wrong_key_is_a_401_authentication_error(
    fake: AnthropicFake, headers: dict
) -> None:
    async with httpx.AsyncClient() as h:
        r = await h.post(
            f"{fake.base_url}/v1/messages",
            headers={"anthropic-version": "2023-06-01", **headers},
            json={
                "model": MODEL,
                "max_tokens": 5,
                "messages": [{"role": "user", "content": "q"}],
            },
        )
    assert r.status_code == 401 and r.headers["request-id"].startswith("req_")
    body = r.json()
    assert (
        body["type"] == "error"
        and body["error"]["type"] == "authentication_error"
        and body["error"]["message"]
    )


async def test_wrong_key_maps_to_sdk_authentication_error_and_is_not_billed(
    fake: AnthropicFake,
) -> None:
    fake.tool({"refined": "never sent"})
    with pytest.raises(anthropic.AuthenticationError) as info:
        await plan_call(client(fake, api_key="sk-ant-wrong", max_retries=2))
    assert info.value.status_code == 401 and info.value.type == "authentication_error"
    assert info.value.request_id and info.value.request_id.startswith("req_")
    assert len(fake.requests) == 1  # 401 is not retried by the SDK
    assert fake.pending == 1 and fake.total_tokens == 0  # the script is untouched


# --- errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "error_type", "exc"),
    [
        (400, "invalid_request_error", anthropic.BadRequestError),
        (401, "authentication_error", anthropic.AuthenticationError),
        (403, "permission_error", anthropic.PermissionDeniedError),
        (429, "rate_limit_error", anthropic.RateLimitError),
        (500, "api_error", anthropic.InternalServerError),
        (529, "overloaded_error", anthropic.OverloadedError),
    ],
)
async def test_scripted_errors_map_to_typed_sdk_exceptions(
    fake: AnthropicFake,
    status: int,
    error_type: str,
    exc: type[anthropic.APIStatusError],
) -> None:
    fake.fail(status, retry_after=1 if status == 429 else None)
    with pytest.raises(exc) as info:
        await plan_call(client(fake))
    err = info.value
    assert type(err) is exc and err.status_code == status
    assert err.type == error_type and err.api_message
    assert err.body == {
        "type": "error",
        "error": {"type": error_type, "message": err.api_message},
        "request_id": err.request_id,
    }
    if status == 429:
        assert err.response.headers["retry-after"] == "1"
    assert fake.total_tokens == 0


async def test_529_is_an_internal_server_error_subclass(fake: AnthropicFake) -> None:
    fake.fail(529)
    with pytest.raises(anthropic.InternalServerError):
        await plan_call(client(fake))


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"max_tokens": 5, "messages": [{"role": "user", "content": "q"}]}, "model"),
        (
            {"model": MODEL, "messages": [{"role": "user", "content": "q"}]},
            "max_tokens",
        ),
        ({"model": MODEL, "max_tokens": 5}, "messages"),
        ({"model": MODEL, "max_tokens": 5, "messages": []}, "messages"),
        (
            {
                "model": MODEL,
                "max_tokens": 5,
                "messages": [{"role": "user", "content": "q"}],
                "stream": True,
            },
            "stream",
        ),
    ],
)
async def test_invalid_requests_are_400(
    fake: AnthropicFake, body: dict, needle: str
) -> None:
    async with httpx.AsyncClient() as h:
        r = await h.post(
            f"{fake.base_url}/v1/messages",
            headers={"x-api-key": fake.api_key, "anthropic-version": "2023-06-01"},
            json=body,
        )
    assert r.status_code == 400
    assert (
        r.json()["error"]["type"] == "invalid_request_error"
        and needle in r.json()["error"]["message"]
    )


async def test_missing_anthropic_version_is_400(fake: AnthropicFake) -> None:
    async with httpx.AsyncClient() as h:
        r = await h.post(
            f"{fake.base_url}/v1/messages",
            headers={"x-api-key": fake.api_key},
            json={
                "model": MODEL,
                "max_tokens": 5,
                "messages": [{"role": "user", "content": "q"}],
            },
        )
    assert r.status_code == 400 and "anthropic-version" in r.json()["error"]["message"]


async def test_tool_choice_naming_an_unknown_tool_is_a_bad_request(
    fake: AnthropicFake,
) -> None:
    with pytest.raises(anthropic.BadRequestError) as info:
        await client(fake).messages.create(
            model=MODEL,
            max_tokens=5,
            messages=[{"role": "user", "content": "q"}],
            tools=[PLAN_TOOL],  # type: ignore[list-item]
            tool_choice={"type": "tool", "name": "record_digest"},
        )
    assert "record_digest" in (info.value.api_message or "")


# --- retries and timeouts ----------------------------------------------------------------


async def test_429_with_retry_after_is_retried_then_succeeds(
    fake: AnthropicFake,
) -> None:
    # 1 s is above the SDK's own first backoff (at most 0.5 s), so the gap shows that
    # the header, not the backoff, decided the wait.
    fake.fail(429, retry_after=1).tool({"refined": "after the wait"})
    message = await plan_call(client(fake, max_retries=1))
    assert message.content[0].input == {"refined": "after the wait"}  # type: ignore[union-attr]
    first, second = fake.requests
    assert (first.status, second.status) == (429, 200)
    assert second.headers["x-stainless-retry-count"] == "1"
    assert second.received_at - first.received_at >= 0.95
    assert fake.total_output_tokens == message.usage.output_tokens


async def test_overloaded_then_success_with_retry(fake: AnthropicFake) -> None:
    fake.fail(529, retry_after=0.05).fail(500, retry_after=0.05)
    message = await plan_call(client(fake, max_retries=2))
    assert message.stop_reason == "tool_use"
    assert [r.status for r in fake.requests] == [529, 500, 200]


async def test_retries_exhausted_raise_the_last_error(fake: AnthropicFake) -> None:
    fake.fail(429, retry_after=0.05).fail(429, retry_after=0.05)
    with pytest.raises(anthropic.RateLimitError):
        await plan_call(client(fake, max_retries=1))
    assert len(fake.requests) == 2


async def test_slower_than_timeout_raises_api_timeout_error_and_is_not_billed(
    fake: AnthropicFake,
) -> None:
    fake.delay(3.0, then=ToolCall(input={"refined": "too late"}))
    with pytest.raises(anthropic.APITimeoutError):
        await plan_call(client(fake, timeout=0.3))
    [rec] = fake.requests
    assert await asyncio.to_thread(wait_until, lambda: rec.abandoned)
    assert rec.status == 499 and fake.total_tokens == 0 and fake.delivered == []


async def test_slow_call_is_abandoned_and_the_retry_succeeds(
    fake: AnthropicFake,
) -> None:
    fake.script(
        Delay(3.0, then=ToolCall(input={"refined": "too late"})),
        ToolCall(input={"refined": "in time"}),
    )
    message = await plan_call(client(fake, timeout=0.3, max_retries=1))
    assert message.content[0].input == {"refined": "in time"}  # type: ignore[union-attr]
    assert await asyncio.to_thread(wait_until, lambda: fake.requests[0].abandoned)
    # Only the answer the client received is billed.
    assert [r.status for r in fake.delivered] == [200]
    assert (fake.total_input_tokens, fake.total_output_tokens) == (
        message.usage.input_tokens,
        message.usage.output_tokens,
    )


async def test_delay_within_timeout_answers_normally(fake: AnthropicFake) -> None:
    fake.script(Delay(0.2))  # then the default responder decides
    message = await plan_call(client(fake, timeout=5.0))
    Plan.model_validate(message.content[0].input)  # type: ignore[union-attr]


async def test_scripted_fail_after_delay(fake: AnthropicFake) -> None:
    fake.script(Delay(0.1, then=Fail(503)))
    with pytest.raises(anthropic.ServiceUnavailableError):
        await plan_call(client(fake))
