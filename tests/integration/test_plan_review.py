"""Plan review against the real system (nats-server, PostgreSQL, every stage offline):
a job with ``review_plan`` waits in AWAITING_INPUT with its plan; the user approves it
as it is or edited (``POST …/jobs/{id}/plan``) and research goes on with that plan; a
broken plan is a 422 naming the field and the job keeps waiting; 409 for a job that
waits on no plan, 404 for another user's. Waiting does not use up the research deadline."""

from __future__ import annotations

import time
import uuid
from typing import Any

from tests.integration.harness import System

ALICE, BOB = "key-alice", "key-bob"
QUESTION = "How do lighthouses use Fresnel lenses?"


def _wait_plan(system: System, job_id: str, timeout: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = system.job(job_id, key=ALICE)
        if job["status"] == "AWAITING_INPUT":
            return job
        assert job["status"] in ("QUEUED", "PROCESSING"), job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} never waited on its plan: {system.job(job_id, key=ALICE)}\n{system.logs()}")


def _post_plan(system: System, job_id: str, plan: dict[str, Any], key: str = ALICE):  # noqa: ANN202
    with system.client(key) as c:
        return c.post(f"/api/research/jobs/{job_id}/plan", json=plan)


def _result(system: System, job_id: str) -> dict[str, Any]:
    with system.client(ALICE) as c:
        r = c.get(f"/api/research/jobs/{job_id}/result")
    assert r.status_code == 200, r.text
    return r.json()


def _plan_review_trace(system: System, job_id: str) -> list[dict[str, Any]]:
    with system.client(ALICE) as c:
        r = c.get(f"/api/research/jobs/{job_id}/trace")
    assert r.status_code == 200, r.text
    return r.json()["plan_review"]


def test_a_plan_approved_as_it_is(system: System) -> None:
    job_id = system.submit(QUESTION, key=ALICE, max_iterations=1, review_plan=True)
    job = _wait_plan(system, job_id)
    assert job["review_plan"] is True and job["stage"] == "plan"
    plan = job["plan"]
    assert plan["refined_question"] and set(plan["scope"]) == {"in_scope", "out_of_scope"}
    assert plan["checklist"] and all(set(i) == {"id", "description"} for i in plan["checklist"])
    assert plan["steps"] and all(s["id"] and s["text"] for s in plan["steps"])
    # The plan waits for the user: nothing was searched for it yet.
    assert not [e for e in system.events(job_id) if e.get("type") == "stage" and e.get("stage") == "retrieve"]
    assert "plan_review" in [e["type"] for e in system.events(job_id)]

    assert _post_plan(system, job_id, plan, key=BOB).status_code == 404  # not Bob's job
    r = _post_plan(system, job_id, plan)
    assert r.status_code == 200, r.text
    assert r.json()["status"] in ("QUEUED", "PROCESSING") and r.json()["plan"] is None
    assert r.json()["plan_changes"] == []
    assert _post_plan(system, job_id, plan).status_code == 409  # approved already

    done = system.wait_terminal(job_id, key=ALICE)
    assert done["status"] == "COMPLETED", done
    result = _result(system, job_id)
    covered = [*result["output"]["checklist_coverage"]["satisfied"], *result["output"]["checklist_coverage"]["gaps"]]
    assert any(item["description"] in " ".join(covered) for item in plan["checklist"])
    reviews = _plan_review_trace(system, job_id)
    assert len(reviews) == 1 and reviews[0]["approved_as_is"] is True and reviews[0]["changes"] == []


