"""The synthesis service.

Consumes ``research.stage.synthesize``; emits ``research.events.<job_id>.completed``
carrying the result (report, output object, scored sources, claims,
Verified Findings, confidence, usage, sentences removed), which the gateway persists,
and, with a council configured, a ``council`` event per member's review of the
verified findings.

Guarantees: the model writes prose only, citing claim ids; code renders the
citations, checks every sentence against its claims' quotes and removes what it
cannot support (writer.py, verify.py); every ``[n]`` resolves to its Sources list.
Without a model, with an unusable answer or a spent budget, the offline engine
writes the report and says so. Every source reaching this stage has its canonical
text archived for verification, so ``GET …/sources/{id}/verify`` answers for any
source the report cites, digested or not.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from nats.js.errors import BucketNotFoundError

from services.synthesis.cost import with_cost
from services.synthesis.report import build_report, prepare
from services.synthesis.levels import NO_MODEL, TURNED_OFF, trace_of
from services.synthesis.writer import write_report
from shared import subjects
from shared.stores.archive import Archive
from shared.llm.council import Council, brief_reviews_from_notes
from shared.verification.judge import Judge, make_verifier_engine
from shared.verification.clauses import warm_up
from shared.runtime.deadline import DEADLINE_PREFIX
from shared.research.envelope import DEADLINE_NOTE, JobEnvelope, ScoredSource
from shared.platform.errors import PermanentError
from shared.research.events import CouncilReview, CouncilReviewed, JobCompleted, ResearchResult
from shared.llm.budget import BUDGET_NOTE, COST_NOTE
from shared.settings import StageSettings
from shared.runtime.app import stage_app
from shared.runtime.stage import StageContext
from shared.subjects import Stage

log = logging.getLogger(__name__)

settings = StageSettings()
broker, app, runner = stage_app(Stage.SYNTHESIZE, settings)
council = Council.from_settings(settings)
# The entailment judge's engine (RESEARCH_VERIFIER_MODEL; empty: the job's own model).
verifier = make_verifier_engine(settings, runner.llm)
warm_up()  # the meaning checks' tables, loaded before the first job rather than during it
JUDGE_OFF = TURNED_OFF if settings.research_verifier_model.strip().lower() == "off" else NO_MODEL


def _partial_reason(envelope: JobEnvelope, cuts: Sequence[str] = ()) -> str | None:
    reasons = []
    if DEADLINE_NOTE in envelope.notes or cuts:
        cut = dict.fromkeys(n.removeprefix(DEADLINE_PREFIX).strip() for n in [*envelope.notes, *cuts]
                            if n.startswith(DEADLINE_PREFIX))
        reasons.append("the job's time budget ran out before research finished"
                       + (f" (cut at the deadline: {'; '.join(cut)})" if cut else ""))
    if BUDGET_NOTE in envelope.notes:
        reasons.append("the job's token budget (RESEARCH_MAX_TOKENS_PER_JOB) was spent before research finished")
    if COST_NOTE in envelope.notes:
        reasons.append("the job's cost limit (max_cost_usd, or RESEARCH_MAX_COST_USD) was reached before research "
                       "finished")
    return "; ".join(reasons) or None


async def archive_for_verification(envelope: JobEnvelope, ctx: StageContext) -> int:
    """Archive the canonical text of every source without a digest (the digest stage
    archived the others), so its citations can be verified later; the count archived.

    Why here and not in the gateway's verify route reading the text store: the archive
    keeps each text with its PDF page map and for DIGEST_ARCHIVE_RETENTION_DAYS, the
    same for every source, and the route stays one code path (key -> archived text ->
    check each locator). The digest stage runs before this one, so the bucket exists.
    """
    archive = Archive(ctx.js)

    async def one(source: ScoredSource) -> bool:
        try:
            text = await ctx.texts.get(source.text_hash)
        except PermanentError as exc:
            log.warning("source %s cannot be archived for verification: %s", source.id, exc)
            return False
        await archive.put(text, source.page_starts)
        return True

    pending = [s for s in envelope.scored_sources if s.digest is None and s.text_chars > 0]
    try:
        done = await asyncio.gather(*(one(s) for s in pending))
    except BucketNotFoundError:
        log.error("the verification archive %s does not exist (has the digest service ever started?): "
                  "%d undigested sources cannot be verified", subjects.DIGEST_ARCHIVE_BUCKET, len(pending))
        return 0
    return sum(done)


async def _write(envelope: JobEnvelope, ctx: StageContext, reviews: list[CouncilReview]) -> ResearchResult:
    """The report. A model still writing at the job's deadline is cut, and the offline
    engine writes the report, saying why."""
    if envelope.reused is not None and envelope.reused.covered:
        # The question repeats one whose research answered it: the report is assembled
        # from those verified claims, with no model writing (the methodology says so).
        return build_report(envelope, partial_reason=_partial_reason(envelope),
                            findings_max=settings.research_verified_findings_max, council=reviews)
    writing = write_report(
        envelope, ctx.llm, partial_reason=_partial_reason(envelope),
        findings_max=settings.research_verified_findings_max, min_support=settings.grounding_min_support,
        council=reviews, judge=Judge(ctx.llm, verifier) if verifier is not None else None, judge_off=JUDGE_OFF,
    )
    if ctx.llm.offline:  # nothing slow to cut
        return await writing
    return await ctx.deadline.bounded(
        writing, cut="synthesize: the model's report (the offline engine wrote it)",
        default=lambda: offline_report(envelope, ctx, reviews, "the job's deadline came while the model was writing it"),
    )


def offline_report(envelope: JobEnvelope, ctx: StageContext, reviews: Sequence[CouncilReview], why: str) -> ResearchResult:
    return build_report(envelope, partial_reason=_partial_reason(envelope, ctx.deadline.cuts),
                        findings_max=settings.research_verified_findings_max, council=reviews, fallback_reason=why)


@runner.work  # up to RESEARCH_STAGE_CONCURRENCY at once; routes: shared/runtime/routing.py
async def synthesize_job(envelope: JobEnvelope, ctx: StageContext) -> JobCompleted:
    archived = await archive_for_verification(envelope, ctx)
    reviews = brief_reviews_from_notes(envelope.notes)
    if council:
        findings = await ctx.deadline.bounded(council.review_findings(envelope, prepare(envelope).claims, ctx.llm),
                                              default=list, cut="synthesize: the council's review of the findings")
        for n, review in enumerate(findings):
            await ctx.event(CouncilReviewed(job_id=envelope.job_id, stage=Stage.SYNTHESIZE, review=review),
                            f"{envelope.msg_id}:council:findings:{n}")
        reviews += findings
    result = await _write(envelope, ctx, reviews)
    judging = trace_of(result.verification)
    if judging is not None:
        ctx.trace["judge"] = judging.model_dump()
    # The result's usage includes this stage's own calls (report, re-ask, council), and so
    # does the methodology's cost line.
    result = with_cost(result.model_copy(update={"usage": ctx.llm.usage()}))
    await ctx.progress(1.0, "report written", sources=len(result.output.sources), claims=len(result.claims),
                       sentences_removed=result.sentences_removed, archived=archived)
    return JobCompleted(job_id=envelope.job_id, result=result)


@runner.on_deadline  # the runner cut synthesize_job past the deadline (RESEARCH_DEADLINE_GRACE_S)
async def synthesize_at_deadline(envelope: JobEnvelope, ctx: StageContext) -> JobCompleted:
    reviews = brief_reviews_from_notes(envelope.notes)
    result = offline_report(envelope, ctx, reviews, "the synthesis stage was still working past the job's deadline")
    return JobCompleted(job_id=envelope.job_id, result=with_cost(result.model_copy(update={"usage": ctx.llm.usage()})))
