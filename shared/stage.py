"""The stage runner: what every stage service does around its own work.

A stage's work is a function ``(envelope, ctx) -> next`` where ``next`` is the envelope
for the next stage (its ``stage`` field names the subject it goes to) or, from
synthesis, the :class:`JobCompleted` event. Around it the runner guarantees the
reliability contract of DESIGN.md:

- it never starts work for a cancelled job, and abandons work within about a second
  when the job is cancelled mid-stage (the control key is polled while work runs);
- it sends ``in_progress`` heartbeats at a third of ``ack_wait`` so JetStream does not
  redeliver a message whose first copy still runs;
- it publishes the next command with a deterministic ``Nats-Msg-Id`` *before* acking,
  so a crash in between leads to a redelivery whose publish JetStream deduplicates;
- a transient error is nacked with a growing delay; a permanent one (or the last
  allowed delivery) publishes a typed ``failed`` event, then terminates the message.
  A crash on the last delivery is caught by the MAX_DELIVERIES advisory in the gateway.
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
from nats.js.errors import KeyNotFoundError
from pydantic import BaseModel, ValidationError

from shared import subjects
from shared.envelope import JobEnvelope, Usage
from shared.errors import ConfigurationError, JobCancelled, PermanentError, TransientError
from shared.events import ClarificationRequested, JobCompleted, JobFailed, ProgressEvent, StageEvent, StageState
from shared.llm import JobLLM, LLMEngine, make_engine
from shared.settings import CommonSettings
from shared.subjects import Stage
from shared.textstore import TextStore

log = logging.getLogger(__name__)

CANCEL_POLL_S = 0.25
WORKER = f"{socket.gethostname()}:{os.getpid()}"
MSG_ID = "Nats-Msg-Id"


async def publish_json(js: JetStreamContext, subject: str, model: BaseModel, msg_id: str) -> None:
    await js.publish(subject, model.model_dump_json().encode(), headers={MSG_ID: msg_id}, timeout=10)


async def publish_event(js: JetStreamContext, event: BaseModel, msg_id: str) -> None:
    await publish_json(js, subjects.event_subject(event.job_id, event.type), event, msg_id)  # type: ignore[attr-defined]


async def is_cancelled(js: JetStreamContext, job_id: str) -> bool:
    """True once the gateway has stopped the job (its control key holds the terminal
    status that stopped it: CANCELLED or EXPIRED)."""
    kv = await js.key_value(subjects.CONTROL_BUCKET)
    try:
        entry = await kv.get(job_id)
    except KeyNotFoundError:
        return False
    return bool(entry.value)


def parse_chaos(spec: str) -> dict[str, dict[str, float]]:
    """``"retrieve:delay=3,score:fail"`` -> {"retrieve": {"delay": 3.0}, "score": {"fail": 1.0}}.
    Keys are stage names; a typo is an error, not a drill that silently does nothing."""
    out: dict[str, dict[str, float]] = {}
    stages = {s.value for s in Stage}
    for item in filter(None, (p.strip() for p in spec.split(","))):
        stage, _, action = item.partition(":")
        name, _, value = action.partition("=")
        stage, name = stage.strip(), name.strip()
        if stage not in stages or name not in ("delay", "fail"):
            raise ConfigurationError(
                f"RESEARCH_CHAOS item {item!r}: expected STAGE:fail or STAGE:delay=SECONDS with STAGE one of {', '.join(sorted(stages))}"
            )
        out.setdefault(stage, {})[name] = float(value) if value else 1.0
    return out


@dataclass
class StageContext:
    """What a stage's work may use: the store, progress reporting, cancellation."""

    stage: Stage
    envelope: JobEnvelope
    js: JetStreamContext
    texts: TextStore
    settings: CommonSettings
    llm: JobLLM = field(default_factory=lambda: LLMEngine(None).bind("", Usage()))
    _progress_seq: int = field(default=0, repr=False)

    async def progress(self, progress: float, message: str, **counts: int) -> None:
        self._progress_seq += 1
        env = self.envelope
        event = ProgressEvent(
            job_id=env.job_id, stage=self.stage, iteration=env.iteration,
            progress=max(0.0, min(1.0, progress)), message=message, counts=counts,
        )
        await publish_event(self.js, event, f"{env.msg_id}:progress:{self._progress_seq}")


