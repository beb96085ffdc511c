"""The published event contract: a JSON Schema for every job event type, and an AsyncAPI
document of the stage command subjects and the event subjects.

Anyone may subscribe to ``research.events.<job_id>.>``; these two documents say what
arrives there. Both are generated from the pydantic models the services themselves
publish with (``shared/research/events.py``, ``shared/research/envelope.py``) and from the subject and
routing tables (``shared/subjects.py``, ``shared/runtime/routing.py``), so they cannot drift
from what is sent.
"""

from __future__ import annotations

import functools
import typing
from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from faststream.nats import NatsBroker
from faststream.specification import AsyncAPI
from pydantic import BaseModel, ConfigDict, Field

from services.gateway.api import User
from shared import subjects
from shared.research.envelope import JobEnvelope
from shared.research.events import JobEvent
from shared.runtime.routing import FIRST_STAGE, ROUTES
from shared.subjects import Stage

EVENT_SUBJECT_PATTERN = f"{subjects.EVENTS_PREFIX}.<job_id>.<type>"
ALL_EVENTS_CHANNEL = "job-events"
JOB_ID_PARAMETER = {"description": "The job's id (a UUID), as returned by POST /api/research/jobs"}


class EventSchemas(BaseModel):
    """Every job event's JSON Schema, keyed by the event's ``type`` (also the last
    tokens of its subject)."""

    subject: str = Field(description="Where each event is published; <type> is the event's type")
    subscribe: str = Field(description="The subject filter that receives every event of one job")
    events: dict[str, dict[str, Any]] = Field(description="event type -> JSON Schema of its payload")


class AsyncApiDocument(BaseModel):
    """An AsyncAPI 3 document (https://www.asyncapi.com/docs/reference/specification/v3.0.0)."""

    model_config = ConfigDict(extra="allow")

    asyncapi: str
    info: dict[str, Any]
    channels: dict[str, Any]
    operations: dict[str, Any]
    components: dict[str, Any]


def event_models() -> dict[str, type[BaseModel]]:
    """The model of every event type, keyed by its ``type`` value, read from the
    discriminated union the parser uses (a new event type is listed by adding it there)."""
    union = typing.get_args(JobEvent)[0]
    models: dict[str, type[BaseModel]] = {}
    for model in typing.get_args(union):
        models[model.model_fields["type"].default] = model
    return models


@functools.cache
def event_schemas() -> EventSchemas:
    return EventSchemas(
        subject=EVENT_SUBJECT_PATTERN,
        subscribe=subjects.job_events_filter("<job_id>"),
        events={kind: model.model_json_schema() for kind, model in sorted(event_models().items())},
    )


def _publishers_of(stage: Stage) -> list[str]:
    """Who sends a stage its commands: the gateway (a new job) and the stages whose
    routes lead to it."""
    senders = ["the gateway"] if stage == FIRST_STAGE else []
    return senders + [f"the {s.value} stage" for s in Stage if stage in ROUTES[s]]


def _broker(nats_url: str) -> NatsBroker:
    """A broker never connected: only its declared publishers are read, to let
    FastStream write the channels, messages and payload schemas."""
    broker = NatsBroker(nats_url)
    for stage in Stage:
        broker.publisher(
            subjects.stage_subject(stage), schema=JobEnvelope, title=f"stage.{stage.value}",
            description=(
                f"Command: the {stage.value} stage's processes consume it (durable {subjects.stage_durable(stage)}, "
                f"stream {subjects.JOBS_STREAM}); sent by {' and '.join(_publishers_of(stage))}. "
                "The payload is the job's envelope; Nats-Msg-Id deduplicates a re-sent command."
            ),
        )
    for kind, model in sorted(event_models().items()):
        broker.publisher(
            subjects.event_subject("{job_id}", kind), schema=model, title=f"events.{kind}",
            description=f"Event ({subjects.EVENTS_STREAM} stream): {(model.__doc__ or kind).strip().splitlines()[0]}",
        )
    return broker


def _public_server(nats_url: str) -> str:
    """The first NATS URL without its credentials (a document anyone may read)."""
    parts = urlsplit(nats_url.split(",")[0].strip())
    return f"{parts.scheme or 'nats'}://{parts.hostname or '127.0.0.1'}:{parts.port or 4222}"


def _add_all_events_channel(doc: dict[str, Any]) -> None:
    """FastStream writes one channel per publisher; a subscriber to one job usually
    takes them all with ``research.events.<job_id>.>``: one channel says so, its
    messages being every event's."""
    messages = {}
    for name, channel in doc["channels"].items():
        if name.startswith("events."):
            channel["parameters"] = {"job_id": JOB_ID_PARAMETER}
            messages[name.removeprefix("events.")] = next(iter(channel["messages"].values()))
    address = subjects.job_events_filter("{job_id}")
    doc["channels"][ALL_EVENTS_CHANNEL] = {
        "address": address,
        "description": "Every event of one job (NATS wildcard '>'), in the order published; "
        "the message's `type` field says which schema applies.",
        "parameters": {"job_id": JOB_ID_PARAMETER},
        "messages": messages,
        "bindings": {"nats": {"subject": address, "bindingVersion": "custom"}},
    }
    doc["operations"][ALL_EVENTS_CHANNEL] = {
        "action": "send",
        "channel": {"$ref": f"#/channels/{ALL_EVENTS_CHANNEL}"},
        "messages": [{"$ref": f"#/channels/{ALL_EVENTS_CHANNEL}/messages/{key}"} for key in messages],
    }


@functools.cache
def asyncapi_document(nats_url: str, version: str) -> AsyncApiDocument:
    spec = AsyncAPI(
        _broker(_public_server(nats_url)), title="Deep research: stage commands and job events", version=version,
        description=(
            f"Stage commands travel on {subjects.STAGE_PREFIX}.<stage> (stream {subjects.JOBS_STREAM}); "
            f"job events on {EVENT_SUBJECT_PATTERN} (stream {subjects.EVENTS_STREAM}). "
            f"Subscribe to {subjects.job_events_filter('<job_id>')} to follow one job; every event's "
            "JSON Schema is also served at GET /api/schemas/events."
        ),
        schema_version="3.0.0",
    )
    doc = spec.to_specification().to_jsonable()
    _add_all_events_channel(doc)
    return AsyncApiDocument.model_validate(doc)


router = APIRouter()


@router.get("/api/schemas/events", response_model=EventSchemas, tags=["contract"])
async def get_event_schemas(user: User) -> EventSchemas:
    """The JSON Schema of every event published on research.events.<job_id>.<type>,
    keyed by the event's type."""
    return event_schemas()


@router.get("/asyncapi.json", response_model=AsyncApiDocument, tags=["contract"])
async def get_asyncapi(request: Request) -> AsyncApiDocument:
    """The AsyncAPI document of the stage command and job event subjects; public, like
    /openapi.json (it holds schemas and subject names, no data)."""
    return asyncapi_document(",".join(request.app.state.settings.nats_servers), request.app.version)


__all__ = ["AsyncApiDocument", "EventSchemas", "asyncapi_document", "event_models", "event_schemas", "router"]
