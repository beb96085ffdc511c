"""A job through HTTP, against real nats-server, PostgreSQL and service processes."""

from __future__ import annotations

import re

import httpx

from services.retrieval.search import LocalSearcher
from services.synthesis.wording import citation_numbers
from tests.integration.harness import System

ALICE, BOB, CAROL = "key-alice", "key-bob", "key-carol"


def test_job_completes_with_a_report_citing_the_corpus(system: System) -> None:
    job_id = system.submit("How did automation change lighthouse keeping?", key=ALICE, max_iterations=3)
    job = system.wait_terminal(job_id, key=ALICE)
    assert job["status"] == "COMPLETED", job
    assert job["progress"] == 1.0 and job["finished_at"]

    with system.client(ALICE) as c:
        result = c.get(f"/api/research/jobs/{job_id}/result").json()
        sources = c.get(f"/api/research/jobs/{job_id}/sources").json()["sources"]
    report, output = result["report"], result["output"]
    assert "without an LLM" in report
    assert output["trace_id"] == job_id
    assert output["status"] in ("completed", "max_iterations_reached")
    cited = citation_numbers(report)
    assert cited, report
    assert cited == set(range(1, len(output["sources"]) + 1))
    assert any("lighthouses.md" in s["url"] for s in output["sources"])
    assert all(s["url"].startswith("corpus://testdocs/") for s in output["sources"])
    assert result["tokenUsage"]["input_tokens"] == 0

    # Every scoring dimension is stored, and every evidence locator points at the
    # exact passage of the indexed document's canonical text.
    assert sources and {"authority_score", "recency_score", "relevance_component", "credibility_score", "composite_score"} <= set(sources[0])
    searcher = LocalSearcher(system.root / "data" / "corpora")
    checked = 0
    for s in sources:
        relpath = s["url"].removeprefix("corpus://testdocs/")
        text = searcher.document_text("testdocs", relpath)
        for snippet in s["digest"]["evidence_snippets"]:
            start, end = map(int, re.fullmatch(r"char:(\d+)-(\d+)", snippet["locator"]).groups())
            assert text[start:end] == snippet["text"]
            checked += 1
    assert checked > 0


def test_events_replay_from_the_start_and_close_at_the_end(system: System) -> None:
    job_id = system.submit("What causes spring tides?", key=ALICE, max_iterations=1)
    system.wait_terminal(job_id, key=ALICE)
    events = []
    with system.client(ALICE) as c, c.stream("GET", f"/api/research/jobs/{job_id}/events", timeout=httpx.Timeout(10, read=20)) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        for line in r.iter_lines():
            if line.startswith("event: "):
                events.append(line[7:])
    assert events[0] == "status"  # QUEUED
    assert events[-1] == "status"  # COMPLETED, then the stream closed
    assert {"progress", "stage", "completed"} <= set(events)
    stage_events = [e for e in system.events(job_id) if e["type"] == "stage" and e["state"] == "started"]
    assert [e["stage"] for e in stage_events] == ["plan", "retrieve", "digest", "score", "synthesize"]


def test_users_see_only_their_own_jobs(system: System) -> None:
    job_id = system.submit("What do worker bees build?", key=ALICE, max_iterations=1)
    with system.client(BOB) as bob:
        assert bob.get(f"/api/research/jobs/{job_id}").status_code == 404
        assert bob.get(f"/api/research/jobs/{job_id}/result").status_code == 404
        assert bob.get(f"/api/research/jobs/{job_id}/events").status_code == 404
        assert bob.post(f"/api/research/jobs/{job_id}/cancel").status_code == 404
        assert job_id not in {j["job_id"] for j in bob.get("/api/research/jobs").json()["items"]}
    with system.client(ALICE) as alice:
        listed = alice.get("/api/research/jobs", params={"limit": 1}).json()
        assert listed["items"][0]["job_id"] == job_id  # newest first
        assert listed["total"] >= 1 and listed["limit"] == 1
    with system.client() as anonymous:
        r = anonymous.get("/api/research/jobs")
        assert r.status_code == 401 and "API key" in r.json()["detail"]
    with system.client("not-a-key") as wrong:
        assert wrong.post("/api/research/jobs", json={"question": "x"}).status_code == 401
    system.wait_terminal(job_id, key=ALICE)


