"""Whether the gateway has stopped a job: the control bucket, read or watched.

The gateway writes a job's terminal status (CANCELLED, EXPIRED or FAILED) under the
job's id in the control bucket when it stops the job, with the run it stopped:
``CANCELLED:2`` stops every command of the job whose ``resumes`` is 2 or less. A
stage must never start work for a stopped run and must abandon work in flight within
about a second. The run matters once a stopped job is resumed: the resumed run
(``resumes`` one higher) goes on under the same key, while a command the stopped run
left in a stream (handed on just as the job was cancelled, waiting for a stage) is
still dropped, so the two runs never work side by side. A value without a run (as
older versions wrote) stops every run.

Reading the key for every message every quarter second would cost a request each
time, so each process keeps one watch of the whole bucket (:class:`ControlWatch`) and
answers from memory; a direct read stands in while the watch is down.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from typing import Any

import nats.errors
from nats.js import JetStreamContext
from nats.js.errors import KeyNotFoundError

from shared import subjects
from shared.stores.kv import compare_and_set

__all__ = ["CANCEL_POLL_S", "CANCEL_READ_S", "WATCH_CHECK_S", "WATCH_RETRY_S", "ControlWatch", "is_cancelled",
           "stop_run", "stop_value", "stopped_through"]

log = logging.getLogger(__name__)

CANCEL_POLL_S = 0.25  # how often in-flight work looks at the watched set (in memory)
CANCEL_READ_S = 1.0  # how often it reads the control key itself while the watch is down
WATCH_RETRY_S = 1.0
WATCH_CHECK_S = 10.0


ALL_RUNS = 1 << 62  # what a value without a run stops


def stop_value(status: str, run: int) -> bytes:
    """The control value that stops ``run`` (a job's resume count) and every earlier run."""
    return f"{status}:{run}".encode()


def stopped_through(value: bytes | None) -> int | None:
    """The last run a control value stops; None for no value (the job is not stopped)."""
    if not value:
        return None
    _, sep, run = value.decode(errors="replace").rpartition(":")
    if not sep:
        return ALL_RUNS
    try:
        return int(run)
    except ValueError:
        log.warning("control value %r has no readable run: it stops every run", value)
        return ALL_RUNS


async def stop_run(js: JetStreamContext, job_id: str, status: str, run: int, *, attempts: int = 20) -> None:
    """Stop ``run`` of the job and every earlier one, never un-stopping a later run: a
    writer that read the job's run just before it was resumed (an expiry, a second
    cancel) must not lower the mark, so the key is written by compare-and-set and left
    alone when it already stops ``run``. A value without a run is replaced by one."""
    def raised(current: bytes | None) -> tuple[bytes | None, None]:
        through = stopped_through(current)
        if through is not None and run <= through < ALL_RUNS:
            return None, None
        return stop_value(status, run), None

    await compare_and_set(await js.key_value(subjects.CONTROL_BUCKET), job_id, raised, attempts=attempts,
                          pause_s=lambda _: 0.002, what=f"control key of job {job_id}")


def _stops(entry_value: bytes | None, run: int) -> bool:
    through = stopped_through(entry_value)
    return through is not None and run <= through


async def is_cancelled(js: JetStreamContext, job_id: str, run: int = 0) -> bool:
    """True once the gateway has stopped this run of the job (its control key holds the
    terminal status that stopped it and the last run stopped). One read of the bucket."""
    kv = await js.key_value(subjects.CONTROL_BUCKET)
    try:
        entry = await kv.get(job_id)
    except KeyNotFoundError:
        return False
    return _stops(entry.value, run)


class ControlWatch:
    """The jobs the gateway has stopped, kept by one watch of the control bucket per
    process, so a message in flight costs no request to know whether to go on.

    Until the watch has delivered the bucket's current keys, and whenever it has
    failed (it is re-established in the background), :meth:`stopped` reads the key
    itself."""

    def __init__(self) -> None:
        self._stopped: dict[str, int] = {}  # job id -> the last run stopped
        self.live = False
        self._task: asyncio.Task[None] | None = None
        self._js: JetStreamContext | None = None
        self._watcher: Any = None
        self._kv: Any = None

    def start(self, js: JetStreamContext) -> None:
        if self._task is None or self._task.done():
            self._js = js
            # A context of its own: started while handling a job, it must not log as that job.
            self._task = asyncio.create_task(self._run(js), name="control-watch", context=contextvars.Context())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def stopped(self, job_id: str, run: int = 0) -> bool:
        """Whether this run of the job (its envelope's ``resumes``) is stopped."""
        if self.live:
            return run <= self._stopped.get(job_id, -1)
        return await self.read(job_id, run)

    async def read(self, job_id: str, run: int = 0) -> bool:
        """One read of the job's control key. The bucket's handle is looked up once per
        process: each lookup is a stream-info round trip, paid on every hop otherwise."""
        assert self._js is not None, "ControlWatch.start() first"
        if self._kv is None:
            self._kv = await self._js.key_value(subjects.CONTROL_BUCKET)
        try:
            entry = await self._kv.get(job_id)
        except KeyNotFoundError:
            return False
        return _stops(entry.value, run)

    async def _run(self, js: JetStreamContext) -> None:
        while True:
            watcher = None
            try:
                kv = await js.key_value(subjects.CONTROL_BUCKET)
                watcher = self._watcher = await kv.watchall()
                await self._follow(watcher)
            except asyncio.CancelledError:
                self.live = False
                raise
            except nats.errors.ConnectionClosedError:
                # Closed for good (a reconnect raises other errors): nothing to watch
                # any more. A later start() on a new connection watches again.
                self.live = False
                log.info("control bucket watch ends: its NATS connection is closed")
                return
            except Exception as exc:  # noqa: BLE001 - any failure: read keys directly, then watch again
                self.live = False
                log.warning("control bucket watch failed (%s: %s): reading control keys directly; re-watching in %.0fs",
                            type(exc).__name__, exc, WATCH_RETRY_S)
                if watcher is not None:
                    try:
                        await watcher.stop()
                    except Exception as stop_exc:  # noqa: BLE001 - the watch is replaced either way
                        log.debug("stopping the failed control watch: %s: %s", type(stop_exc).__name__, stop_exc)
                await asyncio.sleep(WATCH_RETRY_S)

    async def _follow(self, watcher: Any) -> None:
        """Apply the watch's updates to the stopped set until it fails."""
        while True:
            try:
                entry = await watcher.updates(timeout=WATCH_CHECK_S)
            except nats.errors.TimeoutError:
                # Quiet for a while: make sure the watch's consumer still exists
                # (after a server restart it may not, and the watch would stay
                # silent); a missing one raises and the watch is made again.
                await watcher._sub.consumer_info()
                continue
            if entry is None:  # the bucket's current keys are all in
                self.live = True
                continue
            if not hasattr(entry, "key"):  # the watcher was stopped under us
                raise ConnectionError("control watch ended")
            through = None if entry.operation in ("DEL", "PURGE") else stopped_through(entry.value)
            if through is None:
                self._stopped.pop(entry.key, None)
            else:
                self._stopped[entry.key] = through