Work = Callable[[JobEnvelope, StageContext], Awaitable[JobEnvelope | JobCompleted | ClarificationRequested]]


class StageRunner:
    """Wires one stage's work to its durable pull consumer."""

    def __init__(self, broker: NatsBroker, stage: Stage, settings: CommonSettings) -> None:
        self.broker = broker
        self.stage = stage
        self.settings = settings
        self.chaos = parse_chaos(settings.research_chaos).get(stage.value, {})
        # Stage settings configure the LLM layer; a misconfigured provider stops the
        # process at start-up with the setting to fix, not at the first job.
        self.llm = make_engine(settings) if hasattr(settings, "llm_provider") else LLMEngine(None)
        self._js: JetStreamContext | None = None

    def subscriber_options(self) -> dict[str, Any]:
        """Keyword arguments for ``broker.subscriber``: a durable pull consumer that all
        replicas of this stage share, one message at a time, acked by the runner."""
        return dict(
            stream=JStream(subjects.JOBS_STREAM, declare=False),
            durable=subjects.stage_durable(self.stage),
            pull_sub=PullSub(batch_size=1, timeout=2.0),
            config=ConsumerConfig(
                ack_wait=self.settings.research_ack_wait_s,
                max_deliver=self.settings.research_max_deliver,
                deliver_policy=DeliverPolicy.ALL,
                max_ack_pending=1000,
            ),
            ack_policy=AckPolicy.MANUAL,
        )

    @property
    def js(self) -> JetStreamContext:
        if self._js is None:
            self._js = self.broker.connection.jetstream()
        return self._js

    async def handle(self, msg: NatsMessage, work: Work) -> None:
        raw = msg.raw_message
        delivery = raw.metadata.num_delivered if raw.metadata else 1
        try:
            envelope = JobEnvelope.model_validate_json(msg.body)
        except ValidationError as exc:
            await self._poison(msg, exc)
            return
        if envelope.stage != self.stage:
            await self._fail(envelope, f"{self.stage} stage received a {envelope.stage} command", msg)
            return
        if await is_cancelled(self.js, envelope.job_id):
            await self._stage_event(envelope, StageState.SKIPPED, delivery, error="job cancelled")
            await msg.ack()
            return

        await self._stage_event(envelope, StageState.STARTED, delivery)
        started = time.monotonic()
        ctx = StageContext(self.stage, envelope, self.js, TextStore(self.js), self.settings,
                           llm=self.llm.bind(self.stage.value, envelope.usage))
        heartbeat = asyncio.create_task(self._heartbeat(msg))
        try:
            result = await self._run_cancellable(envelope, ctx, work)
        except JobCancelled:
            await self._stage_event(envelope, StageState.SKIPPED, delivery, error="job cancelled")
            await msg.ack()
            return
        except PermanentError as exc:
            await self._fail(envelope, f"{self.stage} stage: {exc}", msg)
            return
        except Exception as exc:  # noqa: BLE001 - every other error is retried, then fails the job
            await self._retry_or_fail(envelope, exc, delivery, msg)
            return
        finally:
            heartbeat.cancel()

        if isinstance(result, JobEnvelope):
            result = ctx.llm.apply(result)
            await publish_json(self.js, subjects.stage_subject(result.stage), result, result.msg_id)
        elif isinstance(result, JobCompleted):
            await publish_event(self.js, result, f"{envelope.job_id}:completed")
        else:
            await publish_event(self.js, result, f"{envelope.msg_id}:{result.type}")
        await self._stage_event(envelope, StageState.DONE, delivery, duration_s=time.monotonic() - started,
                                usage=ctx.llm.usage())
        await msg.ack_sync()

    async def _run_cancellable(self, envelope: JobEnvelope, ctx: StageContext, work: Work) -> JobEnvelope | JobCompleted | ClarificationRequested:
        async def chaos_then_work() -> JobEnvelope | JobCompleted | ClarificationRequested:
            if delay := self.chaos.get("delay"):
                await asyncio.sleep(delay)
            if self.chaos.get("fail"):
                raise TransientError(f"injected failure in {self.stage} (RESEARCH_CHAOS)")
            return await work(envelope, ctx)

        task = asyncio.create_task(chaos_then_work())
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=CANCEL_POLL_S)
                if done:
                    return task.result()
                if await is_cancelled(self.js, envelope.job_id):
                    raise JobCancelled(envelope.job_id)
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    async def _heartbeat(self, msg: NatsMessage) -> None:
        interval = self.settings.research_ack_wait_s / 3
        while True:
            await asyncio.sleep(interval)
            with contextlib.suppress(Exception):
                await msg.in_progress()

    async def _retry_or_fail(self, envelope: JobEnvelope, exc: Exception, delivery: int, msg: NatsMessage) -> None:
        reason = f"{type(exc).__name__}: {exc}"
        if not isinstance(exc, TransientError):
            log.error("unexpected error in %s for job %s\n%s", self.stage, envelope.job_id, traceback.format_exc())
        if delivery >= self.settings.research_max_deliver:
            await self._fail(envelope, f"{self.stage} stage failed after {delivery} attempts: {reason}", msg)
            return
        retry_after = getattr(exc, "retry_after_s", None)
        delay = retry_after if retry_after is not None else self.settings.research_retry_delay_s * 2 ** (delivery - 1)
        log.warning("%s stage: job %s attempt %d failed (%s); retrying in %.1fs", self.stage, envelope.job_id, delivery, reason, delay)
        await self._stage_event(envelope, StageState.RETRYING, delivery, error=reason)
        await msg.nack(delay=delay)

    async def _fail(self, envelope: JobEnvelope, reason: str, msg: NatsMessage) -> None:
        log.error("%s stage: job %s failed: %s", self.stage, envelope.job_id, reason)
        await publish_event(self.js, JobFailed(job_id=envelope.job_id, stage=self.stage, reason=reason), f"{envelope.job_id}:failed")
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
        if job_id:
            await publish_event(self.js, JobFailed(job_id=job_id, stage=self.stage, reason=reason), f"{job_id}:failed")
        await msg.reject()

    async def _stage_event(self, envelope: JobEnvelope, state: StageState, delivery: int, *, duration_s: float | None = None,
                           error: str | None = None, usage: Usage | None = None) -> None:
        event = StageEvent(
            job_id=envelope.job_id, stage=self.stage, iteration=envelope.iteration,
            state=state, delivery=delivery, worker=WORKER, duration_s=duration_s, error=error, usage=usage,
        )
        await publish_event(self.js, event, f"{envelope.msg_id}:stage:{state}:{delivery}")


def stage_app(stage: Stage, settings: CommonSettings) -> tuple[NatsBroker, Any, StageRunner]:
    """The broker, FastStream app and runner of one stage service."""
    from faststream import FastStream

    from shared import topology
    from shared.logs import configure_logging

    configure_logging(settings.log_level)
    # The CLI refuses to start a lone service without NATS_URL; the fallback is only
    # what importing the module (tests, docs generation) needs.
    broker = NatsBroker(settings.nats_servers, graceful_timeout=settings.research_ack_wait_s, log_level=logging.DEBUG)
    app = FastStream(broker)

    @app.on_startup
    async def _declare() -> None:
        await topology.declare(settings.nats_servers, ttl_s=settings.research_job_ttl_s, replicas=settings.research_stream_replicas)

    return broker, app, StageRunner(broker, stage, settings)
