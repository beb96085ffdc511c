"""The published event contract against a running system: the event schemas, the
AsyncAPI document, examples/subscribe.py reading a job from NATS, and SSE resuming
from Last-Event-ID."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import jsonschema
import pytest

from shared.subjects import Stage
from tests.integration.harness import System

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
EVENT_TYPES = {
    "progress", "stage", "completed", "failed", "clarification", "plan_review", "status", "council",
    "digest.started", "digest.completed", "digest.skipped", "digest.error", "digest.pdf_extract_error",
    "digest.circuit_breaker_triggered",
}
KEY = "key-alice"


@pytest.fixture(scope="module")
def finished_job(system: System) -> str:
    job_id = system.submit("How do lighthouses use Fresnel lenses?", key=KEY, max_iterations=1)
    system.wait_terminal(job_id, key=KEY, timeout=120)
    return job_id


def _sse(response: httpx.Response) -> list[tuple[str | None, dict[str, Any]]]:
    out, event_id = [], None
    for line in response.iter_lines():
        if line.startswith("id: "):
            event_id = line[4:]
        elif line.startswith("data: "):
            out.append((event_id, json.loads(line[6:])))
            event_id = None
    return out


def test_every_event_type_has_a_schema_that_its_events_match(system: System, finished_job: str) -> None:
    with system.client(KEY) as c:
        contract = c.get("/api/schemas/events").json()
    with system.client() as anonymous:
        assert anonymous.get("/api/schemas/events").status_code == 401
    assert set(contract["events"]) == EVENT_TYPES
    for kind, schema in contract["events"].items():
        assert schema["properties"]["type"]["const"] == kind
        jsonschema.Draft202012Validator.check_schema(schema)
    assert contract["subscribe"] == "research.events.<job_id>.>"
    events = system.events(finished_job)
    assert {e["type"] for e in events} >= {"stage", "progress", "status"}
    for event in events:
        jsonschema.validate(event, contract["events"][event["type"]])


def test_the_asyncapi_document_covers_stage_commands_and_every_event(system: System) -> None:
    r = httpx.get(f"{system.url}/asyncapi.json", timeout=10)
    assert r.status_code == 200
    doc = r.json()
    assert doc["asyncapi"] == "3.0.0"
    channels = doc["channels"]
    for stage in Stage:
        assert channels[f"stage.{stage.value}"]["address"] == f"research.stage.{stage.value}"
    for kind in EVENT_TYPES:
        channel = channels[f"events.{kind}"]
        assert channel["address"] == f"research.events.{{job_id}}.{kind}" and "job_id" in channel["parameters"]
    assert channels["job-events"]["address"] == "research.events.{job_id}.>"
    assert set(channels["job-events"]["messages"]) == EVENT_TYPES
    # Every message's payload is a schema of the document, and every operation names a channel.
    for name, message in doc["components"]["messages"].items():
        ref = message["payload"]["$ref"]
        assert ref.startswith("#/components/schemas/") and ref.rsplit("/", 1)[1] in doc["components"]["schemas"], name
    assert {op["channel"]["$ref"].rsplit("/", 1)[1] for op in doc["operations"].values()} == set(channels)
    assert "@" not in json.dumps(doc["servers"])  # the NATS URL's credentials are not published


def test_subscribe_example_prints_a_jobs_events_from_nats(system: System) -> None:
    job_id = system.submit("Why were lighthouse keepers replaced?", key=KEY, max_iterations=1)
    r = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "subscribe.py"), job_id, "--nats", system.nats_url or "", "--gateway", system.url, "--key", KEY],
        capture_output=True, text=True, timeout=180,
    )
    final = system.job(job_id, key=KEY)["status"]
    assert r.returncode == (0 if final == "COMPLETED" else 1), r.stderr
    assert "does not match" not in r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"following research.events.{job_id}.>")
    kinds = [line.split()[1] for line in lines[1:]]
    assert "stage" in kinds and "progress" in kinds
    assert kinds[-1] == "status" and f"status={final}" in lines[-1]
    assert "stage=plan" in r.stdout  # fields named by the schema


def test_sse_resumes_after_last_event_id(system: System, finished_job: str) -> None:
    url = f"/api/research/jobs/{finished_job}/events"
    with system.client(KEY) as c:
        with c.stream("GET", url) as r:
            everything = _sse(r)
        assert len(everything) >= 5 and all(event_id and event_id.isdigit() for event_id, _ in everything)
        cut = len(everything) // 2
        with c.stream("GET", url, headers={"Last-Event-ID": everything[cut][0]}) as r:
            assert r.status_code == 200
            rest = _sse(r)
        assert rest == everything[cut + 1:]
        with c.stream("GET", url, headers={"Last-Event-ID": everything[-1][0]}) as r:
            tail = _sse(r)
        # Nothing after the last event: only the closing status, read from the database.
        assert [e["type"] for _, e in tail] == ["status"] and tail[0][1]["status"] == everything[-1][1]["status"]
        bad = c.get(url, headers={"Last-Event-ID": "not-a-number"})
        assert bad.status_code == 422 and "Last-Event-ID" in bad.json()["message"]

