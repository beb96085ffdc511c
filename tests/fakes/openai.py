"""A loopback fake of an OpenAI-compatible chat-completions server (vLLM, Ollama,
llama.cpp server, OpenAI itself) for the test suite.

`POST /v1/chat/completions` with bearer auth, `tools` + `tool_choice`, answers whose
`choices[0].message.tool_calls[0].function.arguments` is a JSON *string*, `content`
null or "", `usage` {prompt_tokens, completion_tokens, total_tokens}, and OpenAI-style
error bodies `{"error": {"message", "type", "param", "code"}}`. The differences between
servers that a client must tolerate are switches:

- `tool_finish_reason`: what `finish_reason` says next to a tool call ("tool_calls" as
  OpenAI does; "stop" as several local servers do).
- `ignore_tools`: the server ignores `tools` and writes the JSON into `content`
  (some llama.cpp / Ollama setups).
- `empty_content`: `None` or `""` next to a tool call.
- `refuse_tools`: a request with `tools` is a 400 "<model> does not support tools"
  (Ollama with a model whose template has no tools); `refuse_response_format`: a
  request with a `response_format` json_schema is a 400 (older llama.cpp, LM Studio
  builds). A request with neither but a `<json_schema name="...">` block in its system
  prompt (the provider's prompt mode) is answered with that schema's JSON in `content`.
- `think`: reasoning written into `content` as `<think>...</think>` before the answer
  (DeepSeek-R1 / Qwen3 on Ollama or llama.cpp); `reasoning_content`: reasoning in the
  message's `reasoning_content` field (vLLM / llama.cpp reasoning parsers).
- `fence_json`: JSON answered in `content` is a fenced ```json block with prose before
  and after it.

- `context_tokens`: the model's context window. A request whose prompt (every token
  of its JSON body, 4 characters a token: more than any real tokenizer counts for the
  messages alone) plus its `max_tokens` exceeds it is refused with vLLM's 400
  ("This model's maximum context length is N tokens...", code
  `context_length_exceeded`); with `truncate_long` it is answered instead, as Ollama
  does, after dropping the start of the conversation (the system prompt is lost), and
  counted in `truncated`. `prompt_sizes` records every request's (prompt tokens,
  max_tokens); `max_prompt_tokens` the largest prompt seen, `refused_for_length` the
  refusals.
- `show`: the JSON Ollama's `POST /api/show` answers at the server root (`model_info`,
  `parameters`), and `ps` the `models` of its `GET /api/ps`; unset, both are 404 (a
  server that is not Ollama). `show_requests` counts the asks.

`structured_mode_of(request)` says which structured mode a recorded request used.

`base_url` ends in `/v1`, as these servers are configured:
`AsyncOpenAI(base_url=fake.base_url, api_key=fake.api_key)`. Scripting is described in
`tests.fakes.llm`. Run it as a process of its own with `python -m tests.fakes.openai`.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Iterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.fakes.llm import (
    Fail,
    RecordedRequest,
    Responder,
    ScriptedLLM,
    Text,
    ToolCall,
    random_id,
    serve_forever,
    canonical_json,
    count_tokens,
    text_of,
    tokens_used,
)

__all__ = ["OLLAMA_NO_TOOLS", "TOO_LONG", "OpenAIFake", "openai_fake", "structured_mode_of"]

# What Ollama answers (400) when the model's template has no tools.
OLLAMA_NO_TOOLS = "registry.ollama.ai/library/{model} does not support tools"
TOO_LONG = ("This model's maximum context length is {window} tokens. However, you requested {total} tokens "
            "({prompt} in the messages, {completion} in the completion). Please reduce the length of the messages "
            "or completion.")
NO_RESPONSE_FORMAT = "response_format type 'json_schema' is not supported by this server"
_SCHEMA_BLOCK = re.compile(r'<json_schema name="([^"]+)">\n(.*?)\n</json_schema>', re.S)


def structured_mode_of(request: RecordedRequest) -> str:
    """"tools", "json_schema", "prompt" (a schema block in the system prompt) or "text"."""
    body = request.body if isinstance(request.body, dict) else {}
    if body.get("tools"):
        return "tools"
    if (body.get("response_format") or {}).get("type") == "json_schema":
        return "json_schema"
    system = "\n".join(text_of(m.get("content")) for m in body.get("messages") or []
                       if isinstance(m, dict) and m.get("role") in ("system", "developer"))
    return "prompt" if _SCHEMA_BLOCK.search(system) else "text"

# Error `type`, `code` and default message per status, as OpenAI sends them.
_ERRORS: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided."),
    403: (
        "invalid_request_error",
        "permission_denied",
        "You are not allowed to access this resource.",
    ),
    404: (
        "invalid_request_error",
        "model_not_found",
        "The model does not exist or you do not have access to it.",
    ),
    429: (
        "requests",
        "rate_limit_exceeded",
        "Rate limit reached for requests. Please try again later.",
    ),
    500: (
        "server_error",
        None,
        "The server had an error while processing your request. Sorry about that!",
    ),
    503: ("server_error", None, "The server is overloaded or not ready yet."),
}


class OpenAIFake(ScriptedLLM):
    """Fake chat-completions server. `base_url` is `http://127.0.0.1:<port>/v1`."""

    routes_path = "/v1/chat/completions"
    key_prefix = "sk-fake-"
    request_id_prefix = "req_"
    _id_header = "x-request-id"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        responder: Responder | None = None,
        require_auth: bool = True,
        tool_finish_reason: str = "tool_calls",
        ignore_tools: bool = False,
        empty_content: str | None = None,
        refuse_tools: bool = False,
        refuse_response_format: bool = False,
        think: str | None = None,
        reasoning_content: str | None = None,
        fence_json: bool = False,
        context_tokens: int | None = None,
        truncate_long: bool = False,
        show: dict[str, Any] | None = None,
        ps: list[dict[str, Any]] | None = None,
    ) -> None:
        self.show = show
        self.ps = ps
        self.show_requests = 0
        super().__init__(api_key=api_key, responder=responder)
        self.context_tokens = context_tokens
        self.truncate_long = truncate_long
        self.prompt_sizes: list[tuple[int, int]] = []
        self.refused_for_length = 0
        self.truncated = 0
        # Local servers (Ollama, llama.cpp) accept any key; OpenAI and vLLM with
        # --api-key check it.
        self.require_auth = require_auth
        self.tool_finish_reason = tool_finish_reason
        self.ignore_tools = ignore_tools
        self.empty_content = empty_content
        self.refuse_tools = refuse_tools
        self.refuse_response_format = refuse_response_format
        self.think = think
        self.reasoning_content = reasoning_content
        self.fence_json = fence_json

    @property
    def base_url(self) -> str:
        return f"{super().base_url}/v1"

    def env(self) -> dict[str, str]:
        return {
            "LLM_PROVIDER": "openai",
            "OPENAI_BASE_URL": self.base_url,
            "OPENAI_API_KEY": self.api_key,
        }

    def _authorized(self, headers: dict[str, str]) -> bool:
        return (
            not self.require_auth
            or headers.get("authorization") == f"Bearer {self.api_key}"
        )

    def _validate(self, headers: dict[str, str], body: dict[str, Any]) -> str | None:
        if not isinstance(body.get("model"), str) or not body["model"]:
            return "you must provide a model parameter"
        messages = body.get("messages")
        if messages is None:
            return "Missing required parameter: 'messages'."
        if not isinstance(messages, list) or not messages:
            return "Invalid 'messages': empty array. Expected an array with minimum length 1."
        for i, m in enumerate(messages):
            if not isinstance(m, dict) or "role" not in m:
                return f"Missing required parameter: 'messages[{i}].role'."
        if body.get("stream"):
            return "stream: this fake does not implement streaming"
        too_long = self._window_check(body)
        if too_long is not None:
            return too_long
        if self.refuse_tools and body.get("tools"):
            return OLLAMA_NO_TOOLS.format(model=body["model"])
        fmt = body.get("response_format")
        if self.refuse_response_format and isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            return NO_RESPONSE_FORMAT
        tools = body.get("tools") or []
        names = [
            t.get("function", {}).get("name") for t in tools if isinstance(t, dict)
        ]
        if any(not n for n in names):
            return "Missing required parameter: 'tools[].function.name'."
        choice = body.get("tool_choice")
        if choice is not None and choice != "none" and not names:
            return "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified."
        if isinstance(choice, dict):
            name = (choice.get("function") or {}).get("name")
            if choice.get("type") != "function" or name not in names:
                return f"Invalid value for 'tool_choice': no function named {name!r} was specified in 'tools'."
        elif choice not in (None, "none", "auto", "required"):
            return "Invalid value for 'tool_choice': expected 'none', 'auto', 'required' or a function."
        return None

    def _window_check(self, body: dict[str, Any]) -> str | None:
        """Record the request's size; vLLM's refusal when it does not fit the window (or,
        as Ollama, the conversation's start dropped: ``body`` is changed in place)."""
        prompt = count_tokens(canonical_json(body))
        completion = int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
        with self._lock:
            self.prompt_sizes.append((prompt, completion))
        if self.context_tokens is None or prompt + completion <= self.context_tokens:
            return None
        if self.truncate_long:
            with self._lock:
                self.truncated += 1
            body["messages"] = [m for m in body["messages"] if m.get("role") not in ("system", "developer")]
            return None
        with self._lock:
            self.refused_for_length += 1
        return TOO_LONG.format(window=self.context_tokens, total=prompt + completion, prompt=prompt,
                               completion=completion)

    @property
    def max_prompt_tokens(self) -> int:
        with self._lock:
            return max((p for p, _ in self.prompt_sizes), default=0)

    def _app(self) -> Starlette:
        app = super()._app()
        app.router.routes += [Route("/api/show", self._show, methods=["POST"]),
                              Route("/api/ps", self._ps, methods=["GET"])]
        return app

    async def _show(self, request: Request) -> Response:
        self.show_requests += 1
        if self.show is None:
            return JSONResponse({"error": "not found"}, status_code=404)
        body = json.loads(await request.body() or b"{}")
        if not isinstance(body, dict) or not body.get("model"):
            return JSONResponse({"error": "model is required"}, status_code=400)
        return JSONResponse(self.show)

    async def _ps(self, request: Request) -> Response:
        if self.ps is None:
            return JSONResponse({"error": "not found"}, status_code=404)
        return JSONResponse({"models": self.ps})

    def _describe(self, rec: RecordedRequest, body: dict[str, Any]) -> None:
        for tool in body.get("tools") or []:
            fn = tool.get("function", {})
            rec.tools[fn["name"]] = fn.get("parameters") or {
                "type": "object",
                "properties": {},
            }
        choice = body.get("tool_choice")
        if isinstance(choice, dict):
            rec.forced_tool = choice["function"]["name"]
        elif choice == "required" and rec.tools:
            rec.forced_tool = next(iter(rec.tools))
        fmt = body.get("response_format") or {}
        if rec.forced_tool is None and fmt.get("type") == "json_schema":
            spec = fmt.get("json_schema") or {}
            name = spec.get("name") or "response"
            rec.tools[name] = spec.get("schema") or {"type": "object"}
            rec.forced_tool = name
            rec.answer_in_content = True
        messages = body["messages"]
        rec.system = "\n".join(
            text_of(m.get("content"))
            for m in messages
            if m["role"] in ("system", "developer")
        )
        block = _SCHEMA_BLOCK.search(rec.system)
        if rec.forced_tool is None and not rec.tools and block:
            rec.tools[block.group(1)] = json.loads(block.group(2))
            rec.forced_tool = block.group(1)
            rec.answer_in_content = True
        users = [m for m in messages if m["role"] == "user"]
        rec.prompt = text_of(users[-1].get("content")) if users else ""

    def _render(
        self, rec: RecordedRequest, step: ToolCall | Text
    ) -> tuple[dict[str, Any], int, int]:
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None,
            "refusal": None,
        }
        if isinstance(step, ToolCall):
            arguments = step.raw if step.raw is not None else json.dumps(step.input)
            if self.ignore_tools or rec.answer_in_content:
                message["content"] = self._thought(self._fenced(arguments))
                finish_reason = step.stop_reason or "stop"
            else:
                name = step.name or rec.forced_tool or next(iter(rec.tools), "tool")
                message["content"] = (
                    step.text if step.text is not None else self.empty_content
                )
                if self.think is not None:
                    message["content"] = self._thought(message["content"] or "")
                message["tool_calls"] = [
                    {
                        "id": random_id("call_"),
                        "type": "function",
                        "function": {"name": name, "arguments": arguments},
                    }
                ]
                finish_reason = step.stop_reason or self.tool_finish_reason
        else:
            message["content"] = self._thought(step.text)
            finish_reason = step.stop_reason or "stop"
        if self.reasoning_content is not None:
            message["reasoning_content"] = self.reasoning_content
        prompt_tokens, completion_tokens = tokens_used(step, rec.body, message)
        payload = {
            "id": random_id("chatcmpl-"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": rec.body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
            "system_fingerprint": None,
        }
        return payload, prompt_tokens, completion_tokens

    def _thought(self, content: str) -> str:
        return content if self.think is None else f"<think>\n{self.think}\n</think>\n\n{content}"

    def _fenced(self, arguments: str) -> str:
        if not self.fence_json:
            return arguments
        return f"Sure! Here is the answer:\n\n```json\n{arguments}\n```\n\nLet me know if you need anything else."

    def _error_body(self, fail: Fail, request_id: str) -> dict[str, Any]:
        default_type, code, default_message = _ERRORS.get(
            fail.status, ("server_error", None, f"HTTP {fail.status}")
        )
        if fail.message and fail.message.startswith(TOO_LONG[:36]):
            code = "context_length_exceeded"
        return {
            "error": {
                "message": fail.message or default_message,
                "type": fail.error_type or default_type,
                "param": None,
                "code": code,
            }
        }


@contextlib.contextmanager
def openai_fake(**options: Any) -> Iterator[OpenAIFake]:
    """A started OpenAIFake (``options`` as its constructor takes them), stopped on exit
    (wrap it in a pytest fixture)."""
    with OpenAIFake(**options) as fake:
        yield fake


if __name__ == "__main__":
    serve_forever(OpenAIFake())
