"""Full stores are told apart from other outages (services/gateway/storage.py)."""

from __future__ import annotations

import asyncpg
import nats.errors
import nats.js.errors
from sqlalchemy.exc import DBAPIError, OperationalError

from services.gateway import db, storage


def _js_error(code: int, err_code: int, description: str) -> nats.js.errors.APIError:
    return nats.js.errors.APIError(code=code, err_code=err_code, description=description)


def test_a_full_jetstream_store_is_recognised_by_its_error_code_or_words() -> None:
    assert storage.is_event_store_full(_js_error(503, 10023, "insufficient resources"))
    assert storage.is_event_store_full(_js_error(500, 10047, "insufficient storage resources available"))
    assert storage.is_event_store_full(_js_error(500, 0, "write failed: no space left on device"))
    assert not storage.is_event_store_full(_js_error(404, 10059, "stream not found"))
    assert not storage.is_event_store_full(nats.errors.TimeoutError())
    wrapped = RuntimeError("relay")
    wrapped.__cause__ = _js_error(503, 10023, "insufficient resources")
    assert storage.disk_full_message(wrapped) == storage.EVENT_STORE_FULL


def test_a_postgres_disk_full_is_recognised_through_sqlalchemys_wrapper() -> None:
    full = DBAPIError("INSERT …", None, asyncpg.exceptions.DiskFullError("could not extend file"))
    assert storage.is_postgres_disk_full(full)
    assert storage.disk_full_message(full) == storage.POSTGRES_DISK_FULL
    assert db.is_unavailable(full)  # an outage: retried by the loops, 503 from the API
    other = OperationalError("SELECT 1", None, asyncpg.exceptions.TooManyConnectionsError("too many"))
    assert not storage.is_postgres_disk_full(other)
    assert storage.disk_full_message(other) is None
