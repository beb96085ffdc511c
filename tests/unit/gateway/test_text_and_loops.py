from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import exc as sa_exc

from services.gateway.api import CORPUS_NAME, JobCreate
from services.gateway.db import is_unavailable
from services.gateway.loops import LoopHealth, Loops, supervise
from services.gateway.text import clean, clean_json, is_blank, text_problem


@pytest.mark.parametrize("blank", ["", " ", "\u200b", "\ufeff\u2060\u200d", "\u3164\u2800", "\t\n\u00a0", "\u0301"])
def test_invisible_text_is_blank(blank: str) -> None:
    assert is_blank(blank)


@pytest.mark.parametrize("visible", ["a", "\u200ba", "é", "日本", "🜂", "1"])
def test_visible_text_is_not_blank(visible: str) -> None:
    assert not is_blank(visible)


def test_text_problems_and_cleaning() -> None:
    assert "NUL" in (text_problem("a\x00") or "")
    assert "surrogate" in (text_problem("a\ud800") or "")
    assert text_problem("plain é 🜂") is None
    assert clean("a\x00b\udc00c") == "ab\ufffdc"
    assert clean_json({"k\x00": ["v\x00", {"x": "\ud800"}, 3, None]}) == {"k": ["v", {"x": "\ufffd"}, 3, None]}


def test_corpus_names_with_a_trailing_newline_are_refused() -> None:
    assert CORPUS_NAME.fullmatch("docs")
    assert not CORPUS_NAME.fullmatch("docs\n")
    with pytest.raises(ValueError, match="corpus|pattern"):
        JobCreate(question="q?", corpora=["docs\n"])


def test_a_loop_survives_any_exception_and_reports_it() -> None:
    async def run() -> None:
        calls = 0

        async def step() -> None:
            nonlocal calls
            calls += 1
            if calls <= 3:
                raise KeyError("not a database error at all")

        health = LoopHealth("demo", failure_threshold=3)
        task = asyncio.create_task(supervise(health, step, interval_s=0.001, max_backoff_s=0.01))
        while health.consecutive_failures < 3:
            await asyncio.sleep(0.001)
        assert "KeyError" in (health.problem() or "")
        while calls < 5:
            await asyncio.sleep(0.001)
        assert health.problem() is None and health.running
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not health.running and "not running" in (health.problem() or "")

    asyncio.run(run())


def test_loops_registry_names_the_failing_loop() -> None:
    async def run() -> None:
        loops = Loops()

        async def ok() -> None:
            return None

        async def broken() -> None:
            raise RuntimeError("stream not found")

        loops.start("fine", ok, interval_s=0.001)
        loops.start("relay", broken, interval_s=0.001, max_backoff_s=0.005)
        await asyncio.sleep(0.1)
        problems = loops.problems()
        assert list(problems) == ["relay"] and "stream not found" in problems["relay"]
        await loops.stop()

    asyncio.run(run())


class _PgError(Exception):
    def __init__(self, sqlstate: str) -> None:
        super().__init__(f"sqlstate {sqlstate}")
        self.sqlstate = sqlstate


@pytest.mark.parametrize(
    ("exc", "unavailable"),
    [
        (ConnectionRefusedError(), True),
        (TimeoutError(), True),
        (sa_exc.OperationalError("SELECT 1", {}, _PgError("08006")), True),
        (sa_exc.DBAPIError("connect", {}, _PgError("55000")), True),  # database not accepting connections
        (sa_exc.DBAPIError("SELECT 1", {}, _PgError("57P01")), True),  # admin shutdown
        (sa_exc.DBAPIError("INSERT", {}, _PgError("22021")), False),  # invalid byte sequence (NUL)
        (sa_exc.DBAPIError("INSERT", {}, _PgError("22003")), False),  # numeric value out of range
        (sa_exc.InterfaceError("INSERT", {}, ValueError("value out of int32 range")), False),
        (KeyError("x"), False),
    ],
)
def test_database_outages_are_told_from_bad_data(exc: BaseException, unavailable: bool) -> None:
    assert is_unavailable(exc) is unavailable
