"""Shared machinery of the fake LLM servers (Anthropic Messages, OpenAI chat completions).

A fake answers each request with the next *scripted step* of its queue; when the
queue is empty its `responder` decides. The default responder, `schema_responder`,
synthesises a minimal input that validates against the forced tool's JSON schema
(words taken from the prompt), so a whole multi-stage job can run against a fake
without per-call scripting.

Token usage is deterministic: input tokens from the request body's length, output
tokens from the generated content's length (about 4 characters a token). The fake
keeps totals of what it *delivered*, so a test can check that the system's own
accounting equals what the provider reported. Requests the client abandoned (a
scripted delay past the client's timeout) and error answers are not billed, as with
the real APIs.

What the fakes deliberately do not do: streaming (`stream: true` is a 400), model
names are not checked, JSON-schema `pattern`/`multipleOf` are not honoured by the
synthesiser (`tests.fakes.llm_schema`).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import string
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.fakes.llm_schema import prompt_words, synthesize
from tests.fakes.server import ServedFake

__all__ = [
    "Delay",
    "Fail",
    "RecordedRequest",
    "ScriptedLLM",
    "Step",
    "Text",
    "ToolCall",
    "count_tokens",
    "prompt_words",
    "random_id",
    "schema_responder",
    "serve_forever",
    "synthesize",
    "text_of",
    "tokens_used",
]


# --- scripted steps -------------------------------------------------------------------


@dataclass(frozen=True)
class ToolCall:
    """Answer with a tool call.

    `input`: the tool input, normally a dict; any JSON value simulates junk (a list, a
    dict that misses required fields, a string). `raw`: verbatim argument text; the
    OpenAI fake sends it as `function.arguments` (e.g. truncated JSON), the Anthropic
    fake as the `input` value (a string, which only a broken proxy would send).
    `name`: defaults to the forced tool (or the first tool). `stop_reason`: sent
    verbatim in the API's vocabulary (Anthropic `stop_reason`, OpenAI `finish_reason`);
    default `tool_use` / the OpenAI fake's `tool_finish_reason`. `text`: prose next to
    the call (an Anthropic text block before the tool_use block; OpenAI
    `message.content`). `input_tokens` / `output_tokens` override the derived usage.
    """

    input: Any = None
    raw: str | None = None
    name: str | None = None
    stop_reason: str | None = None
    text: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True)
class Text:
    """Answer with plain text (stop_reason `end_turn` / finish_reason `stop` by default)."""

    text: str
    stop_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True)
class Fail:
    """Answer with HTTP `status` and the API's real error body.

    `retry_after` (seconds, may be fractional) sets the `retry-after` header, which the
    SDKs honour. `message` / `error_type` override the body's defaults for the status.
    """

    status: int
    retry_after: float | None = None
    message: str | None = None
    error_type: str | None = None


@dataclass(frozen=True)
class Delay:
    """Wait `seconds` before answering with `then` (or, if None, the responder's step).

    If the client gives up meanwhile (its timeout), the request is recorded as
    abandoned, nothing is billed, and the step after the delay is not consumed.
    """

    seconds: float
    then: Step | None = None


Step = ToolCall | Text | Fail | Delay


# --- recorded requests ----------------------------------------------------------------


@dataclass
class RecordedRequest:
    """One request as the fake saw it, plus how it was answered.

    The API-specific parts are normalised by the fake: `tools` maps tool name to its
    JSON schema, `forced_tool` is the tool the request obliges the model to call
    (tool_choice naming one, or "any"/"required" with exactly the first tool), `system`
    and `prompt` (the last user message's text).
    """

    path: str
    headers: dict[str, str]
    body: Any
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    forced_tool: str | None = None
    system: str = ""
    prompt: str = ""
    # The request asks for JSON in the message text (OpenAI `response_format` with a
    # json_schema) rather than a tool call; `tools[forced_tool]` then holds that schema.
    answer_in_content: bool = False
    status: int | None = None
    step: Step | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    abandoned: bool = False
    # time.monotonic() on arrival: lets a test check that a client waited `retry-after`.
    received_at: float = field(default_factory=time.monotonic)

    @property
    def tool_schema(self) -> dict[str, Any] | None:
        return self.tools.get(self.forced_tool) if self.forced_tool else None


Responder = Callable[[RecordedRequest], Step]


# --- token accounting and ids -----------------------------------------------------------


def text_of(content: Any) -> str:
    """The text of a message ``content``: a string, or a list of content blocks (Anthropic)
    or parts (OpenAI), whose ``{"type": "text", "text": ...}`` items are joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def count_tokens(text: str) -> int:
    """A deterministic token count: about 4 characters a token, at least 1 (the real
    APIs bill at least one output token even for an empty answer)."""
    return max(1, (len(text) + 3) // 4)


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def tokens_used(step: ToolCall | Text, body: dict[str, Any], answer: Any) -> tuple[int, int]:
    """(input, output) tokens of one answer: the step's own counts where it scripts
    them, else counts of the request ``body`` and of the ``answer`` as JSON."""
    input_tokens = step.input_tokens if step.input_tokens is not None else count_tokens(canonical_json(body))
    output_tokens = step.output_tokens if step.output_tokens is not None else count_tokens(canonical_json(answer))
    return input_tokens, output_tokens


_ALPHABET = string.ascii_letters + string.digits


def random_id(prefix: str, length: int = 24) -> str:
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(length))


# --- default responder ------------------------------------------------------------------


def schema_responder(request: RecordedRequest) -> Step:
    """The default responder: a schema-valid call of the forced tool, or else a short
    text made of the prompt's words."""
    if request.forced_tool is not None:
        schema = request.tools.get(request.forced_tool) or {"type": "object"}
        return ToolCall(input=synthesize(schema, request.prompt))
    words = prompt_words(request.prompt)
    return Text(text=" ".join(words[:40]) + ".")


# --- the scripted server --------------------------------------------------------------


class ScriptedLLM(ServedFake):
    """Base of the fake LLM servers: script queue, responder, recording, totals, and the
    loopback HTTP server. Subclasses provide the wire format: `routes_path`,
    `_authorized`, `_validate`, `_describe`, `_render`, `_error_body`, `_id_header`."""

    routes_path: str = "/"
    key_prefix: str = "fake-"
    request_id_prefix: str = "req_"

    def __init__(
        self, *, api_key: str | None = None, responder: Responder | None = None
    ) -> None:
        self.api_key = api_key or random_id(self.key_prefix, 32)
        self.responder: Responder = responder or schema_responder
        self.requests: list[RecordedRequest] = []
        # Exceptions raised by a responder or while rendering a scripted step: the
        # client got a 500 that it must not retry; a test can assert this stays empty.
        self.errors: list[Exception] = []
        self.total_input_tokens = 0
        self.total_output_tokens = 0
        self._script: deque[Step] = deque()
        self._lock = threading.Lock()
        self.app = self._app()

    # scripting -------------------------------------------------------------------------

    def script(self, *steps: Step) -> Self:
        """Append steps to the queue; each request past auth/validation takes the next."""
        with self._lock:
            self._script.extend(steps)
        return self

    def tool(self, input: Any = None, **kwargs: Any) -> Self:
        return self.script(ToolCall(input=input, **kwargs))

    def text(self, text: str, **kwargs: Any) -> Self:
        return self.script(Text(text=text, **kwargs))

    def fail(
        self,
        status: int,
        *,
        retry_after: float | None = None,
        message: str | None = None,
    ) -> Self:
        return self.script(
            Fail(status=status, retry_after=retry_after, message=message)
        )

    def delay(self, seconds: float, then: Step | None = None) -> Self:
        return self.script(Delay(seconds=seconds, then=then))

    @property
    def pending(self) -> int:
        """Scripted steps not yet consumed."""
        with self._lock:
            return len(self._script)

    def reset(self) -> None:
        """Forget the script, the recorded requests and the totals."""
        with self._lock:
            self._script.clear()
            self.requests.clear()
            self.errors.clear()
            self.total_input_tokens = 0
            self.total_output_tokens = 0

    # observations ----------------------------------------------------------------------

    @property
    def delivered(self) -> list[RecordedRequest]:
        """Requests answered with a 200 that the client was still waiting for."""
        with self._lock:
            return [r for r in self.requests if r.status == 200 and not r.abandoned]

    def env(self) -> dict[str, str]:
        """Environment variables that point the system's services at this fake."""
        raise NotImplementedError

    @property
    def total_tokens(self) -> int:
        return self.total_input_tokens + self.total_output_tokens

    # lifecycle -------------------------------------------------------------------------


    # HTTP ------------------------------------------------------------------------------

    def _app(self) -> Starlette:
        return Starlette(
            routes=[
                Route(self.routes_path, self._handle, methods=["POST"]),
                Route("/_fake/totals", self._totals, methods=["GET"]),
            ]
        )

    async def _totals(self, request: Request) -> Response:
        """Totals over HTTP, for a fake run as its own process (bench scripts)."""
        with self._lock:
            return JSONResponse(
                {
                    "requests": len(self.requests),
                    "delivered": sum(
                        1 for r in self.requests if r.status == 200 and not r.abandoned
                    ),
                    "input_tokens": self.total_input_tokens,
                    "output_tokens": self.total_output_tokens,
                }
            )

    async def _handle(self, request: Request) -> Response:
        raw = await request.body()
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        rec = RecordedRequest(path=request.url.path, headers=headers, body=body)
        with self._lock:
            self.requests.append(rec)
        if not self._authorized(headers):
            return self._answer_error(rec, Fail(401))
        if not isinstance(body, dict):
            return self._answer_error(
                rec, Fail(400, message="The request body is not valid JSON.")
            )
        problem = self._validate(headers, body)
        if problem is not None:
            return self._answer_error(rec, Fail(400, message=problem))
        self._describe(rec, body)
        try:
            return await self._answer(request, rec)
        # A bug in a test's responder or script, not an API failure: report it in the
        # answer and in fake.errors instead of letting the SDK retry a bare 500.
        except Exception as exc:  # noqa: BLE001
            self.errors.append(exc)
            fail = Fail(500, message=f"fake server bug (see fake.errors): {exc!r}")
            return self._answer_error(rec, fail, should_retry=False)

    async def _answer(self, request: Request, rec: RecordedRequest) -> Response:
        step = self._next_step(rec)
        while isinstance(step, Delay):
            if await self._client_left_during(request, step.seconds):
                rec.abandoned = True
                rec.status = 499
                return Response(status_code=499)
            step = step.then if step.then is not None else self.responder(rec)
        if isinstance(step, Fail):
            return self._answer_error(rec, step)
        payload, input_tokens, output_tokens = self._render(rec, step)
        with self._lock:
            rec.step = step
            rec.status = 200
            rec.input_tokens = input_tokens
            rec.output_tokens = output_tokens
            self.total_input_tokens += input_tokens
            self.total_output_tokens += output_tokens
        return JSONResponse(
            payload, headers={self._id_header: random_id(self.request_id_prefix)}
        )

    def _next_step(self, rec: RecordedRequest) -> Step:
        with self._lock:
            if self._script:
                return self._script.popleft()
        return self.responder(rec)

    @staticmethod
    async def _client_left_during(request: Request, seconds: float) -> bool:
        """Sleep `seconds`, returning early (True) if the client disconnected."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while (left := deadline - loop.time()) > 0:
            await asyncio.sleep(min(0.05, left))
            if await request.is_disconnected():
                return True
        return False

    def _answer_error(
        self, rec: RecordedRequest, fail: Fail, *, should_retry: bool | None = None
    ) -> Response:
        rec.step = fail
        rec.status = fail.status
        request_id = random_id(self.request_id_prefix)
        headers = {self._id_header: request_id}
        if should_retry is not None:
            # Both SDKs obey this header; a broken test script should fail fast.
            headers["x-should-retry"] = "true" if should_retry else "false"
        if fail.retry_after is not None:
            headers["retry-after"] = f"{fail.retry_after:g}"
        body = self._error_body(fail, request_id)
        return JSONResponse(body, status_code=fail.status, headers=headers)

    # wire format hooks -----------------------------------------------------------------

    _id_header = "request-id"

    def _authorized(self, headers: dict[str, str]) -> bool:
        raise NotImplementedError

    def _validate(self, headers: dict[str, str], body: dict[str, Any]) -> str | None:
        raise NotImplementedError

    def _describe(self, rec: RecordedRequest, body: dict[str, Any]) -> None:
        raise NotImplementedError

    def _render(
        self, rec: RecordedRequest, step: ToolCall | Text
    ) -> tuple[dict[str, Any], int, int]:
        raise NotImplementedError

    def _error_body(self, fail: Fail, request_id: str) -> dict[str, Any]:
        raise NotImplementedError


def serve_forever(fake: ScriptedLLM) -> None:
    """Run `fake` as a process of its own until interrupted, printing the environment
    that points the system at it as one JSON line (for bench scripts and manual runs)."""
    fake.start()
    print(json.dumps(fake.env()), flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        fake.stop()
