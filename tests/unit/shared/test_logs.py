"""Log lines name the job, stage and attempt they were written for, in text and JSON."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from shared.platform.logs import configure_logging, job_context


@pytest.fixture(autouse=True)
def _restore_logging() -> None:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def test_json_lines_carry_the_job_inside_its_context_and_in_tasks_it_starts(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("INFO", "json")
    log = logging.getLogger("any.module")

    async def in_a_task() -> None:
        log.warning("in a task")

    async def work() -> None:
        log.info("inside")
        await asyncio.create_task(in_a_task())

    log.info("before")
    with job_context("job-1", "score", 2):
        asyncio.run(work())
    log.info("after")
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert [line["message"] for line in lines] == ["before", "inside", "in a task", "after"]
    assert "job_id" not in lines[0] and "job_id" not in lines[-1]
    for line in lines[1:3]:
        assert (line["job_id"], line["stage"], line["delivery"]) == ("job-1", "score", 2)
        assert line["logger"] == "any.module" and line["level"] in ("INFO", "WARNING")


def test_text_lines_name_the_job(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("INFO", "text")
    with job_context("job-2", "plan", 1):
        logging.getLogger("x").info("hello")
    logging.getLogger("x").info("outside")
    inside, outside = capsys.readouterr().err.splitlines()
    assert "[job=job-2 stage=plan attempt=1]: hello" in inside
    assert "job=" not in outside and outside.endswith("x: outside")
