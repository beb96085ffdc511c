from __future__ import annotations

from datetime import timedelta

import pytest

from shared.research.envelope import JobEnvelope, ResearchRequest, utcnow
from shared.platform.errors import ConfigurationError
from shared.research.events import JobStatusChanged, ProgressEvent, parse_event
from shared.runtime.faults import parse_chaos
from shared.subjects import Stage, event_subject, stage_durable, stage_subject


def _envelope() -> JobEnvelope:
    return JobEnvelope(
        job_id="j1", user_id="u", stage=Stage.PLAN, request=ResearchRequest(question="q"),
        deadline_at=utcnow() + timedelta(minutes=10),
    )


def test_msg_id_is_deterministic_per_job_stage_and_iteration() -> None:
    env = _envelope()
    assert env.msg_id == "j1:plan:0"
    nxt = env.advance(Stage.RETRIEVE)
    assert nxt.msg_id == "j1:retrieve:0" and env.stage == Stage.PLAN  # advance copies
    assert nxt.advance(Stage.PLAN, iteration=2).msg_id == "j1:plan:2"


def test_envelope_round_trips_and_rejects_unknown_fields_and_versions() -> None:
    env = _envelope()
    assert JobEnvelope.model_validate_json(env.model_dump_json()) == env
    with pytest.raises(ValueError):
        JobEnvelope.model_validate_json(env.model_dump_json().replace('"version":1', '"version":2'))
    with pytest.raises(ValueError):
        JobEnvelope.model_validate({**env.model_dump(), "surprise": 1})


def test_subjects_and_durables() -> None:
    assert stage_subject(Stage.SCORE) == "research.stage.score"
    assert event_subject("j1", "progress") == "research.events.j1.progress"
    assert stage_durable(Stage.DIGEST) == "digest-v1"


def test_events_parse_by_type() -> None:
    e = ProgressEvent(job_id="j", stage=Stage.RETRIEVE, progress=0.5, message="m", counts={"hits": 3})
    assert parse_event(e.model_dump_json()) == e
    s = JobStatusChanged(job_id="j", status="CANCELLED")
    assert parse_event(s.model_dump_json()).status.terminal


def test_chaos_spec_parses_and_refuses_typos() -> None:
    assert parse_chaos("retrieve:delay=2.5, score:fail") == {"retrieve": {"delay": 2.5}, "score": {"fail": 1.0}}
    assert parse_chaos("") == {}
    with pytest.raises(ConfigurationError, match="retrieve"):
        parse_chaos("retrieval:delay=2")
    with pytest.raises(ConfigurationError):
        parse_chaos("score:explode")
