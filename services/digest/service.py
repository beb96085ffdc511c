"""The digest service.

Consumes ``research.stage.digest``; emits ``research.stage.score``, and on
``research.events.<job_id>.digest.*`` the audit events ``digest.started``,
``.completed``, ``.skipped``, ``.error``, ``.circuit_breaker_triggered`` and
``.pdf_extract_error``.

Guarantees: every source of the envelope reaches scoring either with a ``digest/v1``
payload whose every evidence locator verifies against its canonical text, archived
for ``DIGEST_ARCHIVE_RETENTION_DAYS`` in ``DIGEST_ARCHIVE_BUCKET``, or with its content
intact and a ``digest.skipped`` reason; each carries a fidelity record. A slow or
failing digest never fails the job. Digests are cached in-process and in the shared
``DIGEST_CACHE_BUCKET``. With ``DIGEST_METRICS_PORT`` set, Prometheus metrics are served
on it.
"""

from __future__ import annotations

import nats
from pydantic import BaseModel

from services.digest.breaker import CircuitBreaker
from services.digest.cache import DigestCache, LocalCache, SharedCache
from services.digest.digestor import Digestor
from services.digest.metrics import DigestMetrics
from shared.platform import metrics as shared_metrics
from shared.stores import topology
from shared.stores.archive import Archive
from shared.research.envelope import JobEnvelope
from shared.research.events import DigestSkipReason
from shared.settings import DigestSettings
from shared.runtime.app import stage_app
from shared.runtime.stage import StageContext
from shared.subjects import Stage

settings = DigestSettings()
DEADLINE_SKIP = f"digest_skipped:{DigestSkipReason.DEADLINE.value}"
broker, app, runner = stage_app(Stage.DIGEST, settings)

# Process-wide: the breaker watches this process's recent digests, the local cache
# and the metrics live as long as the process.
breaker = CircuitBreaker()
local_cache = LocalCache(max_entries=100)
metrics = DigestMetrics()
shared_metrics.include(metrics.registry)  # served on the process's RESEARCH_METRICS_PORT endpoint too


@app.on_startup
async def _storage_and_metrics() -> None:
    nc = await nats.connect(servers=settings.nats_servers, connect_timeout=5, max_reconnect_attempts=3)
    try:
        await topology.ensure_digest_storage(
            nc.jetstream(), retention_s=settings.digest_archive_retention_days * 86_400,
            replicas=settings.research_stream_replicas,
        )
    finally:
        await nc.drain()
    if settings.digest_metrics_port:
        metrics.serve(settings.digest_metrics_port, settings.digest_metrics_host)


@runner.work  # up to RESEARCH_STAGE_CONCURRENCY at once; routes: shared/runtime/routing.py
async def digest_job(envelope: JobEnvelope, ctx: StageContext) -> JobEnvelope:
    async def publish(event: BaseModel) -> None:
        source = getattr(event, "source_id", "")
        seq = getattr(event, "failures", "")  # the breaker may open more than once a batch
        await ctx.event(event, f"{envelope.msg_id}:{event.type}:{source}{seq}")  # type: ignore[attr-defined]

    digestor = Digestor(
        settings=settings, texts=ctx.texts, archive=Archive(ctx.js),
        cache=DigestCache(local_cache, SharedCache(ctx.js)), breaker=breaker, metrics=metrics,
        publish=publish, llm=ctx.llm, progress=ctx.progress, deadline=ctx.deadline,
    )
    sources = await digestor.run(envelope)
    # Sources the deadline left undigested go on intact, as failed digests do.
    late = sum(1 for s in sources if s.fidelity is not None and s.fidelity.reason == DEADLINE_SKIP)
    if late:
        ctx.deadline.cut(f"digest: {late} of {len(sources)} sources passed on undigested")
    return envelope.advance(Stage.SCORE, sources=sources)
