"""The synthesis service.

Consumes ``research.stage.synthesize``; emits ``research.events.<job_id>.completed``
carrying the result (report, seed 001 output object, scored sources, claims,
confidence, usage), which the gateway persists. The report is extractive (written
without an LLM, and says so); every ``[n]`` resolves to its Sources list.
"""

from __future__ import annotations

from faststream.nats import NatsMessage

from services.synthesis.report import build_report
from shared import subjects
from shared.envelope import DEADLINE_NOTE, JobEnvelope
from shared.llm import BUDGET_NOTE
from shared.events import JobCompleted
from shared.settings import StageSettings
from shared.stage import StageContext, stage_app
from shared.subjects import Stage

settings = StageSettings()
broker, app, runner = stage_app(Stage.SYNTHESIZE, settings)


@broker.subscriber(subjects.SYNTHESIZE, **runner.subscriber_options())
async def on_synthesize(msg: NatsMessage) -> None:
    await runner.handle(msg, synthesize_job)


async def synthesize_job(envelope: JobEnvelope, ctx: StageContext) -> JobCompleted:
    reasons = []
    if DEADLINE_NOTE in envelope.notes:
        reasons.append("the job's time budget ran out before research finished")
    if BUDGET_NOTE in envelope.notes:
        reasons.append("the job's token budget (RESEARCH_MAX_TOKENS_PER_JOB) was spent before research finished")
    result = build_report(ctx.llm.apply(envelope), partial_reason="; ".join(reasons) or None)
    await ctx.progress(1.0, "report written", sources=len(result.output.sources), claims=len(result.claims))
    return JobCompleted(job_id=envelope.job_id, result=result)
