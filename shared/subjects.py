"""Every stream, subject, durable and bucket name in the system.

Nobody types a subject string anywhere else: import it from here.
Commands are imperative (``research.stage.score``: a stage is told to work);
events are facts (``research.events.<job_id>.completed``).
"""

from __future__ import annotations

from enum import StrEnum


class Stage(StrEnum):
    """The stages a job envelope travels through, in order."""

    PLAN = "plan"
    RETRIEVE = "retrieve"
    DIGEST = "digest"
    SCORE = "score"
    SYNTHESIZE = "synthesize"


# Where each stage sits on a job's 0..1 progress, as the gateway records it and the CLI
# draws it (a stage's own progress is mapped into its span).
STAGE_SPAN: dict[str, tuple[float, float]] = {
    Stage.PLAN: (0.0, 0.1),
    Stage.RETRIEVE: (0.1, 0.4),
    Stage.DIGEST: (0.4, 0.6),
    Stage.SCORE: (0.6, 0.8),
    Stage.SYNTHESIZE: (0.8, 1.0),
}


def overall_progress(stage: str, within: float) -> float:
    """The job's progress when ``stage`` is ``within`` (0..1, clamped) of its own work."""
    lo, hi = STAGE_SPAN.get(stage, (0.0, 1.0))
    return round(lo + (hi - lo) * max(0.0, min(1.0, within)), 4)


# -- streams -----------------------------------------------------------------

JOBS_STREAM = "RESEARCH_JOBS"
"""Stage commands. Limits retention with max_age = job TTL, deduplicated by Nats-Msg-Id."""

EVENTS_STREAM = "RESEARCH_EVENTS"
"""Job events (progress, stage, completed, failed, status). Replayable per job for SSE."""

DEADLETTER_STREAM = "RESEARCH_DEADLETTER"
"""Captures JetStream's MAX_DELIVERIES advisories for the jobs stream, so that a poison
message becomes a FAILED job even when no gateway was listening at that instant."""

# -- command subjects ----------------------------------------------------------

STAGE_PREFIX = "research.stage"
STAGE_WILDCARD = f"{STAGE_PREFIX}.>"


def stage_subject(stage: Stage) -> str:
    return f"{STAGE_PREFIX}.{stage.value}"


PLAN = stage_subject(Stage.PLAN)
RETRIEVE = stage_subject(Stage.RETRIEVE)
DIGEST = stage_subject(Stage.DIGEST)
SCORE = stage_subject(Stage.SCORE)
SYNTHESIZE = stage_subject(Stage.SYNTHESIZE)

# -- event subjects ------------------------------------------------------------

EVENTS_PREFIX = "research.events"
EVENTS_WILDCARD = f"{EVENTS_PREFIX}.>"


def event_subject(job_id: str, kind: str) -> str:
    """``research.events.<job_id>.<kind>``; kind is an event type such as ``progress``."""
    return f"{EVENTS_PREFIX}.{job_id}.{kind}"


def job_events_filter(job_id: str) -> str:
    """Every event of one job (what SSE replays)."""
    return f"{EVENTS_PREFIX}.{job_id}.>"


# -- advisories ---------------------------------------------------------------

MAX_DELIVERIES_ADVISORY = f"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.{JOBS_STREAM}.*"

# -- durable consumers ---------------------------------------------------------
# Versioned: a changed consumer config in code does nothing to an existing durable
# on the server, so a config change bumps the suffix and creates a new durable.

DURABLE_VERSION = "v1"


def stage_durable(stage: Stage) -> str:
    return f"{stage.value}-{DURABLE_VERSION}"


# The gateway reads job events through two durables, so that an outcome never waits
# behind other jobs' progress. v3: progress and stage events only (v2 took every event).
GATEWAY_EVENTS_DURABLE = "gateway-events-v3"
# v2: also plan_review events (a consumer's filter changes by a new name).
GATEWAY_OUTCOMES_DURABLE = "gateway-outcomes-v2"
GATEWAY_RETIRED_DURABLES = ("gateway-events-v2", "gateway-events-deadletter-v1", "gateway-outcomes-v1",
                            "gateway-events-deadletter-v2")
"""Durables of earlier gateway versions, deleted at start-up (a durable nobody reads
would only keep a count of pending messages)."""
GATEWAY_DEADLETTER_DURABLE = f"gateway-deadletter-{DURABLE_VERSION}"
# v2: also the outcome consumer's advisories; v3: those of gateway-outcomes-v2.
GATEWAY_EVENTS_DEADLETTER_DURABLE = "gateway-events-deadletter-v3"

