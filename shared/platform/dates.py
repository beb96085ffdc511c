"""Dates from the outside world: publication dates and ``Retry-After``.

Search results, page metadata and front matter write dates as ISO 8601 or as the
RFC 2822 form of mail and HTTP headers; a ``Retry-After`` header is either a number
of seconds or an HTTP date. One parser for each, so every provider reads them alike.
Every datetime returned is aware and in UTC (a date without a zone is read as UTC).
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime
from email.utils import parsedate_to_datetime

__all__ = ["parse_date", "retry_after_s"]


def _utc(moment: datetime) -> datetime:
    return (moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)).astimezone(UTC)


def parse_date(value: object) -> datetime | None:
    """An ISO 8601 date-time, an ISO date (also at the start of a longer value, as in
    "2024-03-01 (updated)") or an RFC 2822 date, in UTC; None for anything else."""
    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    try:
        return _utc(datetime.fromisoformat(value))
    except ValueError:
        pass
    try:
        day = date.fromisoformat(value[:10])
        return datetime(day.year, day.month, day.day, tzinfo=UTC)
    except ValueError:
        pass
    try:
        return _utc(parsedate_to_datetime(value))
    except (TypeError, ValueError, IndexError):
        return None


def retry_after_s(value: str | None, *, now: datetime | None = None) -> float | None:
    """The wait a ``Retry-After`` header asks for, in seconds (never negative): its
    delta-seconds, or the time until its HTTP date; None when absent or unreadable."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        seconds = (_utc(when) - (now or datetime.now(UTC))).total_seconds()
    return max(0.0, seconds) if math.isfinite(seconds) else None
