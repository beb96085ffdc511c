"""Context windows: how many tokens a model reads at once, and prompts packed to fit.

A prompt longer than the window is never sent. Claude and OpenAI refuse one (a 400);
Ollama silently keeps its *end*, so the system prompt and the instructions are the
part lost, and the answer is made from data alone. So every call is checked before it
leaves (:meth:`shared.llm.engine.JobLLM.structured`: the estimated input plus room for
the answer must fit, else :class:`LLMContextExceeded`), and the stages pack their
prompts to fit in advance: fewer sources, passages or claims per call
(:func:`pack`), a long source in parts. A request the server still refuses for length
(the estimate erred low) raises the same error, and a batch is split in two and asked
again (:func:`split_on_overflow`).

The window is ``LLM_CONTEXT_TOKENS`` when set; else the provider's: Claude 200,000;
api.openai.com 128,000; any other OpenAI-compatible server is asked once per process
(:func:`discover_window`: Ollama's ``/api/ps`` for the loaded model's context, else
``/api/show`` for the ``num_ctx`` its Modelfile sets, else Ollama's default), and one
that does not say is given :data:`UNKNOWN_WINDOW`, logged once.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from shared.llm.budget import CHARS_PER_TOKEN, ESTIMATE_MARGIN, MIN_OUTPUT_TOKENS, estimate_tokens
from shared.llm.providers import LLMContextExceeded

__all__ = ["ANTHROPIC_WINDOW", "OLLAMA_DEFAULT_WINDOW", "OPENAI_WINDOW", "UNKNOWN_WINDOW", "ContextWindow",
           "LLMContextExceeded", "answer_room", "chars_in", "discover_window", "fixed_texts", "pack", "prompt_room",
           "split_on_overflow"]

log = logging.getLogger("shared.llm.engine")  # one logger for the layer

ANTHROPIC_WINDOW = 200_000
OPENAI_WINDOW = 128_000  # api.openai.com's current chat models (GPT-4o, GPT-4.1, o3, o4-mini: 128k or more)
OLLAMA_DEFAULT_WINDOW = 4_096  # Ollama's num_ctx unless the Modelfile or OLLAMA_CONTEXT_LENGTH says otherwise
UNKNOWN_WINDOW = 8_192  # a server that does not say: small enough for most local setups
MAX_SPLITS = 6  # halvings of one batch refused for length: 64 parts at most

T = TypeVar("T")
R = TypeVar("R")


def answer_room(window: int, max_tokens: int) -> int:
    """Output tokens a call asking for ``max_tokens`` is given in ``window``: all of
    them when they take at most half the window, else half of it (a prompt must fit
    too), never less than the floor below which a structured answer is cut off."""
    return max(min(max_tokens, window // 2), min(max_tokens, MIN_OUTPUT_TOKENS))


def prompt_room(window: int, max_tokens: int) -> int:
    """Input tokens (as :func:`estimate_tokens` counts them) a call may send."""
    return window - answer_room(window, max_tokens)


def chars_in(tokens: int) -> int:
    """Characters of plain text that :func:`estimate_tokens` counts as at most ``tokens``
    (the request overhead aside)."""
    return max(0, math.floor(tokens * CHARS_PER_TOKEN / ESTIMATE_MARGIN) - 1)


def pack(items: Sequence[T], render: Callable[[Sequence[T]], Sequence[str]], *, room: int,
         most: int | None = None) -> list[list[T]]:
    """``items`` in order, in groups whose rendered request (``render(group)``: the
    texts :func:`estimate_tokens` counts, fixed parts included) fits in ``room`` tokens,
    at most ``most`` items a group. An item too big alone is a group of its own: the
    caller cuts it or answers it offline (the engine refuses to send it)."""
    groups: list[list[T]] = []
    group: list[T] = []
    for item in items:
        trial = [*group, item]
        if group and ((most is not None and len(trial) > most) or estimate_tokens(*render(trial)) > room):
            groups.append(group)
            trial = [item]
        group = trial
    if group:
        groups.append(group)
    return groups


async def split_on_overflow(items: Sequence[T], run: Callable[[list[T]], Awaitable[R]], *,
                            what: str = "batch", _depth: int = 0) -> list[tuple[list[T], R]]:
    """``run(items)``, or, when the prompt is refused as too long for the window
    (:class:`LLMContextExceeded`, before sending or by the server), ``run`` on each half,
    and so on: each part with its result, in order. A single item that is still too
    long, or a batch split :data:`MAX_SPLITS` times, raises the error to the caller."""
    batch = list(items)
    try:
        return [(batch, await run(batch))]
    except LLMContextExceeded as exc:
        if len(batch) < 2 or _depth >= MAX_SPLITS:
            raise
        log.warning("%s of %d items too long for the context window (%s): asking in two halves", what, len(batch),
                    exc)
        mid = len(batch) // 2
        first = await split_on_overflow(batch[:mid], run, what=what, _depth=_depth + 1)
        return first + await split_on_overflow(batch[mid:], run, what=what, _depth=_depth + 1)


def fixed_texts(schema: type[BaseModel], *, system: str, tool_name: str, tool_description: str = "") -> tuple[str, ...]:
    """What a structured call sends besides its prompt, as the engine estimates it: the
    system prompt, the schema and the tool's description."""
    return system, json.dumps(schema.model_json_schema()), tool_description or schema.__doc__ or tool_name


