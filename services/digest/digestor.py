"""One digest batch: which sources, in what order, how many at once, with what outcome.

For every source of the envelope that has no digest for this question and text, the
:class:`Digestor` decides (policy and ranking), then per chosen source: cache (local,
then shared), else, while the circuit breaker allows, a digest bounded by
``DIGEST_TIMEOUT_S``; the text is archived and the digest cached. Every source ends
either digested or passed through intact with a ``digest.skipped`` reason; a failing or
slow digest never fails the job (only a rejected API key does: nothing can succeed).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel

from services.digest.breaker import CircuitBreaker
from services.digest.cache import (
    DIGEST_IMPL_VERSION,
    DigestCache,
    cache_key,
    config_hash,
)
from services.digest.compress import PROMPT_VERSION, DigestLimits, compress
from services.digest.evidence import conditioning_hash, page_map_problem, with_pages
from services.digest.metrics import DigestMetrics
from services.digest.policy import select
from shared.stores.archive import Archive
from shared.research.envelope import CoverageStatus, DigestPayload, FidelityRecord, JobEnvelope, Source
from shared.research.events import (
    DigestCircuitBreakerTriggered,
    DigestCompleted,
    DigestError,
    DigestPdfExtractError,
    DigestSkipReason,
    DigestSkipped,
    DigestStarted,
)
from shared.llm.providers import LLMAuthError
from shared.research.text import hash_label, short_hash

log = logging.getLogger(__name__)

ARCHIVE_LINK = "_digest_archive_hash"  # the metadata key linking a source to its archived text

Publish = Callable[[BaseModel], Awaitable[None]]
Progress = Callable[..., Awaitable[None]]


def chars_to_tokens(chars: int) -> int:
    """The fidelity record's estimate: a token is about four characters."""
    return chars // 4


