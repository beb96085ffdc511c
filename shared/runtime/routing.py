"""Where a job goes after each stage: the one routing table of the pipeline.

A stage's work returns the envelope for the next stage, its ``stage`` field naming
that stage; this table says which next stages each stage may hand a job to, and the
runner publishes to the subject of the one named. A route not in the table is a bug
in the stage (the job fails with it) rather than a message sent somewhere no stage
expects it.

    plan ──> retrieve ──> digest ──> score ──> synthesize ──> completed event
      ^  ^       │                      │
      │  └───────┘ context search       │
      │          (once, before the brief)
      └──────── refinement pass ────────┘

Before its first plan a job may go plan -> retrieve -> plan once: a quick context
search whose titles and snippets the brief is written from. Both commands run at
iteration -1 (``CONTEXT_ITERATION``) and carry ``envelope.phase`` ("context", then
"brief") in their Nats-Msg-Id, so neither collides with iteration 0's own plan and
retrieve commands (nor with their stage events and trace rows).

Planning may instead end the hop with a ``clarification`` or ``plan_review`` event (the
job then waits for the user; an approved plan comes back as a plan command with
``phase="reviewed"`` and goes on to retrieval), and synthesis ends
the job with its ``completed`` event; those are events, not commands, and go to the
job's event subjects.
"""

from __future__ import annotations

from types import MappingProxyType

from shared.research.envelope import JobEnvelope
from shared.platform.errors import PermanentError
from shared.subjects import Stage, stage_subject

ROUTES: MappingProxyType[Stage, frozenset[Stage]] = MappingProxyType({
    Stage.PLAN: frozenset({Stage.RETRIEVE}),
    # The context search before the brief goes back to planning; every other search on.
    Stage.RETRIEVE: frozenset({Stage.DIGEST, Stage.PLAN}),
    Stage.DIGEST: frozenset({Stage.SCORE}),
    # Another pass while checklist items remain open, else the report.
    Stage.SCORE: frozenset({Stage.PLAN, Stage.SYNTHESIZE}),
    # The last stage: it ends the job with an event, never a command.
    Stage.SYNTHESIZE: frozenset(),
})
"""Each stage -> the stages it may hand a job to."""

FIRST_STAGE = Stage.PLAN
"""Where the gateway sends a new job (and a job whose clarification was answered)."""


def consumes(stage: Stage) -> str:
    """The command subject a stage's processes consume."""
    return stage_subject(stage)


def emits(stage: Stage) -> tuple[str, ...]:
    """The command subjects a stage may publish to, in pipeline order."""
    return tuple(stage_subject(s) for s in Stage if s in ROUTES[stage])


def next_subject(current: Stage, envelope: JobEnvelope) -> str:
    """The subject of the stage ``envelope`` names, checked against the table."""
    if envelope.stage not in ROUTES[current]:
        allowed = ", ".join(sorted(ROUTES[current])) or "none (it ends the job with an event)"
        raise PermanentError(f"the {current} stage returned an envelope for {envelope.stage}; its routes: {allowed}")
    return stage_subject(envelope.stage)


__all__ = ["FIRST_STAGE", "ROUTES", "consumes", "emits", "next_subject"]
