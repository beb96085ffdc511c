"""The gateway's side of the job lifecycle: admission, events from the stages,
dead letters, expiry. The gateway is the only writer of job state; stages report
through events and this module persists them."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from datetime import timedelta

import nats.js.errors
from nats.js import JetStreamContext
from pydantic import ValidationError
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel.ext.asyncio.session import AsyncSession

from services.gateway import jobs
from services.gateway.models import Job
from shared import subjects
from shared.envelope import JobEnvelope, ResearchRequest
from shared.events import (
    ClarificationRequested,
    JobCompleted,
    JobFailed,
    JobStatus,
    JobStatusChanged,
    ProgressEvent,
    StageEvent,
    StageState,
    parse_event,
)
from shared.settings import GatewaySettings
from shared.stage import MSG_ID, publish_event, publish_json
from shared.subjects import Stage

log = logging.getLogger(__name__)


class Lifecycle:
    def __init__(self, settings: GatewaySettings, sessions: async_sessionmaker[AsyncSession], js: JetStreamContext) -> None:
        self.settings = settings
        self.sessions = sessions
        self.js = js
        self._kick = asyncio.Event()
        self._admission_lock = asyncio.Lock()

    # -- transitions -------------------------------------------------------------

    async def announce(self, t: jobs.Transition | None) -> None:
        """Emit the status event of a persisted transition."""
        if t is None:
            return
        event = JobStatusChanged(job_id=t.job_id, status=t.status, previous=t.previous, reason=t.reason)
        await publish_event(self.js, event, f"{t.job_id}:status:{t.status.value}")
        if t.status.terminal:
            self.kick()

    def kick(self) -> None:
        """Ask the admission loop to look for free slots now."""
        self._kick.set()

    async def stop_stages(self, job_id: str, status: JobStatus) -> None:
        """Tell every stage to drop this job; a key for a job that turns out to be
        finished already is harmless."""
        kv = await self.js.key_value(subjects.CONTROL_BUCKET)
        await kv.put(job_id, status.value.encode())

    async def cancel(self, job_id: str) -> jobs.Transition | None:
        # The stages first, so in-flight work stops as soon as possible.
        await self.stop_stages(job_id, JobStatus.CANCELLED)
        async with self.sessions() as session:
            t = await jobs.cancel_job(session, job_id=job_id)
        await self.announce(t)
        return t

    # -- admission -----------------------------------------------------------------

    def envelope_for(self, job: Job) -> JobEnvelope:
        started = job.started_at or job.created_at
        return JobEnvelope(
            job_id=job.id,
            user_id=job.user_id,
            stage=Stage.PLAN,
            iteration=0,
            request=ResearchRequest(
                question=job.question, context=job.context, max_iterations=job.max_iterations, corpora=job.corpora,
                providers=job.providers, clarify=job.clarify, clarification=job.clarification,
            ),
            created_at=job.created_at,
            deadline_at=started + timedelta(seconds=self.settings.research_job_deadline_s),
        )

    async def admit_once(self) -> int:
        async with self._admission_lock, self.sessions() as session:
            admitted = await jobs.admit(session, max_concurrency=self.settings.research_max_concurrency)
            for job in admitted:
                envelope = self.envelope_for(job)
                # A job resumed after clarification plans again: a new Msg-Id, or
                # JetStream would drop it as a duplicate of the first plan command.
                msg_id = envelope.msg_id + (":clarified" if job.clarification is not None else "")
                await publish_json(self.js, subjects.PLAN, envelope, msg_id)
            await session.commit()
        for job in admitted:
            await self.announce(jobs.Transition(job.id, job.status, JobStatus.QUEUED))
        return len(admitted)

    async def admission_loop(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._kick.wait(), self.settings.research_admission_interval_s)
            self._kick.clear()
            try:
                await self.admit_once()
            except (SQLAlchemyError, OSError, TimeoutError) as exc:
                log.warning("admission pass failed, will retry: %s", exc)

    async def expiry_loop(self) -> None:
        interval_s = min(30.0, self.settings.research_job_ttl_s / 4)
        while True:
            try:
                async with self.sessions() as session:
                    expired = await jobs.expire_jobs(session, ttl_s=self.settings.research_job_ttl_s)
                for t in expired:
                    await self.stop_stages(t.job_id, JobStatus.EXPIRED)
                    await self.announce(t)
            except (SQLAlchemyError, OSError, TimeoutError) as exc:
                log.warning("expiry pass failed, will retry: %s", exc)
            await asyncio.sleep(interval_s)

    # -- events from the stages ---------------------------------------------------------

    async def apply_event(self, data: bytes) -> None:
        try:
            event = parse_event(data)
        except ValidationError as exc:
            log.error("dropping an event that is not a job event: %s", exc)
            return
        async with self.sessions() as session:
            match event:
                case ProgressEvent():
                    await jobs.record_progress(session, job_id=event.job_id, stage=event.stage.value, iteration=event.iteration, within=event.progress)
                case StageEvent(state=StageState.STARTED):
                    await jobs.record_progress(session, job_id=event.job_id, stage=event.stage.value, iteration=event.iteration, within=0.0)
                case StageEvent(state=StageState.DONE, usage=usage) if usage is not None and usage.calls:
                    await jobs.record_usage(session, job_id=event.job_id, usage=usage)
                case ClarificationRequested():
                    await self.announce(await jobs.await_input(session, job_id=event.job_id, questions=event.questions, usage=event.usage))
                    self.kick()
                case StageEvent(state=StageState.RETRYING):
                    await jobs.record_retry(session, job_id=event.job_id, stage=event.stage.value, delivery=event.delivery, error=event.error or "")
                case JobCompleted():
                    await self.announce(await jobs.complete_job(session, job_id=event.job_id, result=event.result))
                case JobFailed():
                    await self.announce(await jobs.fail_job(session, job_id=event.job_id, reason=event.reason))
                case _:
                    pass  # our own status events, stage done/skipped: nothing to persist

    async def clarify(self, job_id: str, answer: str) -> jobs.Transition | None:
        async with self.sessions() as session:
            t = await jobs.answer_clarification(session, job_id=job_id, answer=answer)
        await self.announce(t)
        self.kick()
        return t

    async def apply_dead_letter(self, data: bytes) -> None:
        """A stage command hit max_deliver (its process crashed or timed out on every
        attempt): fail the job, naming the stage and the last error we heard of."""
        try:
            advisory = json.loads(data)
            seq = int(advisory["stream_seq"])
        except (ValueError, KeyError, TypeError):
            log.error("unreadable MAX_DELIVERIES advisory: %r", data[:200])
            return
        consumer = advisory.get("consumer", "?")
        deliveries = advisory.get("deliveries", "?")
        try:
            raw = await self.js.get_msg(subjects.JOBS_STREAM, seq)
        except nats.js.errors.NotFoundError as exc:  # aged out of the stream: no job to fail any more
            log.error("dead letter seq %s of %s is gone (%s)", seq, consumer, exc)
            return
        # Any other error (a timeout, a lost connection) propagates: the advisory is
        # redelivered and the job still gets failed.
        job_id = ((raw.headers or {}).get(MSG_ID) or "").split(":")[0]
        if not job_id:
            log.error("dead letter seq %s has no job id", seq)
            return
        async with self.sessions() as session:
            job = await jobs.get_job(session, job_id=job_id)
            last = f"; last error: {job.error}" if job and job.error else ""
            reason = f"{consumer} gave up after {deliveries} deliveries{last}"
            await self.announce(await jobs.fail_job(session, job_id=job_id, reason=reason))
