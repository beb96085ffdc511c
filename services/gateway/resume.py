"""Resuming a job that failed, expired or was cancelled, from its last finished stage.

``POST /api/research/jobs/{id}/resume`` moves the job back to QUEUED (one more resume
counted on its row); admission then starts it like any other job, under the same
concurrency limit, with the envelope of its latest checkpoint (:mod:`shared.stores.checkpoints`)
instead of a new plan command:

- the checkpoint is the envelope the last finished stage handed on, so the stage that
  failed runs again with everything before it kept: the queries already run (retrieval
  skips them), the sources, digests and claims, and the usage so far;
- the deadline is a fresh one, counted from the new start;
- the run that ended is stopped in the control bucket up to its resume count, so a
  command it left waiting in a stream is dropped while the resumed run goes on;
- the resume count travels in the envelope and is part of every message id, so
  JetStream's duplicate window does not drop the resumed run's commands and events as
  copies of the first run's;
- the spend ledger continues from the job's recorded tokens (it may have aged out with
  the job's TTL), so the token budget counts what the job spent before.

A job with no checkpoint (it failed while planning) plans again from the start.
"""

from __future__ import annotations

import logging

from nats.js import JetStreamContext
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from services.gateway import jobs
from services.gateway.models import Job
from shared.stores import checkpoints, control
from shared.research.envelope import DEADLINE_NOTE, JobEnvelope, utcnow
from shared.platform.errors import PermanentError
from shared.research.events import JobStatus
from shared.stores.spend import KvSpendLedger

__all__ = ["RESUMABLE", "carry_spend", "request_resume", "resumed_envelope"]

log = logging.getLogger(__name__)

RESUMABLE = (JobStatus.FAILED, JobStatus.EXPIRED, JobStatus.CANCELLED)


async def request_resume(sessions: async_sessionmaker[AsyncSession], js: JetStreamContext, *, job_id: str) -> jobs.Transition | None:
    """FAILED, EXPIRED or CANCELLED -> QUEUED, one more resume counted; None (and
    nothing changed) when the job is in another status.

    The ended run is stopped in the control bucket first (:func:`shared.stores.control.stop_run`,
    which also covers a job that failed without a key): a command it handed on as it
    ended may still wait in a stream, and must be dropped rather than run beside the
    resumed run. The resumed run counts one resume more, so the key does not stop it."""
    async with sessions() as session:
        ended = (await session.exec(select(Job.status, Job.resumes).where(Job.id == job_id))).first()
    if ended is not None and ended[0] in RESUMABLE:
        await control.stop_run(js, job_id, JobStatus(ended[0]).value, ended[1])
    async with sessions() as session:
        t = await jobs._transition(  # noqa: SLF001 - the one locked, status-checked transition of the module
            session, job_id=job_id, to=JobStatus.QUEUED, from_=RESUMABLE, reason="resumed by the user",
            values={"resumes": Job.resumes + 1, "resumed_at": utcnow(), "finished_at": None, "error": None,
                    "partial": False},
        )
        await session.commit()
    return t


async def carry_spend(js: JetStreamContext, job: Job) -> bool:
    """Bring the job's spend ledger up to the tokens recorded on its row: the ledger
    expires with the job's TTL, and a resumed job's budget counts what it spent before.
    False, with a log line, when the ledger cannot be written: the stages then count
    the checkpoint's usage, which may miss a failed stage's spend."""
    recorded = job.input_tokens + job.output_tokens
    ledger = KvSpendLedger(js)
    try:
        spent = await ledger.spent(job.id)
        if recorded > spent:
            await ledger.add(job.id, recorded - spent)
    except Exception as exc:  # noqa: BLE001 - the budget then counts the envelope's usage
        log.warning("job %s: spend ledger not carried over (%s: %s); the resumed run's budget counts the checkpoint's usage",
                    job.id, type(exc).__name__, exc)
        return False
    return True


async def resumed_envelope(js: JetStreamContext, job: Job, fresh: JobEnvelope) -> JobEnvelope:
    """The command a resumed job starts with: its latest checkpoint with a fresh
    deadline (``fresh``'s, the envelope a new job would get) and the resume count; or
    ``fresh`` itself when there is no usable checkpoint. A checkpoint that cannot be
    read for now raises (admission tries again); one that can never be read is logged
    and the job plans again."""
    try:
        checkpoint = await checkpoints.latest(js, job.id)
    except PermanentError as exc:
        log.error("job %s: %s; it resumes from planning", job.id, exc)
        checkpoint = None
    if checkpoint is None:
        log.warning("job %s has no checkpoint: it resumes from planning", job.id)
        return fresh.model_copy(update={"resumes": job.resumes})
    log.info("job %s resumes (run %d) at %s, iteration %d, %d sources, %d queries already run",
             job.id, job.resumes + 1, checkpoint.stage, checkpoint.iteration, len(checkpoint.sources),
             len(checkpoint.queries_run))
    # A resumed job tries its model provider again: what was down when it stopped may be back.
    return checkpoint.model_copy(update={
        "resumes": job.resumes,
        "deadline_at": fresh.deadline_at,
        "notes": [n for n in checkpoint.notes if n != DEADLINE_NOTE],
        "degraded": None,
    })
