"""The trace endpoint's assembly of stored stage rows into iterations, and the rows a
batch of events yields."""

from __future__ import annotations

import json
from types import SimpleNamespace

from services.gateway.traces import assemble, trace_events, traced
from shared.research.events import ProgressEvent, StageEvent, StageState, StageTrace
from shared.research.memory import ResearchMemory
from shared.subjects import Stage


def _row(stage: str, iteration: int, data: dict, *, duration: float = 0.5, tokens: tuple[int, int] = (0, 0)) -> SimpleNamespace:
    return SimpleNamespace(stage=stage, iteration=iteration, duration_s=duration, input_tokens=tokens[0],
                           output_tokens=tokens[1], data=data)


def test_rows_become_one_entry_per_iteration_in_pipeline_order() -> None:
    memory0 = ResearchMemory().with_searches([("web", "a")], iteration=0).model_dump(mode="json")
    memory1 = ResearchMemory().with_searches([("web", "a"), ("web", "b")], iteration=1).model_dump(mode="json")
    rows = [
        _row("score", 1, {"checklist": [{"id": "c1", "description": "d", "status": "satisfied"}],
                          "claims_kept": 3, "claims_rejected": 1, "memory": memory1}),
        _row("synthesize", 1, {}, tokens=(10, 5)),
        _row("retrieve", 0, {"queries": [{"provider": "web", "text": "a"}],
                             "results": {"web": {"count": 4, "new_sources": 2}}}),
        _row("plan", 0, {"step_order": ["q1", "q2"]}, tokens=(7, 3)),
        # Stored as text by a driver without a JSON codec: read the same.
        SimpleNamespace(stage="score", iteration=0, duration_s=0.25, input_tokens=0, output_tokens=0,
                        data=json.dumps({"claims_kept": 0, "claims_rejected": 2, "memory": memory0})),
    ]
    trace = assemble("j1", "COMPLETED", rows, None).model_dump(mode="json")
    first, second = trace["iterations"]
    assert [s["stage"] for s in first["stages"]] == ["plan", "retrieve", "score"]
    assert first["stages"][0] == {"stage": "plan", "duration_s": 0.5, "judge": None, "tokens": {
        "input": 7, "output": 3, "cost_usd": 0.0, "unpriced_models": []}}
    assert first["queries"] == [{"provider": "web", "text": "a"}]
    assert first["results"] == {"web": {"count": 4, "new_sources": 2}}
    assert (first["claims_kept"], first["claims_rejected"], first["step_order"]) == (0, 2, ["q1", "q2"])
    assert [s["stage"] for s in second["stages"]] == ["score", "synthesize"]
    assert second["queries"] == [] and second["checklist"][0]["status"] == "satisfied"
    assert [e["text"] for e in trace["memory"]["searched"]] == ["a", "b"]  # the latest pass's

    # A completed job's stored result memory is the one the report was written from.
    stored = ResearchMemory().with_searches([("rag", "z")], iteration=1).model_dump(mode="json")
    assert assemble("j1", "COMPLETED", rows, stored).memory.searched[0].text == "z"


def test_a_job_with_no_rows_has_an_empty_trace() -> None:
    trace = assemble("j2", "QUEUED", [], None)
    assert trace.iterations == [] and trace.memory == ResearchMemory()


def test_only_done_events_with_a_trace_are_stored() -> None:
    done = StageEvent(job_id="j", stage=Stage.SCORE, state=StageState.DONE, trace=StageTrace(duration_s=1.0))
    started = StageEvent(job_id="j", stage=Stage.SCORE, state=StageState.STARTED)
    untraced = StageEvent(job_id="j", stage=Stage.SCORE, state=StageState.DONE)
    progress = ProgressEvent(job_id="j", stage=Stage.SCORE, progress=0.5, message="m")
    msgs = [SimpleNamespace(data=e.model_dump_json().encode()) for e in (done, started, untraced, progress)]
    msgs.append(SimpleNamespace(data=b"{not json"))
    assert traced(done) is done and traced(started) is None and traced(untraced) is None
    assert [e.trace for e in trace_events(msgs)] == [done.trace]  # type: ignore[arg-type]


def test_a_stage_s_cost_is_stored_with_its_trace_and_read_back() -> None:
    from services.gateway.traces import _row as row_of

    trace = StageTrace.model_validate({"duration_s": 1.5, "tokens": {"input": 900, "output": 100, "cost_usd": 0.0042,
                                                                     "unpriced_models": ["llama3.1:8b"]}})
    event = StageEvent(job_id="j1", stage=Stage.PLAN, iteration=0, state=StageState.DONE, trace=trace)
    row = row_of(event)
    assert (row["input_tokens"], row["output_tokens"]) == (900, 100)
    stored = SimpleNamespace(stage="plan", iteration=0, duration_s=row["duration_s"], input_tokens=900,
                             output_tokens=100, data=row["data"])
    tokens = assemble("j1", "COMPLETED", [stored], None).iterations[0].stages[0].tokens
    assert tokens.model_dump() == {"input": 900, "output": 100, "cost_usd": 0.0042, "unpriced_models": ["llama3.1:8b"]}