def test_an_edited_plan_is_what_research_follows(system: System) -> None:
    job_id = system.submit(QUESTION, key=ALICE, max_iterations=1, review_plan=True)
    plan = _wait_plan(system, job_id)["plan"]

    # Broken plans: 422 naming the field, and the job keeps waiting with its plan.
    r = _post_plan(system, job_id, {**plan, "checklist": []})
    assert r.status_code == 422 and "checklist" in r.json()["message"], r.text
    steps = [{"id": "s1", "text": "Fresnel lens optics", "depends_on": ["s2"]},
             {"id": "s2", "text": "Lighthouse history", "kind": "hybrid", "depends_on": ["s1"]}]
    r = _post_plan(system, job_id, {**plan, "steps": steps})
    assert r.status_code == 422 and "steps" in r.json()["message"] and "cycle" in r.json()["message"], r.text
    r = _post_plan(system, job_id, {**plan, "steps": [{"text": "Optics", "depends_on": ["nope"]}]})
    assert r.status_code == 422 and "unknown step nope" in r.json()["message"], r.text
    job = system.job(job_id, key=ALICE)
    assert job["status"] == "AWAITING_INPUT" and job["plan"] == plan

    removed = plan["checklist"][0]
    added = "Which lighthouses still turn a Fresnel lens today"
    refined = "How did Fresnel lenses make lighthouse beams reach further?"
    edited = {
        **plan,
        "refined_question": refined,
        "checklist": [*plan["checklist"][1:], {"description": added}],
        "steps": [*plan["steps"], {"text": "Fresnel lens glass prisms and beam range"}],
    }
    r = _post_plan(system, job_id, edited)
    assert r.status_code == 200, r.text
    changes = {(c["part"], c["action"]) for c in r.json()["plan_changes"]}
    assert changes == {("checklist", "removed"), ("checklist", "added"), ("refined_question", "changed"),
                       ("step", "added")}

    done = system.wait_terminal(job_id, key=ALICE)
    assert done["status"] == "COMPLETED", done
    result = _result(system, job_id)
    coverage = result["output"]["checklist_coverage"]
    covered = " | ".join([*coverage["satisfied"], *coverage["gaps"]])
    assert added in covered and removed["description"] not in covered, coverage
    assert refined in result["report"]
    # The new step was searched: its text is one of the queries run.
    queries = {q["text"] for q in result["memory"]["searched"]} if result.get("memory") else set()
    trace = _plan_review_trace(system, job_id)
    assert len(trace) == 1 and trace[0]["approved_as_is"] is False
    assert {(c["part"], c["action"]) for c in trace[0]["changes"]} == changes
    removed_change = next(c for c in trace[0]["changes"] if c["action"] == "removed")
    assert removed_change["id"] == removed["id"] and removed_change["before"] == removed["description"]
    with system.client(ALICE) as c:
        iterations = c.get(f"/api/research/jobs/{job_id}/trace").json()["iterations"]
    searched = {q["text"] for it in iterations for q in it["queries"]} | queries
    assert "Fresnel lens glass prisms and beam range" in searched, searched


def test_only_a_job_waiting_on_its_plan_takes_one(system: System) -> None:
    plain = system.submit(QUESTION, key=ALICE, max_iterations=1)
    body = {"refined_question": "abc", "checklist": [{"description": "x"}], "steps": [{"text": "y"}]}
    assert _post_plan(system, plain, body).status_code == 409  # queued or running: no plan to review
    assert system.wait_terminal(plain, key=ALICE)["status"] == "COMPLETED"
    assert _post_plan(system, plain, body).status_code == 409
    assert _post_plan(system, str(uuid.uuid4()), body).status_code == 404

    waiting = system.submit(QUESTION, key=ALICE, max_iterations=1, review_plan=True)
    _wait_plan(system, waiting)
    with system.client(ALICE) as c:
        # A job waiting on its plan takes no clarification answer.
        assert c.post(f"/api/research/jobs/{waiting}/clarification", json={"answer": "x"}).status_code == 409
        assert c.post(f"/api/research/jobs/{waiting}/cancel").json()["status"] == "CANCELLED"
    assert _post_plan(system, waiting, body).status_code == 409


def test_waiting_for_the_review_does_not_use_up_the_deadline(system: System) -> None:
    job_id = system.submit(QUESTION, key=ALICE, max_iterations=1, review_plan=True, time_budget_s=4)
    plan = _wait_plan(system, job_id)["plan"]
    time.sleep(5)  # longer than the job's whole research time budget
    assert system.job(job_id, key=ALICE)["status"] == "AWAITING_INPUT"
    assert _post_plan(system, job_id, plan).status_code == 200
    done = system.wait_terminal(job_id, key=ALICE)
    assert done["status"] == "COMPLETED", done
    result = _result(system, job_id)
    assert "deadline" not in (result.get("partial_reason") or ""), result["partial_reason"]
