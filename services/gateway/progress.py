"""A job's progress from its events: what a batch of progress and stage events changes
in each job's stored state (stage, iteration, overall progress, usage, the last retry's
error), coalesced so that the gateway writes each job once per batch. Pure: the
lifecycle's event loop reads the batch and stores the result (services/gateway/jobs.py).
"""

from __future__ import annotations

import logging

from nats.aio.msg import Msg
from pydantic import ValidationError

from services.gateway import jobs
from shared import subjects
from shared.research.events import ProgressEvent, StageEvent, StageState, parse_event

__all__ = ["coalesce"]

log = logging.getLogger("services.gateway.lifecycle")  # the event loop's logger, as before


def coalesce(msgs: list[Msg]) -> dict[str, jobs.JobProgress]:
    """Each job's state after a batch of progress and stage events, in stream order.
    An unreadable event is dropped with a log line: it changes no job state."""
    updates: dict[str, jobs.JobProgress] = {}
    for msg in msgs:
        try:
            event = parse_event(msg.data)
        except ValidationError as exc:
            log.error("dropping an unreadable event on %s (it changes no job state): %s", msg.subject, exc)
            continue
        match event:
            case ProgressEvent():
                _advance(updates, event.job_id, event.stage.value, event.iteration, event.progress)
            case StageEvent(state=StageState.STARTED):
                _advance(updates, event.job_id, event.stage.value, event.iteration, 0.0)
            case StageEvent(state=StageState.DONE, usage=usage) if usage is not None and usage.calls:
                updates.setdefault(event.job_id, jobs.JobProgress()).add_usage(usage)
            case StageEvent(state=StageState.RETRYING):
                u = updates.setdefault(event.job_id, jobs.JobProgress())
                u.error = f"{event.stage.value} attempt {event.delivery} failed: {event.error or ''}"
            case _:
                pass  # stage done without usage, skipped: nothing to persist
    return updates


def _advance(updates: dict[str, jobs.JobProgress], job_id: str, stage: str, iteration: int, within: float) -> None:
    u = updates.setdefault(job_id, jobs.JobProgress())
    u.stage = stage
    u.iteration = max(u.iteration, iteration)
    u.progress = max(u.progress, subjects.overall_progress(stage, within))
