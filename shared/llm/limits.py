"""What a model server can take: its context window, calls in flight, time per call.

A hosted API answers many calls at once within a minute; a local server (Ollama,
llama.cpp) generates one or two answers at a time, each maybe minutes long on a CPU,
and queues or times out the rest. So the limits are per provider: ``OPENAI_*`` for the
OpenAI-compatible server, ``ANTHROPIC_*`` for Claude, 0 meaning the layer-wide
``LLM_MAX_CONCURRENCY`` / ``LLM_TIMEOUT_S`` / ``LLM_CONTEXT_TOKENS`` (so a local model
can digest in a small window while Claude writes in its own). A provider's concurrency limit holds
across every engine of a process that calls the same server (the default model, the
role models, the judge, the council): they share one semaphore per server endpoint,
on top of each engine's own ``LLM_MAX_CONCURRENCY``.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any

from pydantic import BaseModel, Field

__all__ = ["ProviderLimits", "Slots", "call_limits"]


class ProviderLimits(BaseModel):
    """The per-provider settings of :class:`shared.settings.StageSettings` (mixed in)."""

    llm_context_tokens: int = Field(0, ge=0)
    """Every model's context window in tokens; 0: the provider's (README, *Context windows*)."""

    openai_context_tokens: int = Field(0, ge=0)
    """The OpenAI-compatible server's models' window, over LLM_CONTEXT_TOKENS; 0: that, else asked."""

    anthropic_context_tokens: int = Field(0, ge=0)
    """Claude's window, over LLM_CONTEXT_TOKENS; 0: that, else 200,000."""

    openai_max_concurrency: int = Field(0, ge=0)
    """Calls in flight to the OpenAI-compatible server per process, all roles together; 0: LLM_MAX_CONCURRENCY."""

    openai_timeout_s: float = Field(0.0, ge=0)
    """Time limit of one call to the OpenAI-compatible server; 0: LLM_TIMEOUT_S."""

    anthropic_max_concurrency: int = Field(0, ge=0)
    """Calls in flight to Claude per process, all roles together; 0: LLM_MAX_CONCURRENCY."""

    anthropic_timeout_s: float = Field(0.0, ge=0)
    """Time limit of one call to Claude; 0: LLM_TIMEOUT_S."""


def call_limits(kind: str, settings: Any) -> dict[str, Any]:
    """A provider's ``timeout_s``, ``max_in_flight`` (0: no limit of its own) and
    ``context_tokens`` (0: LLM_CONTEXT_TOKENS, else the provider's) for ``kind``
    (anthropic or openai) from ``settings``."""
    timeout = getattr(settings, f"{kind}_timeout_s", 0) or settings.llm_timeout_s
    return {"timeout_s": timeout, "max_in_flight": getattr(settings, f"{kind}_max_concurrency", 0) or 0,
            "context_tokens": getattr(settings, f"{kind}_context_tokens", 0) or 0}


# One semaphore per server endpoint and event loop (tests run a loop each; a semaphore
# belongs to the loop that first waits on it).
_ENDPOINTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str], asyncio.Semaphore]] = \
    weakref.WeakKeyDictionary()


def _endpoint_slots(provider: Any) -> asyncio.Semaphore | None:
    limit = getattr(provider, "max_in_flight", 0) if provider is not None else 0
    if not limit:
        return None
    key = (provider.name, str(getattr(provider, "base_url", None) or ""))
    per_loop = _ENDPOINTS.setdefault(asyncio.get_running_loop(), {})
    if key not in per_loop:
        per_loop[key] = asyncio.Semaphore(limit)
    return per_loop[key]


class Slots:
    """An engine's slots: its own ``LLM_MAX_CONCURRENCY`` and, when its provider has a
    limit of its own, the provider's endpoint's, shared with every engine calling it."""

    def __init__(self, max_concurrency: int, provider: Any) -> None:
        self._own = asyncio.Semaphore(max_concurrency)
        self._provider = provider

    async def __aenter__(self) -> None:
        await self._own.acquire()
        shared = _endpoint_slots(self._provider)
        if shared is not None:
            try:
                await shared.acquire()
            except BaseException:
                self._own.release()
                raise

    async def __aexit__(self, *exc: object) -> None:
        shared = _endpoint_slots(self._provider)
        if shared is not None:
            shared.release()
        self._own.release()