PROGRESS_KINDS = ("progress", "stage")
"""Event kinds the gateway stores coalesced (each job's latest, once per batch)."""
OUTCOME_KINDS = ("completed", "failed", "clarification", "plan_review")
"""Event kinds that move a job to another status: read by their own consumer."""


def event_kinds_filter(kinds: tuple[str, ...]) -> list[str]:
    """The subjects of these event kinds, for every job (a consumer's filter_subjects)."""
    return [f"{EVENTS_PREFIX}.*.{kind}" for kind in kinds]


EVENTS_MAX_DELIVERIES_ADVISORY = f"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.{EVENTS_STREAM}.{GATEWAY_EVENTS_DURABLE}"
"""An event the gateway's consumer gave up on (its process stopped on every attempt):
captured in the dead-letter stream so that the job still fails with a reason."""
OUTCOMES_MAX_DELIVERIES_ADVISORY = f"$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.{EVENTS_STREAM}.{GATEWAY_OUTCOMES_DURABLE}"
"""The same for the gateway's outcome consumer."""

# -- key-value and object stores ----------------------------------------------

CONTROL_BUCKET = "research_control"
"""Key = job id, value = the status that stopped it (``CANCELLED``, ``EXPIRED``).
Stages read it before and during work."""

TEXT_BUCKET = "research_texts"
"""Object store of canonical source texts, keyed by ``sha256-<hex>``."""

DIGEST_ARCHIVE_BUCKET = "research_digest_archive"
"""Object store of the canonical texts that digests quote, keyed by ``sha256-<hex>``;
kept DIGEST_ARCHIVE_RETENTION_DAYS so that anyone can verify a locator later."""

DIGEST_CACHE_BUCKET = "research_digest_cache"
"""Key-value store of finished digests shared by every digest process, keyed by
the digest's cache key (``:`` written as ``.``)."""

SEARCH_CACHE_BUCKET = "research_search_cache"
"""Key-value store of web and PubMed search results shared by every retrieval process;
key = hash of provider, query and parameters; entries expire after
RESEARCH_SEARCH_CACHE_TTL_S."""

USAGE_BUCKET = "research_usage"
"""Key-value store of each job's model spend: key = job id, value = tokens counted
against RESEARCH_MAX_TOKENS_PER_JOB by every attempt of every stage (a failed attempt's
calls included), updated by compare-and-set after each call and read when a stage
takes the job, so a redelivered stage does not start from the envelope's count."""

RATELIMIT_BUCKET = "research_ratelimit"
"""Key-value store of rate limiters held across processes (E-utilities): key = the
limited API, value = the next free request slot, reserved by compare-and-set."""

__all__ = [
    "STAGE_SPAN",
    "overall_progress",
    "CONTROL_BUCKET",
    "DEADLETTER_STREAM",
    "DIGEST",
    "DIGEST_ARCHIVE_BUCKET",
    "DIGEST_CACHE_BUCKET",
    "DURABLE_VERSION",
    "EVENTS_MAX_DELIVERIES_ADVISORY",
    "EVENTS_PREFIX",
    "EVENTS_STREAM",
    "EVENTS_WILDCARD",
    "GATEWAY_DEADLETTER_DURABLE",
    "GATEWAY_EVENTS_DEADLETTER_DURABLE",
    "GATEWAY_EVENTS_DURABLE",
    "GATEWAY_OUTCOMES_DURABLE",
    "GATEWAY_RETIRED_DURABLES",
    "JOBS_STREAM",
    "MAX_DELIVERIES_ADVISORY",
    "OUTCOMES_MAX_DELIVERIES_ADVISORY",
    "OUTCOME_KINDS",
    "PLAN",
    "PROGRESS_KINDS",
    "RATELIMIT_BUCKET",
    "RETRIEVE",
    "SCORE",
    "SEARCH_CACHE_BUCKET",
    "STAGE_PREFIX",
    "STAGE_WILDCARD",
    "SYNTHESIZE",
    "TEXT_BUCKET",
    "USAGE_BUCKET",
    "Stage",
    "event_kinds_filter",
    "event_subject",
    "job_events_filter",
    "stage_durable",
    "stage_subject",
]
