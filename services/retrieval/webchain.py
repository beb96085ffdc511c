"""The web method's searches: web providers in failover order, plus scholarly ones.

``RESEARCH_WEB_PROVIDERS`` (e.g. ``tavily,searxng,wikipedia``) orders the web providers;
unset, it is ``tavily`` when TAVILY_API_KEY is set, then ``searxng`` when SEARXNG_URL is.
A web search asks the first provider; on a spent quota (Tavily's 432/433, a 402), a
rejected key, a 429, a 5xx, a timeout (``RESEARCH_WEB_FAILOVER_TIMEOUT_S``) or any other
error it asks the next (the last one able to answer gets no failover timeout, only
``RESEARCH_PROVIDER_TIMEOUT_S``), and the failover is noted (a progress event and an entry of
``envelope.provider_errors``, e.g. ``web: tavily failed (…); failed over to searxng``).
A provider that refused for its quota or key (:class:`ProviderUnavailable`) is skipped
by every later search of this process for ``RESEARCH_PROVIDER_QUOTA_PAUSE_S``, so a job
(and the jobs after it) stop paying a round trip for a known refusal.

``RESEARCH_SCHOLARLY_PROVIDERS`` (``arxiv,openalex``) are searched with every web query,
all of them, concurrently with the web chain: they answer different questions (papers),
not the same one. Their sources are ``web`` sources too (``metadata.provider`` names the
API), so the envelope's :class:`RetrievalMethod` keeps meaning *how* a source was found
(local index, a web search API, PubMed), not which vendor answered.

The whole search fails only when every part failed: transient when any part failed
transiently (the fan-out retries it), else permanent. A part that failed while another
answered is a note, not an error. Each provider's answer is cached on its own (Tavily's
key is unchanged from before the chain existed), so a failed part is never cached as empty.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from services.retrieval.providers import ProviderUnavailable
from services.retrieval.search_cache import SearchCache, cache_key
from shared.platform.errors import PermanentError, ResearchError, TransientError
from shared.research.envelope import RetrievalMethod, Source
from shared.stores.textstore import TextStore

__all__ = ["Backend", "JobNotes", "WebSearch", "web_provider_names"]

log = logging.getLogger(__name__)

WEB_PROVIDERS = ("tavily", "searxng", "wikipedia")
SCHOLARLY_PROVIDERS = ("arxiv", "openalex")


class Backend(Protocol):
    name: str

    def cache_params(self) -> Mapping[str, object]: ...

    async def search(self, query: str, texts: TextStore) -> list[Source]: ...


def _names(value: str, known: Sequence[str], what: str) -> list[str]:
    names = [n.strip().lower() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise PermanentError(f"{what}: unknown provider(s) {', '.join(unknown)} (known: {', '.join(known)})")
    return list(dict.fromkeys(names))


def web_provider_names(setting: str, *, tavily_key: bool, searxng_url: bool) -> list[str]:
    """The web failover order: the setting, else tavily (with a key) then searxng (with a URL)."""
    if setting.strip():
        return _names(setting, WEB_PROVIDERS, "RESEARCH_WEB_PROVIDERS")
    return [n for n, on in (("tavily", tavily_key), ("searxng", searxng_url)) if on]


def scholarly_provider_names(setting: str) -> list[str]:
    return _names(setting, SCHOLARLY_PROVIDERS, "RESEARCH_SCHOLARLY_PROVIDERS")


@dataclass
class JobNotes:
    """What one job's web searches noted (failovers, skipped providers, parts that
    failed), in order, each once; and the queries answered from the cache."""

    lines: dict[str, None] = field(default_factory=dict)
    cache_hits: list[str] = field(default_factory=list)

    def add(self, line: str) -> None:
        self.lines.setdefault(line, None)


@dataclass
class _Refusal:
    until: float
    reason: str


class WebSearch:
    """One per process: the web chain and the scholarly providers, with the memory of
    which providers refused for their quota."""

    method = RetrievalMethod.WEB

    def __init__(
        self,
        chain: Sequence[Backend],
        scholarly: Sequence[Backend] = (),
        *,
        cache: SearchCache | None = None,
        failover_timeout_s: float = 20.0,
        quota_pause_s: float = 3600.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.chain = list(chain)
        self.scholarly = list(scholarly)
        self._cache = cache
        self._timeout_s = failover_timeout_s
        self._pause_s = quota_pause_s
        self._clock = clock
        self._refused: dict[str, _Refusal] = {}

    @property
    def names(self) -> list[str]:
        return [b.name for b in self.chain] + [b.name for b in self.scholarly]

    def refused(self, name: str) -> str | None:
        """Why ``name`` is skipped now, or None."""
        r = self._refused.get(name)
        if r is None or r.until <= self._clock():
            self._refused.pop(name, None)
            return None
        return r.reason

    def bind(self, query: str, texts: TextStore, notes: JobNotes) -> Callable[[], Awaitable[list[Source]]]:
        """``run`` of one fan-out :class:`~services.retrieval.providers.Search`."""
        return lambda: self.search(query, texts, notes)

    async def search(self, query: str, texts: TextStore, notes: JobNotes) -> list[Source]:
        parts: list[Awaitable[list[Source]]] = []
        labels: list[str] = []
        if self.chain:
            parts.append(self._failover(query, texts, notes))
            labels.append("/".join(b.name for b in self.chain))
        for backend in self.scholarly:
            # No failover timeout: nothing to fail over to, and arXiv's pacing (a request
            # every 3 s) makes waiting for a slot normal; the fan-out's timeout bounds it.
            parts.append(self._guarded(backend, query, texts, notes, timeout_s=None))
            labels.append(backend.name)
        answers = await asyncio.gather(*parts, return_exceptions=True)
        sources: list[Source] = []
        errors: list[tuple[str, ResearchError]] = []
        for label, answer in zip(labels, answers, strict=True):
            if isinstance(answer, ResearchError):
                errors.append((label, answer))
            elif isinstance(answer, BaseException):
                raise answer
            else:
                sources.extend(answer)
        if errors and len(errors) == len(parts):
            raise _combined(errors)
        for label, error in errors:
            notes.add(f"web: {label} failed ({error})")
        return sources

    async def _guarded(self, backend: Backend, query: str, texts: TextStore, notes: JobNotes, *,
                       timeout_s: float | None) -> list[Source]:
        """One provider's search within ``timeout_s``; a refusal is remembered."""
        reason = self.refused(backend.name)
        if reason is not None:
            raise ProviderUnavailable(f"{backend.name} skipped: {reason}")
        try:
            async with asyncio.timeout(timeout_s):
                return await self._cached(backend, query, texts, notes)
        except TimeoutError as exc:
            raise TransientError(f"{backend.name} took longer than {timeout_s:g}s") from exc
        except ProviderUnavailable as exc:
            if backend.name not in self._refused:
                log.warning("%s refused (%s); skipping it for %.0fs", backend.name, exc, self._pause_s)
            self._refused[backend.name] = _Refusal(self._clock() + self._pause_s, str(exc))
            raise

    async def _failover(self, query: str, texts: TextStore, notes: JobNotes) -> list[Source]:
        errors: list[tuple[str, ResearchError]] = []
        for i, backend in enumerate(self.chain):
            reason = self.refused(backend.name)
            if reason is not None:
                notes.add(f"web: {backend.name} skipped for this process until its refusal expires ({reason})")
                errors.append((backend.name, ProviderUnavailable(f"{backend.name} skipped: {reason}")))
                continue
            # The last provider able to answer has no failover timeout: nothing to fail
            # over to, and RESEARCH_PROVIDER_TIMEOUT_S bounds the whole search anyway.
            following = [b.name for b in self.chain[i + 1:] if self.refused(b.name) is None]
            try:
                return await self._guarded(backend, query, texts, notes,
                                           timeout_s=self._timeout_s if following else None)
            except ResearchError as exc:
                errors.append((backend.name, exc))
                following = [b.name for b in self.chain[i + 1:] if self.refused(b.name) is None]
                if following:
                    notes.add(f"web: {backend.name} failed ({exc}); failed over to {following[0]}")
        raise _combined(errors)

    async def _cached(self, backend: Backend, query: str, texts: TextStore, notes: JobNotes) -> list[Source]:
        if self._cache is None:
            return await backend.search(query, texts)
        # Tavily keeps the key it had as the only web provider ("web.<hash>").
        key = cache_key("web" if backend.name == "tavily" else backend.name, query, backend.cache_params())
        sources, cached = await self._cache.get_or_search(key, lambda: backend.search(query, texts))
        if cached:
            notes.cache_hits.append(query)
        return sources


def _combined(errors: list[tuple[str, ResearchError]]) -> ResearchError:
    message = "; ".join(f"{name}: {error}" for name, error in errors)
    if any(isinstance(e, TransientError) for _, e in errors):
        waits = [e.retry_after_s for _, e in errors if isinstance(e, TransientError) and e.retry_after_s is not None]
        return TransientError(message, retry_after_s=min(waits) if waits else None)
    if errors and all(isinstance(e, ProviderUnavailable) for _, e in errors):
        return ProviderUnavailable(message)
    return PermanentError(message)
