"""Steps that depend on each other, in a whole job with LLM_PROVIDER=anthropic against
the loopback Anthropic fake (tests/fakes/step_model.py), over the fixture corpus.

One job shows it all: the context search runs before the brief (the brief prompt holds
what it found); the first plan has a dependency cycle and is asked again; the hybrid
step gets its queries in the second pass, written from its dependency's claims; the
dependent steps run after theirs, from their claims, without a search, and what their
evidence does not support is rejected; the order is in the trace and the methodology.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic import AnthropicFake
from tests.fakes.llm import text_of
from tests.fakes.report_writer import blocks
from tests.fakes.step_model import STEPS, UNSUPPORTED, StepModel
from tests.integration.conftest import running_system

QUESTION = "How did automation change lighthouse keeping?"
HYBRID_QUERY = STEPS[2][1].rstrip("?") + " lighthouse"


@pytest.fixture(scope="module")
def model() -> StepModel:
    return StepModel(invalid_share=0.0)


@pytest.fixture(scope="module")
def job(tmp_root: Path, postgres: Any, model: StepModel) -> Iterator[dict[str, Any]]:
    with AnthropicFake(responder=model) as claude:
        env = {**claude.env(), "LLM_MAX_RETRIES": "1", "RESEARCH_CONTEXT_SEARCH": "true"}
        with running_system(tmp_root, postgres, env_overrides=env) as s:
            job_id = s.submit(QUESTION, max_iterations=3, providers=["rag"])
            status = s.wait_terminal(job_id, timeout=180)
            assert status["status"] == "COMPLETED", f"{status}\n{s.logs()}"
            with s.client() as c:
                result = c.get(f"/api/research/jobs/{job_id}/result").json()
                trace = c.get(f"/api/research/jobs/{job_id}/trace").json()
            yield {"result": result, "trace": trace, "tools": [r.forced_tool for r in claude.delivered]}


def test_the_context_search_runs_before_the_brief(job: dict[str, Any], model: StepModel) -> None:
    (brief,) = model.briefs
    found = blocks(brief, "result")
    assert found and {a["provider"] for a, _ in found} == {"rag"}
    assert any(text.startswith("Lighthouse keeping\n") for _, text in found), found
    # In the trace, before iteration 0: the search (no query of its own is recorded as run).
    first = job["trace"]["iterations"][0]
    assert first["iteration"] == -1 and [s["stage"] for s in first["stages"]] == ["plan", "retrieve"]
    assert job["tools"].index("record_brief") < job["tools"].index("record_sub_questions")


def test_a_plan_with_a_cycle_is_refused_and_asked_again(model: StepModel, job: dict[str, Any]) -> None:
    first, again = model.decompositions
    assert len(first.body["messages"]) == 1
    correction = text_of(again.body["messages"][-1]["content"])
    assert "dependency cycle" in correction and "q1" in correction and "q3" in correction, correction
    assert "Earlier stages: steps: offline" not in job["result"]["report"]  # the second answer was used


def test_the_hybrid_step_is_searched_only_after_its_dependency_has_claims(job: dict[str, Any], model: StepModel) -> None:
    (prompt,) = model.step_queries
    assert blocks(prompt, "step") == [({"id": "q3"}, STEPS[2][1])]
    findings = blocks(prompt, "finding")
    assert findings and {a["step"] for a, _ in findings} == {"q1"}
    by_iteration = {i["iteration"]: [q["text"] for q in i["queries"] or []] for i in job["trace"]["iterations"]}
    assert HYBRID_QUERY not in by_iteration[0] and STEPS[2][1] not in by_iteration[0]
    assert HYBRID_QUERY in by_iteration[1], by_iteration[1]


def test_dependent_steps_run_after_their_dependencies_from_their_claims(job: dict[str, Any], model: StepModel) -> None:
    q4, q5 = model.analyses
    assert blocks(q4, "step")[0][0] == {"id": "q4"} and blocks(q5, "step")[0][0] == {"id": "q5"}
    # q4 reasons over q1's verified claims, each with its evidence; q5 over q3's and q4's.
    assert {a["step"] for a, _ in blocks(q4, "finding")} == {"q1"}
    assert {a["step"] for a, _ in blocks(q5, "finding")} == {"q3", "q4"}
    q4_claims = [c for c in job["result"]["claims"] if c["id"].startswith("q4.a")]
    q5_findings = {" ".join(text.split()) for a, text in blocks(q5, "finding") if a["step"] == "q4"}
    assert q4_claims and {c["text"] for c in q4_claims} == q5_findings
    evidence = {" ".join(text.split()) for _, text in blocks(q4, "evidence")}
    for claim in q4_claims:  # their citations are the underlying claims' quotes
        assert claim["citations"] and {" ".join(c["quote"].split()) for c in claim["citations"]} <= evidence
    rejected = [r for r in job["result"]["rejected_claims"] if r["text"] == UNSUPPORTED]
    assert {r["reason"].split(":")[0] for r in rejected} == {"analysis of q4", "analysis of q5"}


def test_the_order_is_in_the_trace_and_the_methodology(job: dict[str, Any]) -> None:
    orders = {i["iteration"]: i["step_order"] for i in job["trace"]["iterations"] if i["step_order"]}
    assert orders[0] == ["q1", "q2", "q4"]
    assert orders[1] == ["q1", "q2", "q4", "q3", "q5"]
    report = job["result"]["report"]
    lines = [line for line in report.splitlines() if line.startswith("- Step q")]
    assert [line.split(" ")[2] for line in lines] == ["q1", "q2", "q4", "q3", "q5"]
    assert lines[0].startswith("- Step q1 (independent): searched in iteration 1.")
    assert lines[2].startswith("- Step q4 (dependent, after q1): analysed in iteration 1 from its dependencies'")
    assert lines[3].startswith("- Step q3 (hybrid, after q1): searched in iteration 2, with queries written from")
    assert lines[4].startswith("- Step q5 (dependent, after q3, q4): analysed in iteration 2")
