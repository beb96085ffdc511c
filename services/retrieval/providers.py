"""Which search providers a job uses, running all of their searches at once, and merging
what they return.

Guarantees:

* **Selection**: a request's ``providers`` list wins; without one, every configured
  provider runs. A requested provider that is not configured is reported (an event and
  ``envelope.provider_errors``), never silently skipped. No provider able to run is a
  :class:`~shared.platform.errors.PermanentError` naming what to configure.
* **Fan-out**: every (provider, query) search of the iteration runs concurrently, at
  most ``RESEARCH_RETRIEVAL_CONCURRENCY`` at a time, each bounded by
  ``RESEARCH_PROVIDER_TIMEOUT_S`` and retried on transient errors with backoff
  (honouring a server's ``Retry-After``). A failure is an :class:`Outcome`, not an
  exception, so one provider failing never cancels another's searches. A provider
  that refuses the job itself (:class:`ProviderUnavailable`: bad key, exhausted plan)
  gets no further calls for this job. Cancelling the caller cancels every search.
* **Merging**: sources unite on any shared identity from
  :func:`services.retrieval.merge.dedupe_keys` (PMID, DOI, canonical URL), so a PubMed
  record and a web page at its DOI become one source. An existing source keeps its id.
* **Relevance** is on one 0..1 scale: within each query's answer the best result is
  1.0. Local BM25 and Tavily scores are divided by the query's best score (Tavily's
  score is a ranking signal within one response, not calibrated across queries);
  PubMed gives a ranking without scores, so the i-th of n records gets 1 − 0.5·i/n.
  A source found by several queries keeps its best relevance.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from datetime import datetime
from dataclasses import dataclass, field
from typing import Any, Protocol

from services.retrieval.domains import classify
from services.retrieval.excerpt import excerpt_of
from services.retrieval.search_cache import SearchCache, cache_key
from shared.research.envelope import CredibilityTier, RetrievalMethod, SearchQuery, Source
from shared.platform.errors import PermanentError, ResearchError, TransientError
from shared.research.text import normalize_query
from shared.stores.textstore import TextStore

__all__ = [
    "Outcome",
    "ProviderUnavailable",
    "QueryRejected",
    "Search",
    "archived_source",
    "SearchProvider",
    "fan_out",
    "queries_for",
    "rank_relevance",
    "score_relevance",
    "select_providers",
]

log = logging.getLogger(__name__)

RETRY_BASE_S = 1.0


class ProviderUnavailable(PermanentError):
    """The provider refuses this job altogether (rejected key, exhausted plan):
    its remaining searches for the job are not attempted."""


class QueryRejected(PermanentError):
    """The provider refused this one query (a 400); other queries may still work."""


class SearchProvider(Protocol):
    """A paid search API: web or PubMed. Full texts are archived by ``search``."""

    method: RetrievalMethod

    def cache_params(self) -> Mapping[str, object]:
        """Everything besides the query that changes the answer (part of the cache key)."""
        ...

    async def search(self, query: str, texts: TextStore) -> list[Source]: ...


# -- selection -----------------------------------------------------------------------


def select_providers(
    requested: Sequence[RetrievalMethod] | None,
    unconfigured: Mapping[RetrievalMethod, str | None],
) -> tuple[list[RetrievalMethod], list[str]]:
    """(providers to run, problems to report). ``unconfigured`` maps every provider to
    None when it can run, else to what is missing (e.g. "set TAVILY_API_KEY")."""
    order = list(RetrievalMethod)
    if requested is None:
        active = [m for m in order if unconfigured.get(m) is None]
        if not active:
            missing = "; ".join(f"{m.value}: {unconfigured.get(m) or 'not configured'}" for m in order)
            raise PermanentError(f"no search provider is configured ({missing})")
        return active, []
    wanted = [m for m in order if m in set(requested)]
    active = [m for m in wanted if unconfigured.get(m) is None]
    problems = [f"{m.value}: requested but not configured ({unconfigured[m]})" for m in wanted if unconfigured.get(m) is not None]
    if not active:
        raise PermanentError("no requested search provider can run: " + "; ".join(problems))
    return active, problems


def queries_for(
    method: RetrievalMethod, queries: Sequence[SearchQuery], *, already_run: Iterable[str] = ()
) -> list[str]:
    """This iteration's query texts for ``method``, without those the job already ran.
    A provider the plan wrote no queries for borrows the RAG queries (else all), so a
    plan made before per-provider queries existed still searches every provider."""
    own = [q.text for q in queries if q.provider == method]
    if not own:
        own = [q.text for q in queries if q.provider == RetrievalMethod.RAG] or [q.text for q in queries]
    done = {normalize_query(q) for q in already_run}
    out: dict[str, str] = {}
    for text in own:
        key = normalize_query(text)
        if key and key not in done:
            out.setdefault(key, text)
    return list(out.values())


# -- relevance -------------------------------------------------------------------------


def score_relevance(scores: Sequence[float]) -> list[float]:
    """Provider scores as 0..1 relative to the best of the same answer."""
    top = max((s for s in scores if s > 0), default=0.0)
    return [min(1.0, max(0.0, s / top)) if top > 0 else 0.0 for s in scores]


def rank_relevance(n: int) -> list[float]:
    """Relevance of n ranked results without scores: 1.0 down towards 0.5."""
    return [1.0 - 0.5 * i / n for i in range(n)]


# -- fan-out ---------------------------------------------------------------------------


async def archived_source(
    texts: TextStore, text: str, *, id: str, url: str, title: str, query: str, relevance: float,
    metadata: Mapping[str, Any], snippet: str = "", published_at: datetime | None = None,
    method: RetrievalMethod = RetrievalMethod.WEB, tier: CredibilityTier | None = None,
    page_starts: list[int] | None = None,
) -> Source:
    """A source found by a search API, its canonical ``text`` archived first: the
    excerpt where ``snippet`` occurs in it (else its beginning), the credibility of its
    domain (``tier`` overrides the domain's tier: a journal article is primary), empty
    metadata values left out."""
    key = await texts.put(text)
    excerpt, spans = excerpt_of(text, snippet)
    info = classify(url)
    return Source(
        id=id,
        text=excerpt,
        excerpt_start=spans[0][0] if spans else None,
        url=url,
        title=title,
        published_at=published_at,
        relevance_score=relevance,
        credibility_tier=tier or info.tier,
        domain_authority=info.authority,
        retrieval_method=method,
        text_hash=key,
        text_chars=len(text),
        page_starts=page_starts,
        metadata={k: v for k, v in metadata.items() if v},
        matched_spans=spans,
        found_by=[query],
    )


@dataclass
class Search:
    """One search to run: ``run()`` returns whatever the provider's answer is."""

    method: RetrievalMethod
    query: str
    run: Callable[[], Awaitable[Any]]
    retry: bool = True  # local searches do not fail transiently


@dataclass
class Outcome:
    method: RetrievalMethod
    query: str
    value: Any = None
    error: ResearchError | None = None
    seconds: float = 0.0
    attempts: int = 0
    skipped: bool = False  # not attempted: the provider was already unavailable

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class _Unavailable:
    errors: dict[RetrievalMethod, ProviderUnavailable] = field(default_factory=dict)


async def _attempts(search: Search, *, timeout_s: float, retries: int) -> tuple[Any, int]:
    attempt = 0
    while True:
        attempt += 1
        try:
            async with asyncio.timeout(timeout_s):
                return await search.run(), attempt
        except TimeoutError as exc:
            error: TransientError = TransientError(f"{search.method.value} search took longer than {timeout_s:g}s")
            error.__cause__ = exc
        except TransientError as exc:
            error = exc
        if not search.retry or attempt > retries:
            raise error
        delay = error.retry_after_s if error.retry_after_s is not None else RETRY_BASE_S * 2 ** (attempt - 1)
        log.info("%s search for %r failed (%s); retry %d in %.1fs", search.method.value, search.query, error, attempt, delay)
        await asyncio.sleep(delay)


async def fan_out(
    searches: Sequence[Search],
    *,
    concurrency: int,
    timeout_s: float,
    retries: int,
    on_outcome: Callable[[Outcome], Awaitable[None]] | None = None,
    on_start: Callable[[Search], Awaitable[None]] | None = None,
) -> list[Outcome]:
    """Run every search concurrently (at most ``concurrency`` at once); one Outcome per
    search, in input order; ``on_start`` is told of each search as it starts (after its
    wait for a slot). Errors other than ResearchError are bugs and propagate."""
    gate = asyncio.Semaphore(concurrency)
    unavailable = _Unavailable()
    outcomes: list[Outcome | None] = [None] * len(searches)

    async def one(i: int, search: Search) -> None:
        async with gate:
            started = time.monotonic()
            refused = unavailable.errors.get(search.method)
            if refused is not None:
                outcome = Outcome(search.method, search.query, error=refused, skipped=True)
            else:
                if on_start is not None:
                    await on_start(search)
                try:
                    value, attempts = await _attempts(search, timeout_s=timeout_s, retries=retries)
                    outcome = Outcome(search.method, search.query, value=value, attempts=attempts)
                except ProviderUnavailable as exc:
                    unavailable.errors.setdefault(search.method, exc)
                    outcome = Outcome(search.method, search.query, error=exc, attempts=1)
                except ResearchError as exc:
                    outcome = Outcome(search.method, search.query, error=exc, attempts=retries + 1)
            outcome.seconds = time.monotonic() - started
            outcomes[i] = outcome
            if on_outcome is not None:
                await on_outcome(outcome)

    async with asyncio.TaskGroup() as group:
        for i, search in enumerate(searches):
            group.create_task(one(i, search))
    return [o for o in outcomes if o is not None]


def cached_search(
    provider: SearchProvider, query: str, *, texts: TextStore, cache: SearchCache, hits: list[str]
) -> Callable[[], Awaitable[list[Source]]]:
    """``run`` for a paid provider's search through the shared cache; a cache hit
    appends the query to ``hits``."""
    key = cache_key(provider.method.value, query, provider.cache_params())

    async def run() -> list[Source]:
        sources, cached = await cache.get_or_search(key, lambda: provider.search(query, texts))
        if cached:
            hits.append(query)
        return sources

    return run
