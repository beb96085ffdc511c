"""A loopback fake of Anthropic's Messages API (`POST /v1/messages`) for the test suite.

Speaks the wire format of the real API as the official `anthropic` SDK expects it:
both auth styles (`x-api-key`, `Authorization: Bearer`), the `anthropic-version`
header, `tool_use` / `text` content blocks, `stop_reason`, the full `usage` object,
`request-id` headers, and real error bodies (`{"type": "error", "error": {...}}`)
with `retry-after` where scripted. Point the SDK at it with
`AsyncAnthropic(base_url=fake.base_url, api_key=fake.api_key)`, or a service process
with `fake.env()` (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY).

Scripting and defaults are described in `tests.fakes.llm`. Run it as a process of its
own with `python -m tests.fakes.anthropic`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from tests.fakes.llm import (
    Fail,
    RecordedRequest,
    Responder,
    ScriptedLLM,
    Text,
    ToolCall,
    random_id,
    serve_forever,
    text_of,
    tokens_used,
)

__all__ = ["AnthropicFake", "anthropic_fake"]

# Error `type` and default message per status, as the real API sends them.
_ERRORS: dict[int, tuple[str, str]] = {
    400: ("invalid_request_error", "Invalid request."),
    401: ("authentication_error", "invalid x-api-key"),
    402: (
        "billing_error",
        "Your credit balance is too low to access the Anthropic API.",
    ),
    403: (
        "permission_error",
        "Your API key does not have permission to use the specified resource.",
    ),
    404: ("not_found_error", "The requested resource could not be found."),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: (
        "rate_limit_error",
        "Number of request tokens has exceeded your per-minute rate limit.",
    ),
    500: ("api_error", "Internal server error"),
    504: ("timeout_error", "Request timed out"),
    529: ("overloaded_error", "Overloaded"),
}


class AnthropicFake(ScriptedLLM):
    """Fake Messages API. `base_url` is `http://127.0.0.1:<port>` (the SDK adds /v1)."""

    routes_path = "/v1/messages"
    key_prefix = "sk-ant-fake-"
    request_id_prefix = "req_"
    _id_header = "request-id"

    def __init__(
        self, *, api_key: str | None = None, responder: Responder | None = None
    ) -> None:
        super().__init__(api_key=api_key, responder=responder)

    def env(self) -> dict[str, str]:
        return {
            "LLM_PROVIDER": "anthropic",
            "ANTHROPIC_BASE_URL": self.base_url,
            "ANTHROPIC_API_KEY": self.api_key,
        }

    def _authorized(self, headers: dict[str, str]) -> bool:
        return (
            headers.get("x-api-key") == self.api_key
            or headers.get("authorization") == f"Bearer {self.api_key}"
        )

    def _validate(self, headers: dict[str, str], body: dict[str, Any]) -> str | None:
        if not headers.get("anthropic-version"):
            return "anthropic-version: header is required"
        for name in ("model", "max_tokens", "messages"):
            if name not in body:
                return f"{name}: Field required"
        if not isinstance(body["model"], str) or not body["model"]:
            return "model: Input should be a valid string"
        max_tokens = body["max_tokens"]
        if (
            not isinstance(max_tokens, int)
            or isinstance(max_tokens, bool)
            or max_tokens < 0
        ):
            return "max_tokens: Input should be a valid non-negative integer"
        messages = body["messages"]
        if not isinstance(messages, list) or not messages:
            return "messages: at least one message is required"
        for i, m in enumerate(messages):
            if (
                not isinstance(m, dict)
                or m.get("role") not in ("user", "assistant")
                or "content" not in m
            ):
                return f"messages.{i}: each message needs a role of 'user' or 'assistant' and a content"
        if body.get("stream"):
            return "stream: this fake does not implement streaming"
        tools = body.get("tools", [])
        if not isinstance(tools, list):
            return "tools: Input should be a valid list"
        names = [t.get("name") for t in tools if isinstance(t, dict)]
        if any(not n for n in names):
            return "tools: each tool needs a name"
        choice = body.get("tool_choice")
        if choice is not None:
            kind = choice.get("type") if isinstance(choice, dict) else None
            if kind not in ("auto", "any", "tool", "none"):
                return (
                    "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'"
                )
            if kind in ("any", "tool") and not names:
                return "tool_choice: tools must be provided when tool_choice is 'any' or 'tool'"
            if kind == "tool" and choice.get("name") not in names:
                return f"tool_choice.name: tool {choice.get('name')!r} is not one of the provided tools"
        return None

    def _describe(self, rec: RecordedRequest, body: dict[str, Any]) -> None:
        for tool in body.get("tools", []):
            if isinstance(tool.get("input_schema"), dict):
                rec.tools[tool["name"]] = tool["input_schema"]
        choice = body.get("tool_choice") or {}
        if choice.get("type") == "tool":
            rec.forced_tool = choice["name"]
        elif choice.get("type") == "any" and rec.tools:
            rec.forced_tool = next(iter(rec.tools))
        rec.system = text_of(body.get("system", ""))
        users = [m for m in body["messages"] if m["role"] == "user"]
        rec.prompt = text_of(users[-1]["content"]) if users else ""

    def _render(
        self, rec: RecordedRequest, step: ToolCall | Text
    ) -> tuple[dict[str, Any], int, int]:
        content: list[dict[str, Any]] = []
        if isinstance(step, ToolCall):
            if step.text:
                content.append({"type": "text", "text": step.text})
            name = step.name or rec.forced_tool or next(iter(rec.tools), "tool")
            tool_input = step.raw if step.raw is not None else step.input
            content.append(
                {
                    "type": "tool_use",
                    "id": random_id("toolu_01"),
                    "name": name,
                    "input": tool_input,
                }
            )
            stop_reason = step.stop_reason or "tool_use"
        else:
            content.append({"type": "text", "text": step.text})
            stop_reason = step.stop_reason or "end_turn"
        input_tokens, output_tokens = tokens_used(step, rec.body, content)
        payload = {
            "id": random_id("msg_01"),
            "type": "message",
            "role": "assistant",
            "model": rec.body["model"],
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "cache_creation": {
                    "ephemeral_5m_input_tokens": 0,
                    "ephemeral_1h_input_tokens": 0,
                },
                "output_tokens": output_tokens,
                "server_tool_use": None,
                "service_tier": "standard",
            },
        }
        return payload, input_tokens, output_tokens

    def _error_body(self, fail: Fail, request_id: str) -> dict[str, Any]:
        default_type, default_message = _ERRORS.get(
            fail.status, ("api_error", f"HTTP {fail.status}")
        )
        return {
            "type": "error",
            "error": {
                "type": fail.error_type or default_type,
                "message": fail.message or default_message,
            },
            "request_id": request_id,
        }


@contextlib.contextmanager
def anthropic_fake(
    *, api_key: str | None = None, responder: Responder | None = None
) -> Iterator[AnthropicFake]:
    """A started AnthropicFake, stopped on exit (wrap it in a pytest fixture)."""
    with AnthropicFake(api_key=api_key, responder=responder) as fake:
        yield fake


if __name__ == "__main__":
    serve_forever(AnthropicFake())
