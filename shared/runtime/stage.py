"""The stage runner: what every stage service does around its own work.

A stage's work is a function ``(envelope, ctx) -> next`` where ``next`` is the envelope
for the next stage (its ``stage`` field names the subject it goes to) or, from
synthesis, the :class:`JobCompleted` event. Around it the runner guarantees the
reliability contract:

- it never starts work for a cancelled job, and abandons work within about a second
  when the job is cancelled mid-stage (one watch of the control bucket per process
  keeps the set of stopped jobs; a direct read stands in while the watch is down);
- it sends ``in_progress`` heartbeats every quarter of ``ack_wait`` so JetStream does
  not redeliver a message whose first copy still runs, while a message whose process
  died is taken over by another process after at most ``ack_wait`` (8 s by default);
- it publishes the next command through the broker (so its middlewares see it) to
  the subject the routing table (:mod:`shared.runtime.routing`) gives for the stage the
  returned envelope names, with a deterministic ``Nats-Msg-Id``, *before* acking, so
  a crash in between leads to a redelivery whose publish JetStream deduplicates;
- a process works on up to ``RESEARCH_STAGE_CONCURRENCY`` messages at once, and never
  holds a message it has not started: see :meth:`StageRunner.work`;
- the work sees the job's deadline (``ctx.deadline``, :mod:`shared.runtime.deadline`) and hands
  on what it has when it passes; work still running ``RESEARCH_DEADLINE_GRACE_S`` later
  is cancelled and the job handed on as the stage received it (:meth:`StageRunner._overrun`),
  noted as cut. A cancellation of the job wins over the deadline;
- a transient error is nacked with a growing delay; a permanent one (or the last
  allowed delivery) publishes a typed ``failed`` event, then terminates the message.
  A crash on the last delivery is caught by the MAX_DELIVERIES advisory in the gateway.
  A model provider that is unavailable after the SDK's retries is not such an error:
  the job's binding answers offline from then on and the envelope records it
  (``degraded``, :mod:`shared.llm.engine`), so the job completes instead of failing;
- the job's model spend is kept in the usage bucket across attempts, so a redelivered
  stage counts what a crashed attempt spent against the job's token budget;
- every log line written while a job is handled names the job, stage and attempt,
  and stage outcomes, durations and model use are Prometheus metrics.

The parts have modules of their own: the control watch (:mod:`shared.stores.control`),
heartbeats (:mod:`shared.runtime.heartbeat`), the spend ledger (:mod:`shared.stores.spend`),
publishing through the broker (:mod:`shared.runtime.publishing`) and fault injection
(:mod:`shared.runtime.faults`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from faststream.nats import JStream, NatsBroker, NatsMessage, PullSub
from faststream.middlewares import AckPolicy
from nats.js import JetStreamContext
from nats.js.api import ConsumerConfig, DeliverPolicy
from nats.js.errors import NotFoundError
from pydantic import BaseModel, ValidationError

from shared import subjects

from shared.platform import metrics

from shared.runtime import routing

from shared.stores import checkpoints
from shared.stores.control import CANCEL_POLL_S, CANCEL_READ_S, ControlWatch
from shared.runtime.deadline import Deadline, backstop_at, hand_on_stage, with_cuts
from shared.research.envelope import JobEnvelope, Usage
from shared.platform.errors import JobCancelled, PermanentError, TransientError
from shared.research.events import (
    ClarificationRequested, JobCompleted, JobFailed, PlanReviewRequested, ProgressEvent, StageEvent, StageState,
    StageTrace, TraceTokens,
)
from shared.runtime.faults import inject, parse_chaos
from shared.runtime.heartbeat import heartbeat as beat
from shared.llm.engine import JobLLM, LLMEngine, make_engine
from shared.platform.logs import job_context
from shared.runtime.publishing import MSG_ID, StagePublisher, publish_event
from shared.settings import CommonSettings
from shared.stores.spend import KvSpendLedger
from shared.subjects import Stage
from shared.stores.textstore import TextStore

__all__ = ["WORKER", "StageContext", "StageRunner", "Work"]

log = logging.getLogger(__name__)

WORKER = f"{socket.gethostname()}:{os.getpid()}"


@dataclass
class StageContext:
    """What a stage's work may use: the store, progress reporting, cancellation."""

    stage: Stage
    envelope: JobEnvelope
    js: JetStreamContext
    texts: TextStore
    settings: CommonSettings
    llm: JobLLM = field(default_factory=lambda: LLMEngine(None).bind("", Usage()))
    trace: dict[str, Any] = field(default_factory=dict)  # the work's part of the job's trace (StageTrace fields)
    _progress_seq: int = field(default=0, repr=False)
    # The runner's publishing through its broker; a context made without a runner
    # (tools, tests) publishes straight to JetStream.
    publisher: StagePublisher | None = field(default=None, repr=False)
    # The job's deadline on this process's monotonic clock: work bounded by it
    # (deadline.bounded / until_deadline) stops there and hands on what it has.
    deadline: Deadline = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.deadline = Deadline(self.envelope.deadline_at)

    def stage_trace(self, duration_s: float, result: object) -> StageTrace:
        """What the done event carries into the job's trace: the work's ``trace``, this
        attempt's duration and tokens, and the plan's step order as it now stands."""
        plan = result.plan if isinstance(result, JobEnvelope) else None
        calls = self.llm.calls
        tokens = TraceTokens(input=sum(c.input_tokens for c in calls), output=sum(c.output_tokens for c in calls),
                             cost_usd=round(sum(c.cost_usd for c in calls), 6),
                             unpriced_models=list(dict.fromkeys(c.model for c in calls if c.ok and not c.priced)))
        return StageTrace.model_validate({"step_order": plan.step_order if plan and plan.step_order else None,
                                          **self.trace, "duration_s": round(duration_s, 3), "tokens": tokens})

    async def progress(self, progress: float, message: str, **counts: int) -> None:
        self._progress_seq += 1
        env = self.envelope
        event = ProgressEvent(
            job_id=env.job_id, stage=self.stage, iteration=env.iteration,
            progress=max(0.0, min(1.0, progress)), message=message, counts=counts,
        )
        msg_id = f"{env.msg_id}:progress:{self._progress_seq}"
        if self.publisher is not None:
            # Progress does not hold up the work for its acknowledgement; it is still
            # stored before the stage's done event (see StagePublisher.event_soon).
            await self.publisher.event_soon(event, msg_id)
        else:
            await publish_event(self.js, event, msg_id)

    async def event(self, event: BaseModel, msg_id: str) -> None:
        """Publish one of the job's events (``msg_id`` deterministic: a repeat is stored once)."""
        if self.publisher is not None:
            await self.publisher.event(event, msg_id)
        else:
            await publish_event(self.js, event, msg_id)


