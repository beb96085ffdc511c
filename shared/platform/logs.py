"""One log format for every process, so interleaved output of `deepresearch up` reads well.

While a stage works on a job (and while the gateway handles a job's event), every log
line carries the job id, the stage and the delivery attempt, whichever logger wrote
it: the runner sets them in a context variable (:func:`job_context`) and a filter on
the root handler copies them onto each record. ``RESEARCH_LOG_FORMAT=json`` writes one
JSON object a line (for a log shipper) instead of text.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime

__all__ = ["JobLogContext", "JsonFormatter", "configure_logging", "current_job", "job_context"]


@dataclass(frozen=True)
class JobLogContext:
    job_id: str
    stage: str = ""
    delivery: int | None = None

    def text(self) -> str:
        parts = [f"job={self.job_id}"]
        if self.stage:
            parts.append(f"stage={self.stage}")
        if self.delivery is not None:
            parts.append(f"attempt={self.delivery}")
        return " [" + " ".join(parts) + "]"


_job: ContextVar[JobLogContext | None] = ContextVar("research_job_log_context", default=None)


def current_job() -> JobLogContext | None:
    return _job.get()


@contextlib.contextmanager
def job_context(job_id: str, stage: str = "", delivery: int | None = None) -> Iterator[JobLogContext]:
    """Log lines written inside (by this task and the tasks it starts) name the job."""
    ctx = JobLogContext(job_id, stage, delivery)
    token = _job.set(ctx)
    try:
        yield ctx
    finally:
        _job.reset(token)


class _JobFilter(logging.Filter):
    """Copies the job context onto every record (``job`` is the text form, empty
    outside a job), so any formatter can use it."""

    def filter(self, record: logging.LogRecord) -> bool:
        ctx = _job.get()
        record.job_id = ctx.job_id if ctx else None
        record.stage = ctx.stage if ctx else None
        record.delivery = ctx.delivery if ctx else None
        record.job = ctx.text() if ctx else ""
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, process, and the job's
    id, stage and attempt when the line was written inside a job."""

    def __init__(self, process_name: str = "") -> None:
        super().__init__()
        self.process_name = process_name

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if self.process_name:
            out["process"] = self.process_name
        for key in ("job_id", "stage", "delivery"):
            value = getattr(record, key, None)
            if value not in (None, ""):
                out[key] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


def configure_logging(level: str = "INFO", fmt: str = "text") -> None:
    """``fmt``: ``text`` (default) or ``json`` (RESEARCH_LOG_FORMAT)."""
    name = os.environ.get("RESEARCH_PROCESS_NAME", "")
    prefix = f"{name} " if name else ""
    logging.basicConfig(
        level=level.upper(),
        format=f"%(asctime)s {prefix}%(levelname)s %(name)s%(job)s: %(message)s",
        force=True,
    )
    for handler in logging.getLogger().handlers:
        handler.addFilter(_JobFilter())
        if fmt == "json":
            handler.setFormatter(JsonFormatter(name))
