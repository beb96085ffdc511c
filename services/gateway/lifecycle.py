"""The gateway's side of the job lifecycle: admission, events from the stages,
dead letters, expiry, and the outbox relay that announces what they commit. The
gateway is the only writer of job state; stages report through events and this module
persists them.

Every background loop runs under :func:`services.gateway.loops.supervise`: no exception
ends it, and ``/readyz`` names a loop that keeps failing.
"""

from __future__ import annotations

import asyncio
import json
import logging
from datetime import timedelta
from typing import Any

import nats.errors
import nats.js.errors
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import RawStreamMsg
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import async_sessionmaker
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from services.gateway import db, jobs, outbox, plan_review, resume, reuse, storage, traces
from services.gateway.progress import coalesce
from services.gateway.loops import LoopHealth, Loops
from services.gateway.models import Job
from shared import subjects
from shared.stores import control, topology
from shared.research.envelope import JobEnvelope, ResearchRequest
from shared.research.events import (
    ClarificationRequested,
    JobCompleted,
    JobFailed,
    JobStatus,
    PlanReviewRequested,
    ProgressEvent,
    StageEvent,
    StageState,
    parse_event,
)
from shared.platform.logs import job_context
from shared.settings import GatewaySettings
from shared.runtime.publishing import MSG_ID
from shared.subjects import Stage

__all__ = ["LOOP_CONNECTIONS", "Lifecycle", "is_outage"]

log = logging.getLogger(__name__)

FETCH_BATCH = 20  # dead-letter advisories per fetch
# Database connections the loops hold at most, besides the outcome consumer's: events,
# relay, admission, expiry, the two dead-letter loops and the metrics pass.
LOOP_CONNECTIONS = 7


# Events that move a job to another status: one that cannot be read fails its job.
OUTCOME_KINDS = frozenset(subjects.OUTCOME_KINDS)


class UnreadableEvent(ValueError):
    """An outcome event that does not parse."""


def is_outage(exc: BaseException) -> bool:
    """An error that says the database (or the network to it) is unavailable, not that
    this particular message is bad: waiting helps, giving up on the message would not."""
    return db.is_unavailable(exc)


