"""The control bucket stops runs of a job, not the job for ever: a key written for run
N stops commands whose ``resumes`` is N or less, and a resumed run (N + 1) goes on. The
gateway writes keys by compare-and-set and never lowers the run a key stops; a value
without a run, as older versions wrote, stops every run until it is written again."""

from __future__ import annotations

import asyncio
import time
import uuid

from shared import subjects
from shared.stores.control import ControlWatch, is_cancelled, stop_run, stopped_through


def test_a_value_names_the_last_run_it_stops() -> None:
    assert stopped_through(None) is None and stopped_through(b"") is None
    assert stopped_through(b"CANCELLED:0") == 0 and stopped_through(b"EXPIRED:3") == 3
    assert stopped_through(b"CANCELLED") > 10**9  # every run
    assert stopped_through(b"CANCELLED:junk") > 10**9  # unreadable: the safe side


async def test_a_stop_covers_its_run_and_earlier_ones_only(js) -> None:  # noqa: ANN001
    job = uuid.uuid4().hex
    assert not await is_cancelled(js, job)
    await stop_run(js, job, "CANCELLED", 1)
    assert await is_cancelled(js, job, 0) and await is_cancelled(js, job, 1)
    assert not await is_cancelled(js, job, 2)  # the resumed run


async def test_a_stale_writer_never_lowers_the_mark(js) -> None:  # noqa: ANN001
    job = uuid.uuid4().hex
    await stop_run(js, job, "CANCELLED", 2)
    await stop_run(js, job, "EXPIRED", 1)  # read the job's run before it was resumed twice
    kv = await js.key_value(subjects.CONTROL_BUCKET)
    assert (await kv.get(job)).value == b"CANCELLED:2"
    await asyncio.gather(*(stop_run(js, job, "CANCELLED", run) for run in (3, 5, 4)))
    assert (await kv.get(job)).value == b"CANCELLED:5"


async def test_a_value_without_a_run_is_replaced_by_one(js) -> None:  # noqa: ANN001
    job = uuid.uuid4().hex
    kv = await js.key_value(subjects.CONTROL_BUCKET)
    await kv.put(job, b"CANCELLED")  # as an older gateway wrote it
    assert await is_cancelled(js, job, 7)
    await stop_run(js, job, "CANCELLED", 0)  # a resume stops the run that ended
    assert await is_cancelled(js, job, 0) and not await is_cancelled(js, job, 1)


async def test_the_watch_answers_per_run(js) -> None:  # noqa: ANN001
    watch = ControlWatch()
    watch.start(js)
    try:
        job = uuid.uuid4().hex
        deadline = time.monotonic() + 5
        while not watch.live:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.01)
        await stop_run(js, job, "CANCELLED", 0)
        while not await watch.stopped(job, 0):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.01)
        assert not await watch.stopped(job, 1)
        await stop_run(js, job, "CANCELLED", 1)  # the resumed run is cancelled too
        while not await watch.stopped(job, 1):
            assert time.monotonic() < deadline
            await asyncio.sleep(0.01)
    finally:
        await watch.stop()
