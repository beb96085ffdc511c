"""Retrieval fan-out benchmark: 8 sub-questions over 3 providers, every fake answering
after 300 ms.

Runs the retrieval stage's own fan-out (:func:`services.retrieval.providers.fan_out`)
with the real providers: the local corpus (BM25 over the test fixture corpus), the web
provider (tavily-python against the loopback Tavily fake) and the PubMed provider
(httpx against the loopback E-utilities fake, paced by the JetStream rate limiter on a
nats-server started for the run). The search cache is off so every search is real.

It prints the wall time of:

- one round trip: a single web search;
- the fan-out of all 24 searches at ``RESEARCH_RETRIEVAL_CONCURRENCY`` (default 16),
  and of the web and local searches alone;
- the same searches one after another (concurrency 1).

PubMed costs one esearch request per query plus efetch requests that concurrent
queries share, and NCBI allows 10 requests/s with an API key (3 without), so PubMed
cannot finish in one round trip whatever the concurrency: the floor set by the
requests actually sent is printed beside the measurement.

    python bench/retrieval_fanout.py [--latency 0.3] [--queries 8] [--no-key]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx
import nats

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from services.retrieval.index import index_corpus
from services.retrieval.search import LocalSearcher
from services.retrieval.providers import Search, cached_search, fan_out
from services.retrieval.pubmed import PubMedClient, PubMedProvider
from services.retrieval.ratelimit import KvRateLimiter, ncbi_rate
from services.retrieval.search_cache import SearchCache
from services.retrieval.web import WebProvider, make_tavily_client
from shared.stores import topology
from shared.research.envelope import RetrievalMethod
from shared.platform.servers import NatsServer
from shared.settings import StageSettings
from shared.stores.textstore import TextStore
from tests.fakes.eutils import Article, FakeEutils
from tests.fakes.tavily import FakeTavily, Page

TOPICS = ["lighthouse lenses", "fog signals", "tide tables", "neap tides", "bee hives", "hive ventilation",
          "lighthouse automation", "honey harvest", "spring tides", "keeper duties"]


def fixtures() -> tuple[list[Page], list[Article]]:
    pages = [Page(f"p{i}", f"About {t}", f"A page about {t}. " * 20, url=f"https://site{i}.example.org/{i}")
             for i, t in enumerate(TOPICS)]
    articles = [Article(pmid=str(40_000_000 + i), title=f"A study of {t}", abstract=[("RESULTS", f"We studied {t}.")])
                for i, t in enumerate(TOPICS)]
    return pages, articles


async def run(args: argparse.Namespace) -> None:
    pages, articles = fixtures()
    queries = [f"{TOPICS[i % len(TOPICS)]} question {i}" for i in range(args.queries)]
    with tempfile.TemporaryDirectory(prefix="bench-fanout-") as tmp, \
            FakeTavily(pages, latency_s=args.latency) as tavily, FakeEutils(articles, latency_s=args.latency) as eutils:
        server = NatsServer(Path(tmp) / "nats").start()
        nc = await nats.connect(server.url)
        try:
            js = nc.jetstream()
            await topology.ensure_topology(js, ttl_s=3_600)
            await topology.ensure_retrieval_buckets(js, cache_ttl_s=3_600)
            index_corpus(ROOT / "tests" / "fixtures" / "corpus", name="bench", corpora_dir=Path(tmp) / "corpora")
            settings = StageSettings(tavily_api_key=tavily.api_key, tavily_base_url=tavily.base_url)
            figures = await _measure(args, queries, js, LocalSearcher(Path(tmp) / "corpora"), settings, eutils)
            _print(figures, args.latency, settings.research_retrieval_concurrency, eutils.rejected)
        finally:
            await nc.close()
            server.stop()


@dataclass
class _Figures:
    queries: int
    searches: int  # in the fan-out of all three providers
    rate: float  # E-utilities requests/s
    pubmed_requests: int  # sent by that fan-out
    one: float  # seconds: one web search
    fanned: float  # all three providers at the stage's concurrency
    web_local: float  # web and local only
    sequential: float  # all three, one search at a time


async def _measure(args: argparse.Namespace, queries: list[str], js: object, searcher: LocalSearcher,
                   settings: StageSettings, eutils: FakeEutils) -> _Figures:
    api_key = None if args.no_key else "bench-key"
    rate = ncbi_rate(has_key=api_key is not None, configured=None)
    web = WebProvider(make_tavily_client(settings), settings)
    concurrency = settings.research_retrieval_concurrency
    all3 = {RetrievalMethod.RAG, RetrievalMethod.WEB, RetrievalMethod.PUBMED}
    texts, cache = TextStore(js), SearchCache(js, enabled=False)
    try:
        async with httpx.AsyncClient() as http:
            def searches(methods: set[RetrievalMethod]) -> list[Search]:
                limiter = KvRateLimiter(js, name=f"bench-{uuid.uuid4().hex}", rate_per_s=rate)
                client = PubMedClient(http, base_url=eutils.base_url, limiter=limiter, tool="bench",
                                      email="bench@example.org", api_key=api_key)
                paid = {RetrievalMethod.WEB: web, RetrievalMethod.PUBMED: PubMedProvider(client, results_per_query=10)}
                return _searches(queries, methods, searcher, paid, texts, cache)

            await _timed(searches({RetrievalMethod.WEB}), 4)  # warm up connections and the index
            one = await _timed([searches({RetrievalMethod.WEB})[0]], 1)
            everything = searches(all3)
            before = len(eutils.requests)
            fanned = await _timed(everything, concurrency)
            pubmed_requests = len(eutils.requests) - before
            web_local = await _timed(searches({RetrievalMethod.RAG, RetrievalMethod.WEB}), concurrency)
            sequential = await _timed(searches(all3), 1)
    finally:
        await web.aclose()
    return _Figures(len(queries), len(everything), rate, pubmed_requests, one, fanned, web_local, sequential)


def _searches(queries: list[str], methods: set[RetrievalMethod], searcher: LocalSearcher, paid: dict[RetrievalMethod, object],
              texts: TextStore, cache: SearchCache) -> list[Search]:
    """One search per query and method: the local corpus in a thread, the paid
    providers through the stage's cache wrapper (the cache is off)."""
    out = []
    for q in queries:
        if RetrievalMethod.RAG in methods:
            async def local(q: str = q) -> object:
                return await asyncio.to_thread(searcher.search, q, k=10)
            out.append(Search(RetrievalMethod.RAG, q, local, retry=False))
        for m in (RetrievalMethod.WEB, RetrievalMethod.PUBMED):
            if m in methods:
                out.append(Search(m, q, cached_search(paid[m], q, texts=texts, cache=cache, hits=[])))
    return out