class ContextWindow:
    """One engine's window: its provider's own setting (``OPENAI_CONTEXT_TOKENS``,
    ``ANTHROPIC_CONTEXT_TOKENS``), else ``configured`` (``LLM_CONTEXT_TOKENS``) when
    positive, else learnt from the provider on first use (once per process; concurrent
    first calls wait for one answer). No provider (offline): no limit."""

    def __init__(self, provider: Any, configured: int = 0) -> None:
        self._provider = provider
        configured = getattr(provider, "context_tokens", 0) or configured
        self._tokens: int | None = configured if configured > 0 else None
        self._lock = asyncio.Lock()

    async def tokens(self) -> int:
        if self._tokens is not None:
            return self._tokens
        if self._provider is None:
            return 1 << 30
        async with self._lock:
            if self._tokens is None:
                tokens, source = await discover_window(self._provider)
                log.info("context window of %s:%s: %d tokens (%s)", self._provider.name, self._provider.model, tokens,
                         source)
                self._tokens = tokens
        return self._tokens

    def learn(self, said: int | None, estimate: int) -> None:
        """The server refused a request of ``estimate`` input tokens for length: its window
        is the one it ``said`` (None: it did not say, and it is smaller than that request
        with its answer): used from now on instead of the one assumed, and logged."""
        assumed = self._tokens
        if assumed is None:
            return
        smaller = said if said is not None and said > 0 else max(MIN_OUTPUT_TOKENS * 4, estimate)
        if smaller < assumed:
            log.warning("the model server refused a prompt as too long for its context window%s; assumed %d tokens "
                        "(LLM_CONTEXT_TOKENS), using %d from now on", f" of {said} tokens" if said else "", assumed,
                        smaller)
            self._tokens = smaller

    async def fits(self, *texts: str, max_tokens: int) -> bool:
        """A request made of ``texts`` leaves room for an answer of ``max_tokens``."""
        return estimate_tokens(*texts) <= prompt_room(await self.tokens(), max_tokens)

    async def room(self, max_tokens: int) -> int:
        """Input tokens a call asking for ``max_tokens`` may send."""
        return prompt_room(await self.tokens(), max_tokens)

    async def limit(self, estimate: int, max_tokens: int, *, stage: str) -> int:
        """The output allowance of a call whose input is ``estimate`` tokens: ``max_tokens``,
        less when the window has room for less (never below :func:`answer_room`); raises
        :class:`LLMContextExceeded` when the prompt leaves too little, before anything is sent."""
        window = await self.tokens()
        if estimate > prompt_room(window, max_tokens):
            log.warning("a %s prompt of about %d tokens does not fit the context window of %d with room for an "
                        "answer of %d: not sent", stage, estimate, window, answer_room(window, max_tokens))
            raise LLMContextExceeded(f"a prompt of about {estimate} tokens does not fit the context window of "
                                     f"{window} (LLM_CONTEXT_TOKENS) with room for the answer",
                                     window=window, estimate=estimate)
        return min(max_tokens, window - estimate)


# -- what the server says --------------------------------------------------------------


async def discover_window(provider: Any, *, timeout_s: float = 5.0) -> tuple[int, str]:
    """(the window of ``provider``'s model, where that came from), for a provider with
    no ``LLM_CONTEXT_TOKENS``: Claude's and OpenAI's known windows; an Ollama server
    asked; else :data:`UNKNOWN_WINDOW`."""
    if provider.name == "anthropic":
        return ANTHROPIC_WINDOW, "Claude's window"
    base = (getattr(provider, "base_url", None) or "").rstrip("/")
    if not base or "api.openai.com" in base:
        return OPENAI_WINDOW, "OpenAI's window"
    root = base[: -len("/v1")] if base.endswith("/v1") else base
    try:
        found = await _ask_ollama(root, provider.model, timeout_s=timeout_s)
    except Exception as exc:  # noqa: BLE001 - any failure to ask means "not said": the default, logged
        log.info("context window of %s at %s not learnt from the server (%s: %s)", provider.model, root,
                 type(exc).__name__, exc)
        found = None
    if found is not None:
        return found
    return UNKNOWN_WINDOW, "the default for a server that does not say (LLM_CONTEXT_TOKENS sets it)"


async def _ask_ollama(root: str, model: str, *, timeout_s: float) -> tuple[int, str] | None:
    """The window Ollama runs ``model`` with: the loaded model's context (``/api/ps``),
    else the ``num_ctx`` its Modelfile sets (``/api/show``), else Ollama's default capped
    at the model's trained length; None from a server that is not Ollama."""
    import httpx

    async with httpx.AsyncClient(timeout=timeout_s) as client:
        ps = await client.get(f"{root}/api/ps")
        if ps.status_code == 200:
            for m in (ps.json() or {}).get("models") or []:
                names = {m.get("name"), m.get("model")}
                if names & {model, f"{model}:latest"} and int(m.get("context_length") or 0) > 0:
                    return int(m["context_length"]), "Ollama's /api/ps (the loaded model)"
        show = await client.post(f"{root}/api/show", json={"model": model})
        if show.status_code != 200:
            return None
        info = show.json() or {}
    for line in str(info.get("parameters") or "").splitlines():
        key, _, value = line.strip().partition(" ")
        if key == "num_ctx" and value.strip().isdigit():
            return int(value.strip()), "Ollama's /api/show (the Modelfile's num_ctx)"
    trained = [int(v) for k, v in (info.get("model_info") or {}).items()
               if k.endswith(".context_length") and str(v).isdigit()]
    if not trained:
        return None
    # The model could read more, but Ollama runs it with OLLAMA_CONTEXT_LENGTH (4,096 by
    # default on small GPUs) and cuts a longer prompt silently: the smaller is the window.
    return min(min(trained), OLLAMA_DEFAULT_WINDOW), (
        "Ollama's default num_ctx (set LLM_CONTEXT_TOKENS to the server's OLLAMA_CONTEXT_LENGTH)")