Work = Callable[[JobEnvelope, StageContext],
               Awaitable[JobEnvelope | JobCompleted | ClarificationRequested | PlanReviewRequested]]


# The model role of each stage's work (LLM_MODEL_<ROLE>); retrieval asks no model.
STAGE_ROLES = {Stage.PLAN: "plan", Stage.DIGEST: "digest", Stage.SCORE: "claims", Stage.SYNTHESIZE: "write"}


class StageRunner:
    """Wires one stage's work to its durable pull consumer."""

    def __init__(self, broker: NatsBroker, stage: Stage, settings: CommonSettings) -> None:
        self.broker = broker
        self.stage = stage
        self.settings = settings
        self.chaos = parse_chaos(settings.research_chaos).get(stage.value, {})
        # Stage settings configure the LLM layer; a misconfigured provider stops the
        # process at start-up with the setting to fix, not at the first job.
        self.llm = make_engine(settings, STAGE_ROLES.get(stage)) if hasattr(settings, "llm_provider") else LLMEngine(None)
        self.control = ControlWatch()
        self.publisher = StagePublisher(broker)
        self._js: JetStreamContext | None = None
        self._ledger: KvSpendLedger | None = None
        self._on_deadline: Work | None = None

    def on_deadline(self, fallback: Work) -> Work:
        """Decorator: what this stage hands on when the backstop cuts its work (see
        :meth:`_overrun`); without one, the envelope as it came in goes to the next stage."""
        self._on_deadline = fallback
        return fallback

    def consumer_config(self) -> ConsumerConfig:
        return ConsumerConfig(
            ack_wait=self.settings.research_ack_wait_s,
            max_deliver=self.settings.research_max_deliver,
            deliver_policy=DeliverPolicy.ALL,
            max_ack_pending=1000,
        )

    def subscriber_options(self) -> dict[str, Any]:
        """Keyword arguments for ``broker.subscriber``: a durable pull consumer that all
        replicas of this stage share, one message at a time, acked by the runner."""
        return dict(
            stream=JStream(subjects.JOBS_STREAM, declare=False),
            durable=subjects.stage_durable(self.stage),
            pull_sub=PullSub(batch_size=1, timeout=2.0),
            config=self.consumer_config(),
            ack_policy=AckPolicy.MANUAL,
        )

    async def update_durable(self, js: JetStreamContext) -> None:
        """Bring an existing durable to this process's ack_wait and max_deliver. The
        server keeps a durable's config when a subscriber asks for another one; updating
        it in place (both fields are editable) keeps its position, where a new durable
        would deliver the whole stream again."""
        durable = subjects.stage_durable(self.stage)
        try:
            info = await js.consumer_info(subjects.JOBS_STREAM, durable)
        except NotFoundError:
            return  # the subscriber creates it with consumer_config()
        config, wanted = info.config, self.consumer_config()
        if config.ack_wait == wanted.ack_wait and config.max_deliver == wanted.max_deliver:
            return
        log.info("durable %s: ack_wait %ss -> %ss, max_deliver %s -> %s", durable, config.ack_wait, wanted.ack_wait,
                 config.max_deliver, wanted.max_deliver)
        config.ack_wait, config.max_deliver = wanted.ack_wait, wanted.max_deliver
        await js.add_consumer(subjects.JOBS_STREAM, config=config)

    def work(self, work: Work) -> Work:
        """Decorator: ``work`` handles this stage's commands, up to
        ``RESEARCH_STAGE_CONCURRENCY`` at once in this process.

        Why one FastStream pull subscriber per slot rather than ``max_workers``:
        FastStream's concurrent pull subscriber fetches the next message as soon as one
        is handed to its in-memory queue, so messages wait there for a free worker
        without heartbeats, JetStream redelivers them after ``ack_wait`` and a long job
        runs twice while its first copy is alive. A plain pull subscriber fetches one
        message (``batch=1``) and fetches again only once its handler has returned, so
        N of them on the stage's durable (each with its own pull inbox) run at most N
        messages at once and never hold one they have not started; a message waits on
        the server, where any process of the stage can take it.

        The subscribers take the raw body, not a typed envelope, because a command
        that is not a valid envelope must fail its job at once (failed event, then
        TERM); FastStream's argument validation would leave it to be redelivered until
        ``max_deliver``. ``work`` itself is typed: ``(JobEnvelope, StageContext) ->``
        the next envelope or the job's closing event. The body is not decoded (the
        envelope is parsed once, by pydantic) and the message is taken from the
        broker's context rather than injected: an injected ``NatsMessage`` is resolved
        in a worker thread, a thread hop on every command.
        """
        for slot in range(self.concurrency):
            async def handler(body: bytes) -> None:
                await self.handle(self.broker.context.get_local("message"), work)

            handler.__name__ = f"{work.__name__}_{slot}"
            self.broker.subscriber(routing.consumes(self.stage), decoder=_body, **self.subscriber_options())(handler)
        return work

    @property
    def concurrency(self) -> int:
        return self.settings.research_stage_concurrency

    @property
    def js(self) -> JetStreamContext:
        if self._js is None:
            self._js = self.broker.connection.jetstream()
        return self._js

    @property
    def ledger(self) -> KvSpendLedger:
        if self._ledger is None:
            self._ledger = KvSpendLedger(self.js)
        return self._ledger

    async def handle(self, msg: NatsMessage, work: Work) -> None:
        raw = msg.raw_message
        delivery = raw.metadata.num_delivered if raw.metadata else 1
        try:
            envelope = JobEnvelope.model_validate_json(msg.body)
        except ValidationError as exc:
            await self._poison(msg, exc)
            return
        with job_context(envelope.job_id, self.stage.value, delivery):
            await self._handle(msg, envelope, delivery, work)

    async def _handle(self, msg: NatsMessage, envelope: JobEnvelope, delivery: int, work: Work) -> None:
        stage = self.stage.value
        if envelope.stage != self.stage:
            await self._fail(envelope, f"{self.stage} stage received a {envelope.stage} command", msg)
            metrics.STAGE_MESSAGES.labels(stage, "failed").inc()
            return
        llm = await self._admit(envelope, delivery)
        if llm is None:
            await msg.ack()
            metrics.STAGE_MESSAGES.labels(stage, "cancelled").inc()
            return
        started = time.monotonic()
        ctx = StageContext(self.stage, envelope, self.js, TextStore(self.js), self.settings, llm=llm,
                           publisher=self.publisher)
        heartbeat = asyncio.create_task(beat(msg, self.settings.research_ack_wait_s), name=f"heartbeat-{envelope.msg_id}")
        outcome = "retried"
        try:
            result = await self._run_cancellable(envelope, ctx, work)
            target = self._target(result)
            outcome = "done"  # counted below, once the result is published and acked
        except JobCancelled:
            outcome = "cancelled"
            await self._stage_event(envelope, StageState.SKIPPED, delivery, error="job cancelled")
            await msg.ack()
            return
        except PermanentError as exc:
            outcome = "failed"
            await self._fail(envelope, f"{self.stage} stage: {exc}", msg)
            return
        except Exception as exc:  # noqa: BLE001 - every other error is retried, then fails the job
            outcome = await self._retry_or_fail(envelope, exc, delivery, msg)
            return
        finally:
            heartbeat.cancel()
            if outcome != "done":
                metrics.STAGE_MESSAGES.labels(stage, outcome).inc()
                metrics.STAGE_DURATION.labels(stage, outcome).observe(time.monotonic() - started)

        if isinstance(result, JobEnvelope):
            result = with_cuts(ctx.llm.apply(result), ctx.deadline.cuts)
            # What a resume starts from (a failed write is logged), kept before the
            # publish so its round trips do not compete with the next stage's start.
            await checkpoints.save(self.js, result)
            await self._publish(result, target, result.msg_id)
        elif isinstance(result, JobCompleted):
            await self._publish(result, target, envelope.outcome_msg_id("completed"))
        else:
            await self._publish(result, target, f"{envelope.msg_id}:{result.type}")
        duration = time.monotonic() - started
        await self._stage_event(envelope, StageState.DONE, delivery, duration_s=duration, usage=ctx.llm.usage(),
                                trace=ctx.stage_trace(duration, result))
        await msg.ack_sync()
        log.info("%s stage done in %.2fs (%d model calls%s)", self.stage, duration, len(ctx.llm.calls),
                 f", {ctx.llm.degraded_calls} answered offline: provider unavailable" if ctx.llm.degraded_calls else "")
        metrics.STAGE_MESSAGES.labels(stage, "done").inc()
        metrics.STAGE_DURATION.labels(stage, "done").observe(duration)

    async def _admit(self, envelope: JobEnvelope, delivery: int) -> JobLLM | None:
        """Before the work: None (after a skipped event) for a job the gateway has
        stopped; otherwise the job's model access, its spend so far loaded, once the
        started event is on its way.

        The control key itself is read, not the watch's set: the watch may lag a
        cancellation by a few milliseconds, and a stage must never start work for a
        stopped job. That read and the ledger's go out together, and the started event
        does not wait for its acknowledgement, so one round trip separates the
        command's delivery from the work."""
        self.control.start(self.js)
        llm = self.llm.bind(self.stage.value, envelope.usage, job_id=envelope.job_id,
                            ledger=None if self.llm.offline else self.ledger,
                            degrade=True, degraded=envelope.degraded, iteration=envelope.iteration,
                            max_cost_usd=envelope.request.max_cost_usd)
        if llm.ledger is None:  # the offline engine keeps no spend
            stopped = await self.control.read(envelope.job_id, envelope.resumes)
        else:
            stopped, _ = await asyncio.gather(self.control.read(envelope.job_id, envelope.resumes), llm.load())
        if stopped:
            await self._stage_event(envelope, StageState.SKIPPED, delivery, error="job cancelled")
            return None
        await self._stage_event(envelope, StageState.STARTED, delivery, soon=True)
        return llm

    def _target(self, result: JobEnvelope | JobCompleted | ClarificationRequested) -> str:
        """Where the work's result goes: the next stage's subject from the routing table,
        or the job's event subject for the completed and clarification events."""
        if isinstance(result, JobEnvelope):
            return routing.next_subject(self.stage, result)
        return subjects.event_subject(result.job_id, result.type)

    async def _publish(self, result: BaseModel, subject: str, msg_id: str) -> None:
        """Through the broker, so its middlewares (metrics, trace context) see the hop;
        the stream must acknowledge it before the command is acked."""
        await self.publisher.publish(result, subject, msg_id)

    async def _event(self, event: BaseModel, msg_id: str) -> None:
        await self.publisher.event(event, msg_id)

    async def _run_cancellable(self, envelope: JobEnvelope, ctx: StageContext, work: Work) -> JobEnvelope | JobCompleted | ClarificationRequested:
        async def chaos_then_work() -> JobEnvelope | JobCompleted | ClarificationRequested:
            await inject(self.chaos, self.stage)
            return await work(envelope, ctx)

        task = asyncio.create_task(chaos_then_work())
        last_read = time.monotonic()
        backstop = backstop_at(ctx.deadline, last_read, self.settings.research_deadline_grace_s)
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=CANCEL_POLL_S)
                if done:
                    return task.result()
                # In memory while the watch is live; otherwise a read of the key, at
                # most once a second. Checked before the deadline: a cancelled job
                # stays cancelled, it is never handed on.
                if self.control.live or time.monotonic() - last_read >= CANCEL_READ_S:
                    last_read = time.monotonic()
                    if await self.control.stopped(envelope.job_id, envelope.resumes):
                        log.info("job stopped by the gateway: abandoning the %s stage", self.stage)
                        raise JobCancelled(envelope.job_id)
                if time.monotonic() >= backstop:
                    break
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        return await self._overrun(envelope, ctx)

    async def _overrun(self, envelope: JobEnvelope, ctx: StageContext) -> JobEnvelope | JobCompleted | ClarificationRequested:
        """The backstop: the work ran RESEARCH_DEADLINE_GRACE_S past the job's deadline
        (a hung NATS call, work that does not watch the deadline) and was cancelled.
        The job goes on as this stage received it, noted as cut, or as the stage's
        :meth:`on_deadline` fallback says (synthesis: the offline report)."""
        grace = self.settings.research_deadline_grace_s
        log.warning("the %s stage was still working %.1fs past the job's deadline: cancelled, handing the job on", self.stage, grace)
        ctx.deadline.cut(f"{self.stage}: the stage was still working {grace:g}s past the deadline; its work was dropped")
        if self._on_deadline is not None:
            return await self._on_deadline(envelope, ctx)
        nxt = hand_on_stage(self.stage)
        if nxt is None:
            raise PermanentError(f"the {self.stage} stage overran the job's deadline and has no fallback")
        return envelope.advance(nxt)

    async def _retry_or_fail(self, envelope: JobEnvelope, exc: Exception, delivery: int, msg: NatsMessage) -> str:
        reason = f"{type(exc).__name__}: {exc}"
        if not isinstance(exc, TransientError):
            log.error("unexpected error in %s for job %s\n%s", self.stage, envelope.job_id, traceback.format_exc())
        if delivery >= self.settings.research_max_deliver:
            await self._fail(envelope, f"{self.stage} stage failed after {delivery} attempts: {reason}", msg)
            return "failed"
        retry_after = getattr(exc, "retry_after_s", None)
        delay = retry_after if retry_after is not None else self.settings.research_retry_delay_s * 2 ** (delivery - 1)
        log.warning("%s stage: job %s attempt %d failed (%s); retrying in %.1fs", self.stage, envelope.job_id, delivery, reason, delay)
        await self._stage_event(envelope, StageState.RETRYING, delivery, error=reason)
        await msg.nack(delay=delay)
        return "retried"

    async def _fail(self, envelope: JobEnvelope, reason: str, msg: NatsMessage) -> None:
        log.error("%s stage: job %s failed: %s", self.stage, envelope.job_id, reason)
        await self._event(JobFailed(job_id=envelope.job_id, stage=self.stage, reason=reason), envelope.outcome_msg_id("failed"))
        await msg.reject()

    async def _poison(self, msg: NatsMessage, exc: ValidationError) -> None:
        """A command that is not a valid envelope: fail its job (named by the
        Nats-Msg-Id header, ``job:stage:iteration``) and terminate the message."""
        job_id = (msg.headers.get(MSG_ID) or "").split(":")[0]
        try:
            job_id = job_id or json.loads(msg.body).get("job_id", "")
        except (ValueError, AttributeError):
            pass
        reason = f"malformed {self.stage} command: {exc.error_count()} validation error(s): {exc.errors()[0]['msg']}"
        log.error("%s stage: %s (job %r)", self.stage, reason, job_id)
        metrics.STAGE_MESSAGES.labels(self.stage.value, "malformed").inc()
        if job_id:
            await self._event(JobFailed(job_id=job_id, stage=self.stage, reason=reason), f"{job_id}:failed")
        await msg.reject()

    async def _stage_event(self, envelope: JobEnvelope, state: StageState, delivery: int, *, duration_s: float | None = None,
                           error: str | None = None, usage: Usage | None = None, trace: StageTrace | None = None,
                           soon: bool = False) -> None:
        """``soon``: without waiting for the stream's acknowledgement (see StagePublisher.event_soon)."""
        event = StageEvent(
            job_id=envelope.job_id, stage=self.stage, iteration=envelope.iteration,
            state=state, delivery=delivery, worker=WORKER, duration_s=duration_s, error=error, usage=usage, trace=trace,
        )
        msg_id = f"{envelope.msg_id}:stage:{state}:{delivery}"
        await (self.publisher.event_soon(event, msg_id) if soon else self._event(event, msg_id))


async def _body(msg: NatsMessage) -> bytes:
    """The command as it came: the runner validates it as an envelope itself."""
    return msg.body