def test_invalid_requests_get_422_naming_the_field(system: System) -> None:
    cases = [
        ({"question": ""}, "question"),
        ({"question": "   "}, "question"),
        ({"question": "x" * 5000}, "question"),
        ({"question": "ok", "colour": "blue"}, "colour"),
        ({"question": "ok", "max_iterations": 0}, "max_iterations"),
        ({"question": "ok", "max_iterations": 51}, "max_iterations"),
        ({"question": "ok", "corpora": ["../etc"]}, "corpora"),
        ({}, "question"),
    ]
    with system.client(BOB) as c:
        for body, field in cases:
            r = c.post("/api/research/jobs", json=body)
            assert r.status_code == 422, (body, r.text)
            assert field in r.text, (body, r.text)
        r = c.post("/api/research/jobs", content=b"{not json", headers={"content-type": "application/json"})
        assert r.status_code == 422 and "JSON" in r.text
        assert c.get("/api/research/jobs", params={"limit": 0}).status_code == 422


def test_the_eleventh_submission_in_the_window_is_429(system: System) -> None:
    with system.client(CAROL) as c:
        for _ in range(10):
            assert c.post("/api/research/jobs", json={"question": "Why do beekeepers leave honey?", "max_iterations": 1}).status_code == 202
        r = c.post("/api/research/jobs", json={"question": "One more?"})
        assert r.status_code == 429
        assert 0 < int(r.headers["Retry-After"]) <= 900
    with system.client(BOB) as other:  # another user is not limited by carol's jobs
        assert other.post("/api/research/jobs", json={"question": "How do tides work?", "max_iterations": 1}).status_code == 202


def test_cancelling_a_finished_job_is_409_and_queue_summary_counts(system: System) -> None:
    job_id = system.submit("What are neap tides?", key=BOB, max_iterations=1)
    assert system.wait_terminal(job_id, key=BOB)["status"] == "COMPLETED"
    with system.client(BOB) as c:
        r = c.post(f"/api/research/jobs/{job_id}/cancel")
        assert r.status_code == 409 and "COMPLETED" in r.text
        summary = c.get("/api/research/queue/summary").json()
    assert summary["counts"]["COMPLETED"] >= 1
    assert set(summary["counts"]) == {"QUEUED", "PROCESSING", "AWAITING_INPUT", "COMPLETED", "FAILED", "CANCELLED", "EXPIRED"}


def test_unknown_corpus_fails_the_job_with_the_reason(system: System) -> None:
    job_id = system.submit("Anything?", key=BOB, corpora=["nope"], max_iterations=1)
    job = system.wait_terminal(job_id, key=BOB)
    assert job["status"] == "FAILED"
    assert "unknown corpus 'nope'" in job["error"] and "testdocs" in job["error"]
    with system.client(BOB) as c:
        r = c.get(f"/api/research/jobs/{job_id}/result")
    assert r.status_code == 409 and "FAILED" in r.text


def test_health_readiness_and_docs(system: System) -> None:
    with system.client() as c:
        assert c.get("/healthz").json() == {"status": "ok"}
        ready = c.get("/readyz")
        assert ready.status_code == 200 and ready.json() == {"ready": True, "nats": True, "postgres": True}
        assert c.get("/docs").status_code == 200
        paths = c.get("/openapi.json").json()["paths"]
    for path in (
        "/api/research/jobs", "/api/research/jobs/{job_id}", "/api/research/jobs/{job_id}/result",
        "/api/research/jobs/{job_id}/sources", "/api/research/jobs/{job_id}/cancel",
        "/api/research/jobs/{job_id}/events", "/api/research/queue/summary",
    ):
        assert path in paths
