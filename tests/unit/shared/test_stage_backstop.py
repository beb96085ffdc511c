"""The runner's deadline backstop: work still running past the deadline plus the grace
is cancelled and the job handed on, noted as cut; a job cancelled meanwhile stays
cancelled (the deadline never hands on a cancelled job)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest

from shared.research.envelope import DEADLINE_NOTE
from shared.research.envelope import JobEnvelope, ResearchRequest, utcnow
from shared.platform.errors import JobCancelled
from shared.settings import CommonSettings
from shared.runtime.stage import StageContext, StageRunner
from shared.subjects import Stage

GRACE_S = 0.3


def _runner(stage: Stage) -> StageRunner:
    runner = StageRunner(None, stage, CommonSettings(research_deadline_grace_s=GRACE_S))  # type: ignore[arg-type]
    runner.control.live = True  # the watch has the bucket's keys: no read of the control bucket
    return runner


def _context(stage: Stage, *, deadline_in_s: float) -> StageContext:
    env = JobEnvelope(job_id="j1", user_id="u", stage=stage, request=ResearchRequest(question="q"),
                      deadline_at=utcnow() + timedelta(seconds=deadline_in_s))
    return StageContext(stage, env, js=None, texts=None, settings=CommonSettings())  # type: ignore[arg-type]


async def _hangs(envelope: JobEnvelope, ctx: StageContext) -> JobEnvelope:
    await asyncio.Event().wait()  # a call that never returns and never looks at the deadline
    raise AssertionError("unreachable")


async def test_work_past_the_deadline_and_grace_is_cut_and_the_job_handed_on() -> None:
    runner, ctx = _runner(Stage.DIGEST), _context(Stage.DIGEST, deadline_in_s=0.2)
    loop = asyncio.get_running_loop()
    started = loop.time()
    result = await runner._run_cancellable(ctx.envelope, ctx, _hangs)
    assert 0.2 + GRACE_S <= loop.time() - started < 0.2 + GRACE_S + 0.5
    assert isinstance(result, JobEnvelope) and result.stage is Stage.SCORE
    assert ctx.deadline.cuts == [f"deadline: digest: the stage was still working {GRACE_S:g}s past the deadline; its work was dropped"]


async def test_a_stage_that_starts_after_the_deadline_still_gets_the_grace() -> None:
    runner, ctx = _runner(Stage.SCORE), _context(Stage.SCORE, deadline_in_s=-30)

    async def quick(envelope: JobEnvelope, ctx: StageContext) -> JobEnvelope:
        await asyncio.sleep(GRACE_S / 3)
        return envelope.advance(Stage.SYNTHESIZE, notes=["done"])

    result = await runner._run_cancellable(ctx.envelope, ctx, quick)
    assert isinstance(result, JobEnvelope) and result.notes == ["done"] and ctx.deadline.cuts == []


async def test_a_stage_fallback_replaces_the_hand_on() -> None:
    runner, ctx = _runner(Stage.PLAN), _context(Stage.PLAN, deadline_in_s=0)

    @runner.on_deadline
    async def fallback(envelope: JobEnvelope, ctx: StageContext) -> JobEnvelope:
        return envelope.advance(Stage.RETRIEVE, notes=[DEADLINE_NOTE, "offline plan"])

    result = await runner._run_cancellable(ctx.envelope, ctx, _hangs)
    assert isinstance(result, JobEnvelope) and result.notes == [DEADLINE_NOTE, "offline plan"]


async def test_a_job_cancelled_inside_the_grace_stays_cancelled() -> None:
    runner, ctx = _runner(Stage.RETRIEVE), _context(Stage.RETRIEVE, deadline_in_s=0)

    async def cancel_soon() -> None:
        await asyncio.sleep(GRACE_S / 3)  # past the deadline, inside the grace
        runner.control._stopped["j1"] = 0

    canceller = asyncio.create_task(cancel_soon())
    with pytest.raises(JobCancelled):
        await runner._run_cancellable(ctx.envelope, ctx, _hangs)
    await canceller
    assert ctx.deadline.cuts == []
