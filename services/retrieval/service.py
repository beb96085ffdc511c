"""The retrieval service.

Consumes ``research.stage.retrieve``; emits ``research.stage.digest``.
Runs the plan's queries for this iteration (queries already run for the job are
skipped) over the local corpora the request names (all indexed corpora by default),
merges and deduplicates the hits into seed 000 source objects, and archives each new
document's canonical text in the object store so the envelope carries only its hash.
Web and PubMed providers come with the retrieval issue.
"""

from __future__ import annotations

import asyncio

from faststream.nats import NatsMessage

from services.retrieval.index import ChunkHit, LocalSearcher, list_corpora
from services.retrieval.merge import merge_hits
from shared import subjects
from shared.envelope import JobEnvelope, RetrievalMethod
from shared.errors import PermanentError
from shared.settings import StageSettings
from shared.stage import StageContext, stage_app
from shared.subjects import Stage
from shared.text import normalize_query

settings = StageSettings()
broker, app, runner = stage_app(Stage.RETRIEVE, settings)
searcher = LocalSearcher(settings.corpora_dir)


@broker.subscriber(subjects.RETRIEVE, **runner.subscriber_options())
async def on_retrieve(msg: NatsMessage) -> None:
    await runner.handle(msg, retrieve_job)


async def retrieve_job(envelope: JobEnvelope, ctx: StageContext) -> JobEnvelope:
    if envelope.request.corpora is None and not list_corpora(settings.corpora_dir):
        raise PermanentError("no corpus is indexed and no other provider is configured: run `deepresearch index DIR` first")
    plan = envelope.plan
    if plan is None:
        raise PermanentError("retrieve command without a plan")
    already = {normalize_query(q) for q in envelope.queries_run}
    queries = list(dict.fromkeys(
        q.text for q in plan.queries
        if q.provider == RetrievalMethod.RAG and normalize_query(q.text) not in already
    ))
    hits_by_query: dict[str, list[ChunkHit]] = {}
    for n, query in enumerate(queries, start=1):
        hits = await asyncio.to_thread(
            searcher.search, query, corpora=envelope.request.corpora, k=settings.research_local_results_per_query
        )
        hits_by_query[query] = hits
        await ctx.progress(n / len(queries) * 0.8, "searched local corpora", queries_done=n, queries=len(queries), hits=len(hits))

    sources = merge_hits(
        hits_by_query,
        tier=settings.research_local_credibility_tier,
        domain_authority=settings.research_local_domain_authority,
        existing=envelope.sources,
    )
    known = {s.id for s in envelope.sources}
    new = [s for s in sources if s.id not in known]
    # A document re-indexed between iterations keeps its id but gets a new text hash:
    # archive by hash, not by id, so the digest stage always finds the text.
    archived = {s.text_hash for s in envelope.sources}
    docs = {h.doc_text_hash: h for hits in hits_by_query.values() for h in hits}
    for s in sources:
        if s.text_hash in archived:
            continue
        hit = docs[s.text_hash]
        text = await asyncio.to_thread(searcher.document_text, hit.corpus, hit.doc_relpath)
        await ctx.texts.put(text)
    await ctx.progress(1.0, "sources merged and archived", sources=len(sources), new_sources=len(new), queries=len(queries))
    return envelope.advance(
        Stage.DIGEST,
        sources=sources,
        new_source_ids=[s.id for s in new],
        queries_run=[*envelope.queries_run, *queries],
    )