async def _timed(batch: list[Search], concurrency: int) -> float:
    started = time.perf_counter()
    outcomes = await fan_out(batch, concurrency=concurrency, timeout_s=120, retries=2)
    failed = [o for o in outcomes if not o.ok]
    if failed:
        raise SystemExit(f"{len(failed)} searches failed: {failed[0].error}")
    return time.perf_counter() - started


def _print(f: _Figures, latency: float, concurrency: int, rejected: int) -> None:
    floor = (f.pubmed_requests - 1) * 1.15 / f.rate + latency
    print(f"retrieval fan-out: {f.queries} queries x 3 providers (rag, web, pubmed) = {f.searches} searches; "
          f"fakes answer after {latency * 1000:.0f} ms; E-utilities at {f.rate:g} req/s")
    print(f"  one round trip (one web search)            {f.one:6.2f} s")
    print(f"  fan-out, all 3 providers (concurrency {concurrency})  {f.fanned:6.2f} s"
          f"   = {f.fanned / f.one:4.1f} round trips   (PubMed: {f.queries} esearch + {f.pubmed_requests - f.queries} shared efetch"
          f" requests at {f.rate:g}/s, floor {floor:.2f} s)")
    print(f"  fan-out, web + local only                  {f.web_local:6.2f} s   = {f.web_local / f.one:4.1f} round trips")
    print(f"  sequential (concurrency 1)                 {f.sequential:6.2f} s   = {f.sequential / f.fanned:4.1f}x the fan-out")
    print(f"  429s from the E-utilities fake: {rejected}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--latency", type=float, default=0.3, help="seconds each fake takes to answer (default 0.3)")
    p.add_argument("--queries", type=int, default=8, help="sub-questions (default 8)")
    p.add_argument("--no-key", action="store_true", help="PubMed without an API key (3 requests/s instead of 10)")
    asyncio.run(run(p.parse_args()))


if __name__ == "__main__":
    main()