class Lifecycle:
    def __init__(self, settings: GatewaySettings, sessions: async_sessionmaker[AsyncSession], js: JetStreamContext) -> None:
        self.settings = settings
        self.sessions = sessions
        self.js = js
        self.loops = Loops()
        self._kick = asyncio.Event()
        self._relay_kick = asyncio.Event()
        self._admission_lock = asyncio.Lock()
        self._subs: dict[str, JetStreamContext.PullSubscription] = {}
        self.event_store_full: str | None = None
        """Set while the outbox relay's publishes find JetStream's store full (the
        error); submissions are refused meanwhile. Cleared by the next pass that
        publishes everything pending, which the relay retries every few seconds."""

    # -- loops -------------------------------------------------------------------------

    def start(self) -> None:
        """Start every background loop (the lifespan stops them with ``loops.stop()``)."""
        s = self.settings
        self.loops.start("outbox-relay", self.relay_once, interval_s=s.gateway_outbox_interval_s, wake=self._relay_kick)
        self.loops.start("admission", self.admit_once, interval_s=s.research_admission_interval_s, wake=self._kick)
        self.loops.start("expiry", self.expire_once, interval_s=min(30.0, s.research_job_ttl_s / 4))
        # A fetch waits up to a second for messages, so these passes pace themselves.
        self.loops.start("events", self.events_once, interval_s=0.01)
        self.loops.start("outcomes", self.outcomes_once, interval_s=0.01)
        self.loops.start("dead-letters", self.dead_letters_once, interval_s=0.01)
        self.loops.start("event-dead-letters", self.event_dead_letters_once, interval_s=0.01)
        self.kick()

    def kick(self) -> None:
        """Ask the admission loop to look for free slots, and the relay to publish."""
        self._kick.set()
        self._relay_kick.set()

    async def relay_once(self) -> int:
        try:
            published = await outbox.relay_once(self.sessions, self.js)
        except Exception as exc:
            if storage.is_event_store_full(exc):
                if self.event_store_full is None:
                    log.error("the JetStream store is full: submissions are refused until it has room again (%s)", exc)
                self.event_store_full = f"{type(exc).__name__}: {exc}"[:300]
            raise
        if self.event_store_full is not None:
            log.warning("the JetStream store has room again: submissions are accepted")
            self.event_store_full = None
        return published

    # -- transitions requested through the API ---------------------------------------------

    async def stop_stages(self, job_id: str, status: JobStatus) -> None:
        """Tell every stage to drop this job's current run (its resume count) and any
        earlier run's leftovers; a run resumed later goes on. A key for a job that
        turns out to be finished already is harmless."""
        async with self.sessions() as session:
            run = (await session.exec(select(Job.resumes).where(Job.id == job_id))).first()
        await control.stop_run(self.js, job_id, status.value, run or 0)

    async def cancel(self, job_id: str) -> jobs.Transition | None:
        # The stages first, so in-flight work stops as soon as possible (and a cancel
        # that cannot reach them fails before anything is committed).
        await self.stop_stages(job_id, JobStatus.CANCELLED)
        async with self.sessions() as session:
            t = await jobs.cancel_job(session, job_id=job_id)
        self.kick()
        return t

    async def clarify(self, job_id: str, answer: str) -> jobs.Transition | None:
        async with self.sessions() as session:
            t = await jobs.answer_clarification(session, job_id=job_id, answer=answer)
        self.kick()
        return t

    # -- admission and expiry -------------------------------------------------------------

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
                time_budget_s=job.time_budget_s, max_cost_usd=job.max_cost_usd,
                report_depth=job.report_depth or "standard", review_plan=job.review_plan,
            ),
            created_at=job.created_at,
            deadline_at=started + timedelta(seconds=job.time_budget_s or self.settings.research_job_deadline_s),
        )

    async def admit_once(self) -> int:
        """Admit what fits; the plan commands and status events go out through the
        outbox, so admission itself needs only PostgreSQL."""
        async with self._admission_lock, self.sessions() as session:
            admitted = await jobs.admit(session, max_concurrency=self.settings.research_max_concurrency,
                                        envelope_for=self.admission_envelope)
        if admitted:
            self._relay_kick.set()
        return len(admitted)

    async def admission_envelope(self, job: Job) -> JobEnvelope:
        """The first command of an admitted job: a resumed job's latest checkpoint
        (services/gateway/resume.py); a new job seeded from a similar job its user
        completed recently (services/gateway/reuse.py); else a plan command. A job that
        may ask clarifying questions is not seeded: its answers could change the question."""
        fresh = self.envelope_for(job)
        fresh = fresh.model_copy(update={"request": fresh.request.model_copy(update={"reuse": job.reuse})})
        if (approved := plan_review.continuation(job, fresh)) is not None:  # its user approved its plan
            return approved
        if job.resumes:
            return await resume.resumed_envelope(self.js, job, fresh)
        if job.parent_job_id is not None:  # a follow-up starts from its parent's research
            return await reuse.follow_up_envelope(self.js, fresh, job.parent_job_id)
        s = self.settings
        # Nor is one whose user reviews its plan: a seeded job may skip planning.
        if not job.reuse or job.clarify or job.review_plan or s.research_reuse_max_age_s <= 0:
            return fresh
        async with self.sessions() as session:
            candidate = await reuse.find_similar(session, job, max_age_s=s.research_reuse_max_age_s,
                                                 min_similarity=s.research_reuse_min_similarity)
        return fresh if candidate is None else await reuse.reused_envelope(self.js, fresh, candidate)

    async def expire_once(self) -> int:
        ttl_s = self.settings.research_job_ttl_s
        async with self.sessions() as session:
            candidates = await jobs.expiry_candidates(session, ttl_s=ttl_s)
        if not candidates:
            return 0
        # Stages first: a job is expired only once they have been told to drop it.
        for job_id in candidates:
            await self.stop_stages(job_id, JobStatus.EXPIRED)
        async with self.sessions() as session:
            expired = await jobs.expire_jobs(session, job_ids=candidates, ttl_s=ttl_s)
        self.kick()
        return len(expired)

    # -- consumers ---------------------------------------------------------------------------

    async def close(self) -> None:
        """Unsubscribe the durables' pull subscriptions (after the loops have stopped).
        A fetch cancelled by the stop can leave messages in a subscription's queue that
        nobody will read, and the connection's drain would wait its whole timeout for
        them; unread, they are redelivered to another gateway after the ack wait."""
        subs, self._subs = list(self._subs.items()), {}
        for durable, sub in subs:
            try:
                await sub.unsubscribe()
            except Exception as exc:  # noqa: BLE001 - shutting down: logged, the next one is still closed
                log.warning("pull subscription of %s not closed cleanly: %s: %s", durable, type(exc).__name__, exc)

    async def _fetch(self, durable: str, batch: int = FETCH_BATCH) -> list[Msg]:
        """One fetch from one of the gateway's durables (created if missing). A failed
        fetch forgets the subscription: the consumer or its stream may be gone."""
        sub = self._subs.get(durable)
        if sub is None:
            stream = await topology.ensure_gateway_consumer(self.js, durable, max_deliver=self.settings.gateway_event_max_deliver)
            sub = self._subs[durable] = await self.js.pull_subscribe_bind(durable, stream=stream)
        try:
            return await sub.fetch(batch, timeout=1.0)
        except (nats.errors.TimeoutError, asyncio.TimeoutError):
            # Nothing to fetch. nats-py raises either, depending on where the wait ends;
            # taking asyncio's for a failure leaked a subscription per idle second.
            return []
        except Exception:
            self._subs.pop(durable, None)
            try:
                await sub.unsubscribe()
            except Exception as exc:  # noqa: BLE001 - it is being replaced because it failed; the fetch's error is raised
                log.info("failed pull subscription of %s not unsubscribed: %s: %s", durable, type(exc).__name__, exc)
            raise

    @staticmethod
    def _job_of(msg: Msg) -> str:
        return msg.subject.split(".")[2]

    def _job_context(self, msg: Msg):  # noqa: ANN202
        # Log lines about this event (the database's, the handler's) name its job.
        return job_context(self._job_of(msg), "gateway", msg.metadata.num_delivered if msg.metadata else None)

    async def events_once(self) -> None:
        """One batch of progress and stage events: each job's latest state is stored,
        in one transaction. Every event has reached SSE and the subjects already (it
        is on NATS); the table only needs to be current, not to see every step."""
        msgs = await self._fetch(subjects.GATEWAY_EVENTS_DURABLE, self.settings.gateway_event_batch)
        if not msgs:
            return
        health = self.loops.health.get("events")
        updates = coalesce(msgs)
        stage_traces = traces.trace_events(msgs)  # stored in the same transaction
        if updates or stage_traces:
            try:
                await self._until_stored(
                    f"{len(msgs)} progress events", lambda: self._store_progress(updates, stage_traces), msgs, health,
                )
            except Exception as exc:  # noqa: BLE001 - the events are then stored one by one
                # Something in the batch is at fault, not the database: one by one,
                # each event gets its own retries, and its own verdict.
                log.error("a batch of %d progress events could not be stored; storing them one by one", len(msgs), exc_info=exc)
                for msg in msgs:
                    with self._job_context(msg):
                        await self.handle_event(msg, health)
                return
        for msg in msgs:
            await msg.ack()

    async def _store_progress(self, updates: dict[str, jobs.JobProgress], stage_traces: list[StageEvent]) -> None:
        async with self.sessions() as session:
            await traces.record_traces(session, stage_traces)
            await jobs.record_progress_batch(session, updates)  # commits both

    async def outcomes_once(self) -> None:
        """One fetch of outcome events (completed, failed, clarification), stored by
        jobs at once: a job's events in their order, different jobs concurrently."""
        msgs = await self._fetch(subjects.GATEWAY_OUTCOMES_DURABLE, self.settings.gateway_outcome_concurrency)
        by_job: dict[str, list[Msg]] = {}
        for msg in msgs:
            by_job.setdefault(self._job_of(msg), []).append(msg)
        health = self.loops.health.get("outcomes")

        async def handle(job_msgs: list[Msg]) -> None:
            for msg in job_msgs:
                with self._job_context(msg):
                    await self.handle_event(msg, health)

        await asyncio.gather(*(handle(m) for m in by_job.values()))

    async def _until_stored(self, what: str, action, msgs: list[Msg], health: LoopHealth | None) -> None:  # noqa: ANN001
        """Run ``action`` until it no longer fails for want of the database, keeping
        ``msgs`` ours meanwhile: an outage does not use up their deliveries."""
        failures = 0
        while True:
            try:
                await action()
                return
            except Exception as exc:
                if not is_outage(exc):
                    raise
                failures += 1
                if health is not None:
                    health.failed(exc)
                # Well inside the consumer's 30 s ack_wait: the heartbeat below keeps
                # the message ours, so an outage does not count as a delivery.
                delay = min(10.0, 0.5 * 2 ** min(failures, 10))
                log.error("%s: database unavailable (%d), retrying in %.1fs", what, failures, delay, exc_info=exc)
                try:
                    for msg in msgs:
                        await msg.in_progress()
                except Exception as nats_exc:  # noqa: BLE001 - the redelivery is then counted; logged
                    log.warning("%s: could not extend the ack deadline: %s", what, nats_exc)
                await asyncio.sleep(delay)

    async def handle_event(self, msg: Msg, health: LoopHealth | None = None) -> None:
        """Persist one event. A message that fails for a reason of its own is retried
        with a growing delay; on its last allowed delivery its job fails with the
        reason and the message is terminated, so a poison event costs a few log lines,
        not a loop, and never holds a slot."""
        what = f"event {msg.subject}"
        try:
            await self._until_stored(what, lambda: self.apply_event(msg.data, msg.subject), [msg], health)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a retry or a FAILED job
            delivered = msg.metadata.num_delivered if msg.metadata else 1
            limit = self.settings.gateway_event_max_deliver
            if delivered < limit:
                delay = min(30.0, self.settings.gateway_event_retry_delay_s * 2 ** (delivered - 1))
                log.error("%s could not be stored (delivery %d of %d), retrying in %.1fs", what, delivered, limit, delay, exc_info=exc)
                await msg.nak(delay=delay)
                return
            log.error("%s could not be stored after %d deliveries: failing its job", what, delivered, exc_info=exc)
            job_id = msg.subject.split(".")[2]
            kind = msg.subject.split(".")[3]
            reason = f"the gateway could not store the job's {kind} event after {delivered} attempts: {type(exc).__name__}: {exc}"[:2000]

            async def fail() -> None:
                async with self.sessions() as session:
                    await jobs.fail_job(session, job_id=job_id, reason=reason)

            await self._until_stored(f"failing job {job_id}", fail, [msg], health)
            await self.stop_stages(job_id, JobStatus.FAILED)
            self.kick()
            await msg.term()
            return
        await msg.ack()

    async def dead_letters_once(self) -> None:
        """One fetch of MAX_DELIVERIES advisories of the stage consumers."""
        msgs = await self._fetch(subjects.GATEWAY_DEADLETTER_DURABLE)
        await self._handle_advisories(msgs, self.apply_dead_letter)

    async def event_dead_letters_once(self) -> None:
        """One fetch of MAX_DELIVERIES advisories of the gateway's own event consumers:
        an event whose handling stopped the process on every attempt."""
        msgs = await self._fetch(subjects.GATEWAY_EVENTS_DEADLETTER_DURABLE)
        await self._handle_advisories(msgs, self.apply_event_dead_letter)

    async def _handle_advisories(self, msgs: list[Msg], handle) -> None:  # noqa: ANN001
        for msg in msgs:
            try:
                await handle(msg.data)
            except Exception as exc:  # noqa: BLE001 - redelivered until the job is failed
                log.error("dead letter %s not handled yet, retrying", msg.metadata.sequence.stream if msg.metadata else "?", exc_info=exc)
                await msg.nak(delay=min(30.0, 2.0 * (msg.metadata.num_delivered if msg.metadata else 1)))
                continue
            await msg.ack()

    async def _given_up(self, data: bytes, stream: str) -> tuple[dict[str, Any], RawStreamMsg] | None:
        """(advisory, the stored message it names) for a MAX_DELIVERIES advisory; None,
        with a log line, when the advisory is unreadable or its message aged out of
        ``stream`` (its job has expired too). Any other error (a timeout, a lost
        connection) propagates: the advisory is redelivered and the job still fails."""
        try:
            advisory = json.loads(data)
            seq = int(advisory["stream_seq"])
        except (ValueError, KeyError, TypeError):
            log.error("unreadable MAX_DELIVERIES advisory: %r", data[:200])
            return None
        try:
            return advisory, await self.js.get_msg(stream, seq)
        except nats.js.errors.NotFoundError as exc:
            log.error("%s seq %s named by a MAX_DELIVERIES advisory of %s is gone (%s)",
                      stream, seq, advisory.get("consumer", "?"), exc)
            return None

    async def apply_event_dead_letter(self, data: bytes) -> None:
        given_up = await self._given_up(data, subjects.EVENTS_STREAM)
        if given_up is None:
            return
        advisory, raw = given_up
        seq = raw.seq
        parts = (raw.subject or "").split(".")
        if len(parts) != 4:
            log.error("dead event seq %s has an unexpected subject %r", seq, raw.subject)
            return
        job_id, kind = parts[2], parts[3]
        reason = f"the gateway gave up on the job's {kind} event after {advisory.get('deliveries', '?')} deliveries (its handling never finished)"
        log.error("job %s: %s", job_id, reason)
        async with self.sessions() as session:
            failed = await jobs.fail_job(session, job_id=job_id, reason=reason)
        if failed:
            await self.stop_stages(job_id, JobStatus.FAILED)
            self.kick()

    # -- events from the stages ---------------------------------------------------------

    async def apply_event(self, data: bytes, subject: str = "") -> None:
        try:
            event = parse_event(data)
        except ValidationError as exc:
            kind = subject.split(".")[3] if subject.count(".") == 3 else ""
            if kind in OUTCOME_KINDS:
                # The job's outcome is in there: dropping it would leave the job
                # running until it expired. Retried, then the job fails with this.
                raise UnreadableEvent(f"unreadable {kind} event: {exc.errors()[0].get('msg', exc)}") from exc
            log.error("dropping an unreadable %s event (it changes no job state): %s", kind or "job", exc)
            return
        async with self.sessions() as session:
            if (done := traces.traced(event)) is not None:
                await traces.record_traces(session, [done])
                await session.commit()
            match event:
                case ProgressEvent():
                    await jobs.record_progress(session, job_id=event.job_id, stage=event.stage.value, iteration=event.iteration, within=event.progress)
                case StageEvent(state=StageState.STARTED):
                    await jobs.record_progress(session, job_id=event.job_id, stage=event.stage.value, iteration=event.iteration, within=0.0)
                case StageEvent(state=StageState.DONE, usage=usage) if usage is not None and usage.calls:
                    await jobs.record_usage(session, job_id=event.job_id, usage=usage)
                case ClarificationRequested():
                    await jobs.await_input(session, job_id=event.job_id, questions=event.questions, usage=event.usage)
                    self.kick()
                case PlanReviewRequested():
                    await plan_review.await_plan_review(session, event=event)
                    self.kick()
                case StageEvent(state=StageState.RETRYING):
                    await jobs.record_retry(session, job_id=event.job_id, stage=event.stage.value, delivery=event.delivery, error=event.error or "")
                case JobCompleted():
                    if await jobs.complete_job(session, job_id=event.job_id, result=event.result):
                        self.kick()
                case JobFailed():
                    if await jobs.fail_job(session, job_id=event.job_id, reason=event.reason):
                        self.kick()
                case _:
                    pass  # our own status events, stage done/skipped: nothing to persist

    async def apply_dead_letter(self, data: bytes) -> None:
        """A stage command hit max_deliver (its process crashed or timed out on every
        attempt): fail the job, naming the stage and the last error we heard of."""
        given_up = await self._given_up(data, subjects.JOBS_STREAM)
        if given_up is None:
            return
        advisory, raw = given_up
        seq = raw.seq
        consumer = advisory.get("consumer", "?")
        deliveries = advisory.get("deliveries", "?")
        job_id = ((raw.headers or {}).get(MSG_ID) or "").split(":")[0]
        if not job_id:
            log.error("dead letter seq %s has no job id", seq)
            return
        async with self.sessions() as session:
            job = await jobs.get_job(session, job_id=job_id)
            last = f"; last error: {job.error}" if job and job.error else ""
            reason = f"{consumer} gave up after {deliveries} deliveries{last}"
            if await jobs.fail_job(session, job_id=job_id, reason=reason):
                self.kick()
