from __future__ import annotations

from datetime import timedelta

import pytest

from shared.runtime import routing
from shared.research.envelope import JobEnvelope, ResearchRequest, utcnow
from shared.platform.errors import PermanentError
from shared.subjects import PLAN, RETRIEVE, SYNTHESIZE, Stage


def _envelope(stage: Stage) -> JobEnvelope:
    return JobEnvelope(job_id="j1", user_id="u", stage=stage, request=ResearchRequest(question="q"),
                       deadline_at=utcnow() + timedelta(minutes=10))


def test_every_stage_has_a_route_and_the_pipeline_reaches_synthesis_from_planning() -> None:
    assert set(routing.ROUTES) == set(Stage)
    reached, frontier = {routing.FIRST_STAGE}, [routing.FIRST_STAGE]
    while frontier:
        for nxt in routing.ROUTES[frontier.pop()]:
            if nxt not in reached:
                reached.add(nxt)
                frontier.append(nxt)
    assert reached == set(Stage)
    assert routing.ROUTES[Stage.SYNTHESIZE] == frozenset()


def test_the_envelope_names_the_next_stage_and_the_table_gives_its_subject() -> None:
    assert routing.next_subject(Stage.PLAN, _envelope(Stage.RETRIEVE)) == RETRIEVE
    assert routing.next_subject(Stage.SCORE, _envelope(Stage.PLAN)) == PLAN  # a refinement pass
    assert routing.next_subject(Stage.SCORE, _envelope(Stage.SYNTHESIZE)) == SYNTHESIZE
    assert routing.emits(Stage.SCORE) == (PLAN, SYNTHESIZE)
    assert routing.consumes(Stage.RETRIEVE) == RETRIEVE


@pytest.mark.parametrize(("current", "returned"), [
    (Stage.PLAN, Stage.SYNTHESIZE),  # skipping stages
    (Stage.RETRIEVE, Stage.RETRIEVE),  # a stage handing the job to itself
    (Stage.SYNTHESIZE, Stage.PLAN),  # synthesis ends the job with an event
])
def test_a_route_not_in_the_table_is_a_permanent_error(current: Stage, returned: Stage) -> None:
    with pytest.raises(PermanentError, match=f"{current} stage returned an envelope for {returned}"):
        routing.next_subject(current, _envelope(returned))
