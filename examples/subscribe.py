"""Follow one research job's events straight from NATS, with nothing but nats-py.

Every job publishes its events on ``research.events.<job_id>.<type>`` (stream
RESEARCH_EVENTS). This script reads the published contract from the gateway
(``GET /api/schemas/events``: a JSON Schema per event type), subscribes to
``research.events.<job_id>.>`` from the job's first event, prints each event's fields
as its schema names them, and stops after the job's final status event. When the
``jsonschema`` package is installed, each event is also validated against its schema.

    python examples/subscribe.py JOB_ID --nats nats://127.0.0.1:4222 --gateway http://127.0.0.1:8080

``--key`` (or RESEARCH_API_KEY) is the gateway's API key when it requires one. Exit
status: 0 when the job completed, 1 when it ended otherwise, 2 on bad input or an event
that does not match its schema.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import urllib.request
from typing import Any

import nats
import nats.errors

try:  # optional: validation when available, field names from the schemas either way
    import jsonschema
except ImportError:  # pragma: no cover - depends on the environment
    jsonschema = None

TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "EXPIRED"}
SKIP_FIELDS = {"job_id", "at", "type"}


def fetch_schemas(gateway: str, key: str | None) -> dict[str, Any]:
    request = urllib.request.Request(f"{gateway.rstrip('/')}/api/schemas/events")
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    with urllib.request.urlopen(request, timeout=10) as response:  # noqa: S310 - the user's own gateway URL
        return json.load(response)


def describe(event: dict[str, Any], schema: dict[str, Any] | None) -> str:
    """The event's fields in its schema's order; long values are cut."""
    names = list(schema["properties"]) if schema else list(event)
    parts = []
    for name in names:
        if name in SKIP_FIELDS or event.get(name) in (None, [], {}):
            continue
        value = event[name] if isinstance(event[name], str) else json.dumps(event[name], separators=(",", ":"))
        parts.append(f"{name}={value[:80]}")
    return " ".join(parts)


def check(event: dict[str, Any], schema: dict[str, Any] | None) -> str | None:
    """Why the event does not match its schema (None: it does, or it cannot be checked)."""
    if schema is None:
        return f"no schema for event type {event.get('type')!r}"
    if jsonschema is None:
        return None
    try:
        jsonschema.validate(event, schema)
    except jsonschema.ValidationError as exc:
        return exc.message
    return None


async def follow(job_id: str, servers: list[str], schemas: dict[str, Any]) -> int:
    nc = await nats.connect(servers=servers)
    status, invalid = None, 0
    try:
        js = nc.jetstream()
        # An ordered consumer replays the job's events from its first one, then goes on live.
        sub = await js.subscribe(f"research.events.{job_id}.>", stream="RESEARCH_EVENTS", ordered_consumer=True)
        while status not in TERMINAL:
            try:
                msg = await sub.next_msg(timeout=600)
            except nats.errors.TimeoutError:
                print("no event for 10 minutes; giving up", file=sys.stderr)
                return 1
            event = json.loads(msg.data)
            schema = schemas.get(event.get("type"))
            problem = check(event, schema)
            if problem:
                invalid += 1
                print(f"  does not match its schema: {problem}", file=sys.stderr)
            print(f"{msg.metadata.sequence.stream:>6} {event.get('type', '?'):<16} {describe(event, schema)}", flush=True)
            if event.get("type") == "status":
                status = event.get("status")
    finally:
        await nc.close()
    if invalid:
        return 2
    return 0 if status == "COMPLETED" else 1


def main() -> int:
    p = argparse.ArgumentParser(description="Print one research job's events from NATS.")
    p.add_argument("job_id")
    p.add_argument("--nats", default=os.environ.get("NATS_URL", "nats://127.0.0.1:4222"), help="NATS URL(s), comma-separated")
    p.add_argument("--gateway", default=os.environ.get("RESEARCH_GATEWAY_URL", "http://127.0.0.1:8080"))
    p.add_argument("--key", default=os.environ.get("RESEARCH_API_KEY"), help="the gateway's API key, if it requires one")
    args = p.parse_args()
    try:
        contract = fetch_schemas(args.gateway, args.key)
    except OSError as exc:
        print(f"cannot read the event schemas from {args.gateway}: {exc}", file=sys.stderr)
        return 2
    print(f"following {contract['subscribe'].replace('<job_id>', args.job_id)}; event types: {', '.join(contract['events'])}", flush=True)
    return asyncio.run(follow(args.job_id, [u.strip() for u in args.nats.split(",")], contract["events"]))


if __name__ == "__main__":
    sys.exit(main())
