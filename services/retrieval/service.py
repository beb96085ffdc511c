"""The retrieval service.

Consumes ``research.stage.retrieve``; emits ``research.stage.digest``, or (the quick
context search before the brief, ``envelope.phase == "context"``) ``research.stage.plan``.

Runs the plan's queries for this iteration (queries the job already ran are skipped)
on every selected provider at once: the local corpora (BM25), the web and PubMed,
under a bounded concurrency (:mod:`services.retrieval.providers`). The web method is a
failover chain of web providers (Tavily, SearXNG, Wikipedia) plus the scholarly APIs
(arXiv, OpenAlex): :mod:`services.retrieval.webchain`; its failovers are progress
events and ``provider_errors`` lines. Results
merge and deduplicate into source objects whose canonical texts are archived
in the object store, so the envelope carries only hashes and bounded excerpts. Paid
searches go through a search cache shared by every process of this service, and
E-utilities requests through a rate limiter shared the same way.

Guarantees: a provider failing or timing out never fails the job while another
provider answered; its failure is a progress event and an entry of
``envelope.provider_errors``. When no provider answered at all the stage raises:
transient (retried later by JetStream) if any failure was transient, else permanent.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter

import httpx
from nats.js import JetStreamContext

from services.retrieval.index import list_corpora
from services.retrieval.merge import merge_hits, merge_sources
from services.retrieval.providers import (
    Outcome,
    Search,
    SearchProvider,
    cached_search,
    fan_out,
    queries_for,
    select_providers,
)
from services.retrieval.pubmed import PubMedClient, PubMedProvider
from services.retrieval.ratelimit import KvRateLimiter, ncbi_rate
from services.retrieval.search import ChunkHit, LocalSearcher
from services.retrieval.search_cache import SearchCache
from services.retrieval.fetch import fetch_document
from services.retrieval.keyless import ApiClient
from services.retrieval.scholarly import ArxivProvider, OpenAlexProvider
from services.retrieval.searxng import SearxngProvider
from services.retrieval.web import WebProvider, make_tavily_client
from services.retrieval.webchain import Backend, JobNotes, WebSearch, scholarly_provider_names, web_provider_names
from services.retrieval.wikipedia import WikipediaProvider
from shared.stores import topology
from shared.research.envelope import ContextHit, JobEnvelope, ResearchRequest, RetrievalMethod, Source
from shared.platform.errors import PermanentError, TransientError
from shared.research.events import ProviderResults, TraceQuery
from shared.settings import DigestSettings, StageSettings
from shared.runtime.app import stage_app
from shared.runtime.stage import StageContext
from shared.subjects import Stage

settings = StageSettings()
broker, app, runner = stage_app(Stage.RETRIEVE, settings)
searcher = LocalSearcher(settings.corpora_dir)
CONTEXT_HITS_PER_PROVIDER = 3  # results per provider the context search keeps for the brief
CONTEXT_SNIPPET_CHARS = 300


def excerpt_window_limit(digest: DigestSettings) -> int | None:
    """Longest document whose excerpt reaches past its best chunk: the ones the digest
    stage does not read (under ``auto``, those not longer than DIGEST_MIN_CHARS). A
    document it digests gets its evidence from the whole text, and more excerpt would
    only compete with that evidence. None: every document."""
    if digest.digest_policy == "off":
        return None
    if digest.digest_policy == "always":
        return 0
    return digest.digest_min_chars


# Read once: the digest service reads the same environment, so both agree.
_window_limit = excerpt_window_limit(DigestSettings())


def web_chain(s: StageSettings) -> tuple[list[str], list[str]]:
    """(the web providers that can run, in failover order; the scholarly ones).
    A provider named in RESEARCH_WEB_PROVIDERS without its setting is left out."""
    named = web_provider_names(s.research_web_providers, tavily_key=bool(s.tavily_api_key), searxng_url=bool(s.searxng_url))
    usable = [n for n in named if (n != "tavily" or s.tavily_api_key) and (n != "searxng" or s.searxng_url)]
    return usable, scholarly_provider_names(s.research_scholarly_providers)


def unconfigured(s: StageSettings, request: ResearchRequest) -> dict[RetrievalMethod, str | None]:
    """Each provider -> None when it can run, else what it is missing."""
    chain, scholarly = web_chain(s)
    return {
        RetrievalMethod.RAG: None if request.corpora or list_corpora(s.corpora_dir)
        else "no corpus is indexed: run `deepresearch index DIR`",
        RetrievalMethod.WEB: None if chain or scholarly
        else "set TAVILY_API_KEY or SEARXNG_URL, or RESEARCH_WEB_PROVIDERS=wikipedia",
        RetrievalMethod.PUBMED: None if s.pubmed_enabled
        else "set NCBI_EMAIL or NCBI_API_KEY, or RESEARCH_PUBMED_ENABLED=true",
    }


class Remote:
    """The paid providers of this process, built on first use (they need the broker's
    JetStream context for the shared cache and rate limiter) and closed at shutdown."""

    def __init__(self, s: StageSettings) -> None:
        self._settings = s
        self._lock = asyncio.Lock()
        self._built = False
        self.providers: dict[RetrievalMethod, SearchProvider] = {}
        self.web: WebSearch | None = None
        self.cache: SearchCache | None = None
        self._http: httpx.AsyncClient | None = None
        self._tavily: WebProvider | None = None

    async def get(self, js: JetStreamContext) -> Remote:
        async with self._lock:
            if not self._built:
                await self._build(js)
                self._built = True
        return self

    async def _build(self, js: JetStreamContext) -> None:
        s = self._settings
        await topology.ensure_retrieval_buckets(js, cache_ttl_s=s.research_search_cache_ttl_s, replicas=s.research_stream_replicas)
        self.cache = SearchCache(js, enabled=s.research_search_cache_ttl_s > 0)
        contact = s.openalex_email or s.ncbi_email
        self._http = httpx.AsyncClient(timeout=httpx.Timeout(s.research_provider_timeout_s), headers={
            "User-Agent": f"{s.ncbi_tool}/0.1" + (f" ({contact})" if contact else "")})
        self.web = self._build_web(js)
        if s.pubmed_enabled:
            api_key = s.ncbi_api_key.get_secret_value() if s.ncbi_api_key else None
            # NCBI counts requests per key (or per client without one): one limiter key
            # per credential, the key itself never stored.
            who = "key-" + hashlib.sha256(api_key.encode()).hexdigest()[:16] if api_key else "anonymous"
            limiter = KvRateLimiter(js, name=f"ncbi-eutils.{who}", rate_per_s=ncbi_rate(has_key=bool(api_key), configured=s.ncbi_max_requests_per_s))
            client = PubMedClient(self._http, base_url=s.ncbi_eutils_base_url, limiter=limiter, tool=s.ncbi_tool, email=s.ncbi_email, api_key=api_key)
            self.providers[RetrievalMethod.PUBMED] = PubMedProvider(client, results_per_query=s.research_pubmed_results_per_query)

    def _build_web(self, js: JetStreamContext) -> WebSearch | None:
        """The web chain and the scholarly providers (services/retrieval/webchain.py)."""
        s, http = self._settings, self._http
        assert http is not None
        chain_names, scholarly_names = web_chain(s)
        if not chain_names and not scholarly_names:
            return None
        n = s.research_web_results_per_query

        def backend(name: str) -> Backend:
            if name == "tavily":
                self._tavily = WebProvider(make_tavily_client(s), s)
                return self._tavily
            if name == "searxng":
                assert s.searxng_url
                return SearxngProvider(ApiClient(http, name="SearXNG"), base_url=s.searxng_url, results_per_query=n,
                                       fetch=lambda url: fetch_document(url, s))
            if name == "wikipedia":
                limiter = KvRateLimiter(js, name="wikipedia", rate_per_s=5.0)
                return WikipediaProvider(ApiClient(http, name="Wikipedia", limiter=limiter), api_url=s.wikipedia_api_url,
                                         results_per_query=n)
            if name == "arxiv":
                limiter = KvRateLimiter(js, name="arxiv", rate_per_s=s.arxiv_max_requests_per_s)
                return ArxivProvider(ApiClient(http, name="arXiv", limiter=limiter), api_url=s.arxiv_api_url,
                                     results_per_query=n)
            limiter = KvRateLimiter(js, name="openalex", rate_per_s=10.0)
            key = s.openalex_api_key.get_secret_value() if s.openalex_api_key else None
            return OpenAlexProvider(ApiClient(http, name="OpenAlex", limiter=limiter), api_url=s.openalex_api_url,
                                    results_per_query=n, email=s.openalex_email, api_key=key)

        return WebSearch([backend(m) for m in chain_names], [backend(m) for m in scholarly_names], cache=self.cache,
                         failover_timeout_s=s.research_web_failover_timeout_s, quota_pause_s=s.research_provider_quota_pause_s)

    async def aclose(self) -> None:
        if self._tavily is not None:
            await self._tavily.aclose()
        if self._http is not None:
            await self._http.aclose()


remote = Remote(settings)


@app.on_shutdown
async def _close_clients() -> None:
    await remote.aclose()


def _local_search(query: str, request: ResearchRequest) -> Search:
    async def run() -> list[ChunkHit]:
        return await asyncio.to_thread(searcher.search, query, corpora=request.corpora, k=settings.research_local_results_per_query)

    return Search(RetrievalMethod.RAG, query, run, retry=False)


@runner.work  # up to RESEARCH_STAGE_CONCURRENCY at once; routes: shared/runtime/routing.py
async def retrieve_job(envelope: JobEnvelope, ctx: StageContext) -> JobEnvelope:
    plan = envelope.plan
    if envelope.phase == "context":
        return await _context_search(envelope, ctx)
    if plan is None:
        raise PermanentError("retrieve command without a plan")
    active, problems = select_providers(envelope.request.providers, unconfigured(settings, envelope.request))
    for problem in problems:
        await ctx.progress(0.0, f"provider {problem}")
    cache_hits: list[str] = []
    notes = JobNotes()  # web failovers and skipped providers
    # Never a search the job already ran: on any provider, or on this one by the research memory.
    wanted = {m: queries_for(m, plan.queries, already_run=[*envelope.queries_run, *envelope.memory.searched_texts(m.value)])
              for m in active}
    searches = await _searches(wanted, envelope.request, ctx, cache_hits, notes)
    await ctx.progress(0.0, "searching " + ", ".join(m.value for m in active), searches=len(searches), providers=len(active))
    outcomes = await _run(searches, ctx, notes=notes)
    cache_hits += notes.cache_hits
    errors = _provider_errors(outcomes)
    if searches and not any(o.ok for o in outcomes) and not ctx.deadline.passed:
        if any(isinstance(o.error, TransientError) for o in outcomes):
            raise TransientError("every search failed: " + "; ".join(errors))
        raise PermanentError("every search failed: " + "; ".join(errors))

    local = {o.query: o.value for o in outcomes if o.ok and o.method is RetrievalMethod.RAG}
    sources = merge_hits(
        local,
        tier=settings.research_local_credibility_tier,
        domain_authority=settings.research_local_domain_authority,
        existing=envelope.sources,
        window_max_chars=_window_limit,
    )
    await _archive_local(sources, local, envelope.sources, ctx)
    found: list[Source] = [s for o in outcomes if o.ok and o.method is not RetrievalMethod.RAG for s in o.value]
    sources, new = await _keep_new(merge_sources(sources, found), envelope.sources, ctx)
    ran = list(dict.fromkeys(o.query for o in outcomes if o.ok))
    _trace(ctx, outcomes, new)
    await ctx.progress(
        1.0, "sources merged and archived", sources=len(sources), new_sources=len(new),
        searches=len(searches), failed_searches=sum(1 for o in outcomes if not o.ok), cache_hits=len(cache_hits),
    )
    return envelope.advance(
        Stage.DIGEST,
        sources=sources,
        new_source_ids=[s.id for s in new],
        queries_run=[*envelope.queries_run, *[q for q in ran if q not in envelope.queries_run]],
        memory=envelope.memory.with_searches([(o.method.value, o.query) for o in outcomes if o.ok], iteration=envelope.iteration),
        provider_errors=[*envelope.provider_errors, *problems,
                         *[e for e in [*notes.lines, *errors] if e not in envelope.provider_errors]],
    )


def _trace(ctx: StageContext, outcomes: list[Outcome], new: list[Source]) -> None:
    """The job's trace for this pass: every search tried, and per provider how many
    results it returned and how many new sources it contributed."""
    ctx.trace.update(
        queries=[TraceQuery(provider=o.method.value, text=o.query) for o in outcomes if not o.skipped],
        results={m.value: ProviderResults(count=sum(len(o.value) for o in outcomes if o.ok and o.method is m),
                                          new_sources=sum(1 for s in new if s.retrieval_method is m))
                 for m in dict.fromkeys(o.method for o in outcomes)},
    )


async def _searches(wanted: dict[RetrievalMethod, list[str]], request: ResearchRequest, ctx: StageContext,
                    cache_hits: list[str], notes: JobNotes) -> list[Search]:
    """One search per provider and query text; paid ones through the shared cache
    (the web chain caches each of its providers' answers itself)."""
    paid = await remote.get(ctx.js) if set(wanted) - {RetrievalMethod.RAG} else None
    searches: list[Search] = []
    for method, texts in wanted.items():
        for query in texts:
            if method is RetrievalMethod.RAG:
                searches.append(_local_search(query, request))
            elif method is RetrievalMethod.WEB:
                assert paid is not None and paid.web is not None
                searches.append(Search(method, query, paid.web.bind(query, ctx.texts, notes)))
            else:
                assert paid is not None and paid.cache is not None
                run = cached_search(paid.providers[method], query, texts=ctx.texts, cache=paid.cache, hits=cache_hits)
                searches.append(Search(method, query, run))
    return searches


async def _run(searches: list[Search], ctx: StageContext, *, share_of_stage: float = 0.8,
               notes: JobNotes | None = None) -> list[Outcome]:
    """Every search under the concurrency, timeout and retry settings, each outcome
    reported as progress (a provider's repeated skip once), and each new web note
    (a failover, a skipped provider) once. At the job's deadline the searches still
    running are cut (and recorded as cut); those that finished count."""
    done = 0
    reported: set[RetrievalMethod] = set()
    finished: list[Outcome] = []
    noted: set[str] = set()

    async def report(outcome: Outcome) -> None:
        nonlocal done
        done += 1
        finished.append(outcome)
        share = done / max(len(searches), 1) * share_of_stage
        for line in list(notes.lines if notes is not None else ()):
            if line not in noted:
                noted.add(line)
                await ctx.progress(share, line)
        if outcome.ok:
            await ctx.progress(share, f"searched {outcome.method.value}: {outcome.query}", searches_done=done,
                               searches=len(searches), results=len(outcome.value))
        elif not outcome.skipped or outcome.method not in reported:
            reported.add(outcome.method)
            await ctx.progress(share, f"{outcome.method.value} search failed for {outcome.query!r}: {outcome.error}", searches_done=done, searches=len(searches))

    async def starting(search: Search) -> None:  # which search is running, for live progress
        await ctx.progress(done / max(len(searches), 1) * share_of_stage, f"searching {search.method.value}: {search.query}",
                           searches_done=done, searches=len(searches))

    async with ctx.deadline.until_deadline():
        return await fan_out(
            searches, concurrency=settings.research_retrieval_concurrency,
            timeout_s=settings.research_provider_timeout_s, retries=settings.research_provider_retries, on_outcome=report,
            on_start=starting,
        )
    cut = Counter(s.method.value for s in searches) - Counter(o.method.value for o in finished)
    ctx.deadline.cut(f"retrieve: {cut.total()} of {len(searches)} searches cut "
                     f"({', '.join(f'{m}: {n}' for m, n in sorted(cut.items()))})")
    return finished


async def _keep_new(sources: list[Source], previous: list[Source], ctx: StageContext) -> tuple[list[Source], list[Source]]:
    """(all sources, the new ones) once the new ones are cut to the source caps."""
    known = {s.id for s in previous}
    new = [s for s in sources if s.id not in known]
    kept = _cap_new_sources(new, known=len(known))
    if len(kept) < len(new):
        await ctx.progress(0.9, f"kept the {len(kept)} most relevant of {len(new)} new sources (source caps)",
                           new_sources=len(kept), dropped=len(new) - len(kept))
        keep = {s.id for s in kept}
        return [s for s in sources if s.id in known or s.id in keep], kept
    return sources, new


async def _context_search(envelope: JobEnvelope, ctx: StageContext) -> JobEnvelope:
    """The quick search before the brief: the question on each selected provider, the
    titles and snippets of the first CONTEXT_HITS_PER_PROVIDER results. Nothing is
    kept as a source or digested, and the query does not count as run (iteration 0
    searches properly). A failed search is reported and the brief goes ahead without
    it: context is a help, not a requirement."""
    active, problems = select_providers(envelope.request.providers, unconfigured(settings, envelope.request))
    question = " ".join(envelope.request.question.split())
    notes = JobNotes()
    searches = await _searches({m: [question] for m in active}, envelope.request, ctx, [], notes)
    outcomes = await _run(searches, ctx, share_of_stage=0.9, notes=notes)
    hits: list[ContextHit] = []
    for o in outcomes:
        if not o.ok:
            continue
        if o.method is RetrievalMethod.RAG:
            firsts = {h.doc_relpath: h for h in reversed(o.value)}  # each document's best chunk
            top = sorted(firsts.values(), key=lambda h: -h.score)[:CONTEXT_HITS_PER_PROVIDER]
            hits += [ContextHit(provider=o.method, title=h.doc_title, snippet=_snippet(h.text)) for h in top]
        else:
            hits += [ContextHit(provider=o.method, title=s.title, snippet=_snippet(s.text), url=s.url)
                     for s in o.value[:CONTEXT_HITS_PER_PROVIDER]]
    failed = [*notes.lines, *_provider_errors(outcomes)]
    await ctx.progress(1.0, "context search done", results=len(hits), failed_searches=len(failed))
    return envelope.advance(Stage.PLAN, phase="brief", context_hits=hits,
                            provider_errors=[*envelope.provider_errors, *problems, *failed])


@runner.on_deadline  # the runner cut retrieve_job past the deadline (RESEARCH_DEADLINE_GRACE_S)
async def retrieve_at_deadline(envelope: JobEnvelope, ctx: StageContext) -> JobEnvelope:
    """The envelope as it came, to the brief (after a context search) or to digest."""
    if envelope.phase == "context":
        return envelope.advance(Stage.PLAN, phase="brief")
    return envelope.advance(Stage.DIGEST)


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= CONTEXT_SNIPPET_CHARS else text[: CONTEXT_SNIPPET_CHARS - 1] + "…"


def _cap_new_sources(new: list[Source], *, known: int) -> list[Source]:
    """The most relevant new sources within RESEARCH_MAX_NEW_SOURCES_PER_ITERATION and
    RESEARCH_MAX_SOURCES_PER_JOB. The envelope carries every source's excerpt (and
    later its digest and scores) and NATS refuses messages over 1 MiB: with real
    providers one iteration can return 100+ results, so the envelope is bounded here."""
    room = max(0, min(settings.research_max_new_sources_per_iteration, settings.research_max_sources_per_job - known))
    if len(new) <= room:
        return new
    return sorted(new, key=lambda s: (-s.relevance_score, s.id))[:room]


def _provider_errors(outcomes: list[Outcome]) -> list[str]:
    """One line per distinct failure: ``web: <reason>`` (a provider that refused the
    job appears once, not once per query)."""
    lines: dict[str, None] = {}
    for o in outcomes:
        if o.error is not None:
            lines.setdefault(f"{o.method.value}: {o.error}", None)
    return list(lines)


async def _archive_local(
    sources: list[Source], hits_by_query: dict[str, list[ChunkHit]], previous: list[Source], ctx: StageContext
) -> None:
    """Archive the canonical text of every local document not archived before.
    A document re-indexed between iterations keeps its id but gets a new text hash:
    archive by hash, not by id, so the digest stage always finds the text."""
    archived = {s.text_hash for s in previous}
    docs = {h.doc_text_hash: h for hits in hits_by_query.values() for h in hits}
    for s in sources:
        if s.text_hash in archived or s.text_hash not in docs:
            continue
        hit = docs[s.text_hash]
        text = await asyncio.to_thread(searcher.document_text, hit.corpus, hit.doc_relpath)
        await ctx.texts.put(text)