class Digestor:
    def __init__(
        self,
        *,
        settings: Any,  # DigestSettings
        texts: Any,  # TextStore: get(key) -> str
        archive: Archive,
        cache: DigestCache,
        breaker: CircuitBreaker,
        metrics: DigestMetrics,
        publish: Publish,
        llm: Any = None,  # the job-bound LLM client (ctx.llm); None: offline engine
        progress: Progress | None = None,
        deadline: Any = None,  # the job's shared.runtime.deadline.Deadline; None: none
    ) -> None:
        self.settings = settings
        self.texts = texts
        self.archive = archive
        self.cache = cache
        self.breaker = breaker
        self.metrics = metrics
        self.publish = publish
        self.llm = llm
        self.progress = progress
        self.deadline = deadline
        self.limits = DigestLimits.of(settings)
        self._job_id = ""
        self._iteration = 0
        self._done = 0
        self._total = 0

    @property
    def engine(self) -> str:
        return "offline" if self.llm is None or self.llm.offline else str(self.llm.label)

    def config(self, source: Source) -> dict[str, Any]:
        """Everything besides the text and the question that shapes a digest."""
        return {
            "engine": self.engine, "prompt": PROMPT_VERSION, "max_snippets": self.limits.max_snippets,
            "max_chars": self.limits.max_chars, "include_evidence": self.limits.include_evidence,
            "model_max_chars": self.limits.model_max_chars, "pages": source.page_starts,
        }

    def key(self, source: Source, qhash: str) -> str:
        return cache_key(source_id=source.id, content_hash=source.text_hash, query_hash=qhash,
                         config_hash=config_hash(self.config(source)), version=DIGEST_IMPL_VERSION)

    async def run(self, envelope: JobEnvelope) -> list[Source]:
        """The envelope's sources, each digested or passed through with a reason."""
        self._job_id, self._iteration = envelope.job_id, envelope.iteration
        self.breaker.reset()  # a new iteration gets a fresh start
        question = envelope.request.question
        # Conditioned on what the claim step will look for: the sub-questions and the
        # checklist items still open (services/scoring/passages.py ranks by the same).
        plan = envelope.plan
        focus = [*(sq.text for sq in plan.sub_questions),
                 *(i.description for i in plan.checklist if i.status is not CoverageStatus.SATISFIED)] if plan else []
        qhash = conditioning_hash(question, focus)
        # A source taken over from an earlier, similar job keeps that job's digest.
        reused = set(envelope.reused.source_ids) if envelope.reused else set()
        pending = [s for s in envelope.sources if not _current(s, short_hash(question)) and s.id not in reused]
        selection = select(pending, policy=self.settings.digest_policy, min_chars=self.settings.digest_min_chars,
                           max_sources=self.settings.digest_max_sources)
        self._done, self._total = 0, len(pending)
        out: dict[str, Source] = {}
        for source, reason in selection.skipped:
            out[source.id] = await self._skip(source, reason, outcome="skipped")
            await self._advance()

        slots = asyncio.Semaphore(self.settings.digest_max_concurrent)

        async def one(source: Source) -> None:
            async with slots:
                out[source.id] = await self._one(source, question, focus, qhash)
            await self._advance()

        try:
            async with asyncio.TaskGroup() as group:
                for source in selection.chosen:
                    group.create_task(one(source))
        except BaseExceptionGroup as eg:
            # The runner maps our error types to retry/fail; hand it the first one.
            raise eg.exceptions[0] from None
        if not pending and self.progress:
            await self.progress(1.0, "no new sources to digest", digested=0, skipped=0, sources=0)
        return [out.get(s.id, s) for s in envelope.sources]

    async def _advance(self) -> None:
        self._done += 1
        if self.progress:
            await self.progress(self._done / self._total, "digest batch", done=self._done, sources=self._total)

    async def _one(self, source: Source, question: str, focus: list[str], qhash: str) -> Source:
        if self._time_left() <= 0:  # also a source still waiting for a slot when the deadline came
            return await self._skip(source, DigestSkipReason.DEADLINE, outcome="deadline")
        key = self.key(source, qhash)
        hit = await self.cache.get(key)
        if hit is not None:
            payload, where = hit
            self.metrics.cache_hits.labels(cache=where).inc()
            if not await self.archive.has(_archive_key(payload)):
                await self.archive.put(await self.texts.get(source.text_hash), self._pages(source, payload.original_chars))
            await self._completed(source, payload, cached=True, duration_s=0.0)
            self.metrics.sources_processed.labels(outcome="cached").inc()
            return self._digested(source, payload)
        if not self.breaker.allow():
            return await self._skip(source, DigestSkipReason.CIRCUIT_OPEN, outcome="skipped")

        await self._emit(DigestStarted(job_id=self._job_id, iteration=self._iteration, source_id=source.id))
        started = time.monotonic()
        try:
            payload = await asyncio.wait_for(self._compute(source, question, focus, key),
                                             min(self.settings.digest_timeout_s, self._time_left()))
        except TimeoutError:
            if self.deadline is not None and self.deadline.passed:
                # Not the digest's fault: no digest.error, and the breaker does not count it.
                return await self._skip(source, DigestSkipReason.DEADLINE, outcome="deadline")
            await self._failed(source, f"digest took longer than DIGEST_TIMEOUT_S={self.settings.digest_timeout_s:g}s")
            return await self._skip(source, DigestSkipReason.TIMEOUT, outcome="timeout")
        except LLMAuthError:
            raise  # every digest would fail the same way: fail the job with the setting to fix
        except Exception as exc:  # noqa: BLE001 - any other failure of one digest is a typed digest.error event and a skip, never silence
            log.warning("digest of %s failed", source.id, exc_info=True)
            await self._failed(source, f"{type(exc).__name__}: {exc}")
            return await self._skip(source, DigestSkipReason.ERROR, outcome="error")
        duration = time.monotonic() - started
        await self._record(True)
        self.metrics.duration.observe(duration)
        self.metrics.sources_processed.labels(outcome="digested").inc()
        await self._completed(source, payload, cached=False, duration_s=duration)
        return self._digested(source, payload)

    def _time_left(self) -> float:
        return self.deadline.remaining() if self.deadline is not None else math.inf

    async def _compute(self, source: Source, question: str, focus: list[str], key: str) -> DigestPayload:
        text = await self.texts.get(source.text_hash)
        pages = self._pages(source, len(text))
        if source.page_starts and pages is None:
            problem = page_map_problem(source.page_starts, len(text))
            await self._emit(DigestPdfExtractError(job_id=self._job_id, iteration=self._iteration, source_id=source.id,
                                                   error=f"page locators unavailable: {problem}"))
        result = await compress(self.llm, text, source=source, question=question, focus=focus, limits=self.limits)
        if result.dropped_quotes:
            log.info("digest of %s: dropped %d model quote(s) not found in the text", source.id, result.dropped_quotes)
        payload = with_pages(result.payload, pages) if pages else result.payload
        await self.archive.put(text, pages)
        await self.cache.put(key, payload)
        return payload

    @staticmethod
    def _pages(source: Source, text_chars: int) -> list[int] | None:
        if source.page_starts and page_map_problem(source.page_starts, text_chars) is None:
            return list(source.page_starts)
        return None

    async def _record(self, ok: bool) -> None:
        if self.breaker.record(ok):
            log.warning("digest circuit breaker opened: %d of %d recent digests failed", self.breaker.failures, self.breaker.samples)
            await self._emit(DigestCircuitBreakerTriggered(
                job_id=self._job_id, iteration=self._iteration, failures=self.breaker.failures,
                samples=self.breaker.samples, failure_ratio=round(self.breaker.failure_ratio, 4),
            ))

    async def _failed(self, source: Source, error: str) -> None:
        await self._record(False)
        await self._emit(DigestError(job_id=self._job_id, iteration=self._iteration, source_id=source.id, error=error))

    async def _completed(self, source: Source, payload: DigestPayload, *, cached: bool, duration_s: float) -> None:
        self.metrics.compression_ratio.observe(payload.compression_ratio)
        self.metrics.evidence_snippets.observe(len(payload.evidence_snippets))
        await self._emit(DigestCompleted(
            job_id=self._job_id, iteration=self._iteration, source_id=source.id, cached=cached,
            duration_s=round(duration_s, 4), original_chars=payload.original_chars, digest_chars=payload.digest_chars,
            compression_ratio=payload.compression_ratio, evidence_snippets=len(payload.evidence_snippets),
            engine=self.engine,
        ))

    def _digested(self, source: Source, payload: DigestPayload) -> Source:
        return source.model_copy(update={
            "digest": payload,
            "fidelity": FidelityRecord(
                source_id=source.id, original_tokens=chars_to_tokens(payload.original_chars),
                final_tokens=chars_to_tokens(payload.digest_chars), reason="digest_compression",
            ),
            "metadata": {**source.metadata, ARCHIVE_LINK: payload.source_text_hash},
        })

    async def _skip(self, source: Source, reason: DigestSkipReason, *, outcome: str) -> Source:
        self.metrics.sources_processed.labels(outcome=outcome).inc()
        await self._emit(DigestSkipped(job_id=self._job_id, iteration=self._iteration, source_id=source.id, reason=reason))
        tokens = chars_to_tokens(source.text_chars)
        # A digest of this very text (for an earlier question) still verifies; one of
        # a text that has since changed does not, so it goes.
        keep = source.digest if source.digest and source.digest.source_text_hash == hash_label(source.text_hash) else None
        return source.model_copy(update={
            "digest": keep,
            "fidelity": FidelityRecord(source_id=source.id, original_tokens=tokens, final_tokens=tokens,
                                       reason=f"digest_skipped:{reason.value}"),
        })

    async def _emit(self, event: BaseModel) -> None:
        await self.publish(event)


def _current(source: Source, qhash: str) -> bool:
    """Whether the source already has this question's digest of its current text."""
    d = source.digest
    return d is not None and d.query_hash == qhash and d.source_text_hash == hash_label(source.text_hash)


def _archive_key(payload: DigestPayload) -> str:
    return payload.source_text_hash.replace("sha256:", "sha256-", 1)
