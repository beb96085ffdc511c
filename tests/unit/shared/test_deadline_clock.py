"""The job deadline as a stage sees it: its monotonic clock, bounded work, cut notes, and
that cancellation from outside is never mistaken for the deadline."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from shared.research.envelope import DEADLINE_NOTE
from shared.runtime.deadline import Deadline, backstop_at, hand_on_stage, with_cuts
from shared.research.envelope import JobEnvelope, ResearchRequest, utcnow
from shared.subjects import Stage


def _in(seconds: float) -> Deadline:
    return Deadline(utcnow() + timedelta(seconds=seconds))


def test_remaining_follows_the_monotonic_clock_not_the_wall_clock() -> None:
    now = utcnow()
    ticks = [100.0]
    deadline = Deadline(now + timedelta(seconds=5), now=now, clock=lambda: ticks[0])
    assert deadline.remaining() == pytest.approx(5.0)
    ticks[0] = 104.0  # 4 s later, whatever the wall clock did meanwhile
    assert deadline.remaining() == pytest.approx(1.0) and not deadline.passed
    ticks[0] = 105.5
    assert deadline.remaining() == pytest.approx(-0.5) and deadline.passed


async def test_bounded_returns_the_work_when_it_finishes_in_time() -> None:
    deadline = _in(5)

    async def work() -> str:
        await asyncio.sleep(0.01)
        return "done"

    assert await deadline.bounded(work(), default="fallback", cut="x") == "done"
    assert deadline.cuts == []


async def test_bounded_cuts_slow_work_at_the_deadline_and_uses_the_fallback() -> None:
    deadline = _in(0.2)
    cancelled = asyncio.Event()

    async def slow() -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "late"

    async def fallback() -> str:
        return "offline"

    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await deadline.bounded(slow(), default=fallback, cut="synthesize: the model's report") == "offline"
    assert 0.15 <= loop.time() - started < 1.0
    assert cancelled.is_set()
    assert deadline.cuts == ["deadline: synthesize: the model's report"]


async def test_work_that_cannot_start_before_the_deadline_never_starts() -> None:
    deadline = _in(-1)
    started = False

    async def work() -> int:
        nonlocal started
        started = True
        return 1

    assert await deadline.bounded(work(), default=lambda: 0) == 0
    assert not started and deadline.cuts == []


async def test_a_timeout_of_the_work_itself_is_not_the_deadline() -> None:
    deadline = _in(30)

    async def own_timeout() -> None:
        async with asyncio.timeout(0.01):
            await asyncio.sleep(1)

    with pytest.raises(TimeoutError):
        await deadline.bounded(own_timeout(), default=None)
    assert deadline.cuts == []


async def test_cancellation_from_outside_propagates_with_no_fallback() -> None:
    deadline = _in(0.05)
    gate = asyncio.Event()

    async def stubborn() -> None:
        await gate.wait()

    task = asyncio.create_task(deadline.bounded(stubborn(), default="fallback"))
    await asyncio.sleep(0.01)
    task.cancel()  # the job was cancelled: no fallback, no deadline note
    with pytest.raises(asyncio.CancelledError):
        await task
    assert deadline.cuts == []


async def test_until_deadline_says_whether_the_block_was_cut() -> None:
    deadline = _in(0.05)
    async with deadline.until_deadline("retrieve: searches") as window:
        await asyncio.sleep(5)
    assert window.reached and deadline.cuts == ["deadline: retrieve: searches"]
    async with _in(5).until_deadline() as quick:
        await asyncio.sleep(0)
    assert not quick.reached


def test_backstop_counts_from_the_deadline_or_from_a_later_start() -> None:
    now = utcnow()
    deadline = Deadline(now + timedelta(seconds=10), now=now, clock=lambda: 50.0)
    assert backstop_at(deadline, started=45.0, grace_s=1.0) == pytest.approx(61.0)
    assert backstop_at(deadline, started=70.0, grace_s=1.0) == pytest.approx(71.0)


def test_a_cut_stage_hands_the_job_on_towards_the_report() -> None:
    assert [hand_on_stage(s) for s in Stage] == [Stage.RETRIEVE, Stage.DIGEST, Stage.SCORE, Stage.SYNTHESIZE, None]


def test_cut_notes_go_into_the_envelope_once() -> None:
    env = JobEnvelope(job_id="j", user_id="u", stage=Stage.DIGEST, request=ResearchRequest(question="q"),
                      deadline_at=utcnow(), notes=["claims: offline"])
    assert with_cuts(env, []) is env
    noted = with_cuts(with_cuts(env, ["deadline: digest: 2 sources"]), ["deadline: digest: 2 sources"])
    assert noted.notes == ["claims: offline", DEADLINE_NOTE, "deadline: digest: 2 sources"]
