"""The digest service.

Consumes ``research.stage.digest``; emits ``research.stage.score``.
For every source not yet digested for this question, reads its canonical text from
the object store (checking its hash) and builds a query-conditioned extractive digest
whose evidence snippets carry ``char:start-end`` locators that verify against that
text. Policies, caching and the circuit breaker of seed 002 come with the digest issue.
"""

from __future__ import annotations

from faststream.nats import NatsMessage

from services.digest.evidence import build_digest
from shared import subjects
from shared.envelope import JobEnvelope
from shared.settings import StageSettings
from shared.stage import StageContext, stage_app
from shared.subjects import Stage
from shared.text import hash_label, short_hash

settings = StageSettings()
broker, app, runner = stage_app(Stage.DIGEST, settings)


@broker.subscriber(subjects.DIGEST, **runner.subscriber_options())
async def on_digest(msg: NatsMessage) -> None:
    await runner.handle(msg, digest_job)


async def digest_job(envelope: JobEnvelope, ctx: StageContext) -> JobEnvelope:
    question = envelope.request.question
    query_hash = short_hash(question)
    focus = [sq.text for sq in envelope.plan.sub_questions] if envelope.plan else []
    pending = [
        s for s in envelope.sources
        if s.digest is None or s.digest.query_hash != query_hash or s.digest.source_text_hash != hash_label(s.text_hash)
    ]
    digested = {}
    for n, source in enumerate(pending, start=1):
        text = await ctx.texts.get(source.text_hash)
        digested[source.id] = source.model_copy(update={"digest": build_digest(
            text,
            query=question,
            focus=focus,
            source_text_hash=source.text_hash,
            max_snippets=settings.digest_max_evidence_snippets,
            max_chars=settings.digest_evidence_max_chars,
        )})
        await ctx.progress(n / len(pending), "digested source", digested=n, sources=len(pending))
    if not pending:
        await ctx.progress(1.0, "no new sources to digest", digested=0, sources=0)
    return envelope.advance(Stage.SCORE, sources=[digested.get(s.id, s) for s in envelope.sources])
