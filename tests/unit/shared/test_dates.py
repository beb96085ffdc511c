"""shared.platform.dates: the one parser of publication dates and of Retry-After."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from shared.platform.dates import parse_date, retry_after_s

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(("value", "expected"), [
    ("2024-03-01T10:00:00+02:00", datetime(2024, 3, 1, 8, 0, tzinfo=UTC)),
    ("2024-03-01T10:00:00", datetime(2024, 3, 1, 10, 0, tzinfo=UTC)),
    ("2024-03-01", datetime(2024, 3, 1, tzinfo=UTC)),
    ("2024-03-01 (updated)", datetime(2024, 3, 1, tzinfo=UTC)),
    ("  2024-03-01  ", datetime(2024, 3, 1, tzinfo=UTC)),
    ("Tue, 05 Mar 2024 10:00:00 GMT", datetime(2024, 3, 5, 10, 0, tzinfo=UTC)),
    ("Tue, 05 Mar 2024 10:00:00 +0100", datetime(2024, 3, 5, 9, 0, tzinfo=UTC)),
])
def test_dates_in_every_form_come_back_in_utc(value: str, expected: datetime) -> None:
    parsed = parse_date(value)
    assert parsed == expected
    assert parsed is not None and parsed.utcoffset() == timedelta(0)


@pytest.mark.parametrize("value", [None, "", "   ", "yesterday", "2024-13-45", 20240301, "Tue, 99 Foo"])
def test_what_is_not_a_date_is_none(value: object) -> None:
    assert parse_date(value) is None


@pytest.mark.parametrize(("value", "expected"), [
    ("120", 120.0),
    (" 7 ", 7.0),
    ("1.5", 1.5),
    ("0", 0.0),
    ("-3", 0.0),  # a wait in the past is no wait
])
def test_retry_after_in_seconds(value: str, expected: float) -> None:
    assert retry_after_s(value, now=NOW) == expected


def test_retry_after_as_an_http_date_is_the_time_until_it() -> None:
    assert retry_after_s("Sun, 01 Jun 2025 12:01:30 GMT", now=NOW) == 90.0


def test_retry_after_an_http_date_already_past_is_no_wait() -> None:
    assert retry_after_s("Sun, 01 Jun 2025 11:00:00 GMT", now=NOW) == 0.0


def test_retry_after_without_now_uses_the_clock() -> None:
    soon = (datetime.now(UTC) + timedelta(seconds=60)).strftime("%a, %d %b %Y %H:%M:%S GMT")
    wait = retry_after_s(soon)
    assert wait is not None and 50.0 <= wait <= 60.0


@pytest.mark.parametrize("value", [None, "", "  ", "soon", "nan", "inf"])
def test_an_unreadable_retry_after_is_none(value: str | None) -> None:
    assert retry_after_s(value, now=NOW) is None
