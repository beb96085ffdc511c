"""Hostile input gets a 4xx that names the problem, never a 500: NUL and unpaired
surrogates, invisible questions, huge offsets, malformed job ids, corpus names with a
trailing newline; then a quick fuzz of the request models. Against a real gateway
process on real nats-server and PostgreSQL."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.gateways import Gateways

JOB = str(uuid.uuid4())  # well formed, owned by nobody


@pytest.fixture(scope="module")
def gw(tmp_root: Path, postgres) -> Iterator[Gateways]:  # noqa: ANN001
    g = Gateways(tmp_root / ("in-" + uuid.uuid4().hex[:6]), postgres, env_overrides={"RESEARCH_MAX_CONCURRENCY": "1"}).start(1)
    try:
        yield g
    finally:
        g.stop()


@pytest.fixture(scope="module")
def client(gw: Gateways) -> Iterator[httpx.Client]:
    with gw.client() as c:
        yield c


def _json(body: Any) -> dict[str, Any]:
    # json.dumps escapes a lone surrogate as \ud800, which is valid JSON text.
    return {"content": json.dumps(body).encode(), "headers": {"content-type": "application/json"}}


def _job(**fields: Any) -> dict[str, Any]:
    return _json({"question": "How do tides work?", **fields})


JOB_ROUTES = [
    ("GET", "/api/research/jobs/{id}"),
    ("GET", "/api/research/jobs/{id}/result"),
    ("GET", "/api/research/jobs/{id}/sources"),
    ("GET", "/api/research/jobs/{id}/claims"),
    ("GET", "/api/research/jobs/{id}/events"),
    ("GET", "/api/research/jobs/{id}/sources/s1/verify"),
    ("POST", "/api/research/jobs/{id}/cancel"),
    ("POST", "/api/research/jobs/{id}/clarification"),
    ("POST", "/api/research/jobs/{id}/plan"),
]

CASES: list[tuple[str, str, str, dict[str, Any], str]] = [
    ("nul-question", "POST", "/api/research/jobs", _job(question="a\x00b"), "NUL"),
    ("surrogate-question", "POST", "/api/research/jobs", _job(question="a\ud800b"), "surrogate"),
    ("nul-context", "POST", "/api/research/jobs", _job(context="x\x00"), "NUL"),
    ("surrogate-context", "POST", "/api/research/jobs", _job(context="\udfffx"), "surrogate"),
    ("invisible-question", "POST", "/api/research/jobs", _job(question="\u200b\ufeff\u2060 \u200d"), "empty"),
    ("blank-question", "POST", "/api/research/jobs", _job(question=" \n\t"), "empty"),
    ("corpus-trailing-newline", "POST", "/api/research/jobs", _job(corpora=["docs\n"]), "pattern"),
    ("iterations-too-many", "POST", "/api/research/jobs", _job(max_iterations=10**6), "max_iterations"),
    ("unknown-report-depth", "POST", "/api/research/jobs", _job(report_depth="exhaustive"), "report_depth"),
    ("question-too-long", "POST", "/api/research/jobs", _job(question="q" * 20_001), "question"),
    ("nul-answer", "POST", f"/api/research/jobs/{JOB}/clarification", _json({"answer": "yes\x00"}), "NUL"),
    ("surrogate-answer", "POST", f"/api/research/jobs/{JOB}/clarification", _json({"answer": "\ud800"}), "surrogate"),
    ("invisible-answer", "POST", f"/api/research/jobs/{JOB}/clarification", _json({"answer": "\ufeff\u200b"}), "empty"),
    ("nul-plan-item", "POST", f"/api/research/jobs/{JOB}/plan",
     _json({"refined_question": "abc", "checklist": [{"description": "a\x00"}], "steps": [{"text": "b"}]}), "NUL"),
    ("plan-step-cycle", "POST", f"/api/research/jobs/{JOB}/plan",
     _json({"refined_question": "abc", "checklist": [{"description": "a"}],
            "steps": [{"id": "a", "text": "x", "depends_on": ["b"]}, {"id": "b", "text": "y", "depends_on": ["a"]}]}), "cycle"),
    ("huge-offset", "GET", "/api/research/jobs?offset=9223372036854775808", {}, "offset"),
    ("huge-limit", "GET", "/api/research/jobs?limit=99999999999999999999", {}, "limit"),
    ("negative-offset", "GET", "/api/research/jobs?offset=-1", {}, "offset"),
    ("surrogate-field-name", "POST", "/api/research/jobs", _job(**{"\ud800x": 1}), "surrogate"),
    ("unknown-status", "GET", "/api/research/jobs?status=RUNNING", {}, "status"),
    ("bad-idempotency-key", "POST", "/api/research/jobs", {**_job(), "headers": {"content-type": "application/json", "Idempotency-Key": "a b"}}, "Idempotency-Key"),
    ("not-json", "POST", "/api/research/jobs", {"content": b"\xff\xfe{", "headers": {"content-type": "application/json"}}, "parsing the body"),
] + [
    (f"nul-id {method} {route}", method, route.format(id="%00"), _json({"answer": "fine"}) if method == "POST" else {}, "job id")
    for method, route in JOB_ROUTES
] + [
    (f"junk-id {method} {route}", method, route.format(id="1%27%20OR%20%271%27=%271"), _json({"answer": "fine"}) if method == "POST" else {}, "job id")
    for method, route in JOB_ROUTES
]


@pytest.mark.parametrize(("method", "path", "kwargs", "names"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_hostile_input_is_a_4xx_that_names_the_problem(client: httpx.Client, method: str, path: str, kwargs: dict[str, Any], names: str) -> None:
    r = client.request(method, path, **kwargs)
    assert 400 <= r.status_code < 500, f"{r.status_code}: {r.text}"
    body = r.json()
    assert names.lower() in body["message"].lower(), body


def test_an_unknown_report_depth_is_a_422_naming_the_field_and_a_known_one_is_stored(client: httpx.Client) -> None:
    r = client.post("/api/research/jobs", **_job(report_depth="exhaustive"))
    assert r.status_code == 422, r.text
    assert "report_depth" in r.json()["message"], r.json()
    accepted = client.post("/api/research/jobs", **_job(report_depth="brief"))
    assert accepted.status_code == 202, accepted.text
    job = client.get(f"/api/research/jobs/{accepted.json()['job_id']}").json()
    assert job["report_depth"] == "brief"
    client.post(f"/api/research/jobs/{accepted.json()['job_id']}/cancel")


def test_a_well_formed_unknown_job_id_is_404(client: httpx.Client) -> None:
    r = client.get(f"/api/research/jobs/{JOB}")
    assert r.status_code == 404 and JOB in r.json()["message"]


_odd = st.sampled_from(["\x00", "\ud800", "\udfff", "\u200b", "\ufeff", "\n", "\r\n", "%", "'", '"', "\\", "é", "🜂", " "])
_text = st.lists(st.one_of(st.text(max_size=8), _odd), max_size=12).map("".join)
_anything = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=False), _text)
_bodies = st.one_of(
    st.fixed_dictionaries(
        {"question": _text},
        optional={
            "context": st.one_of(st.none(), _text),
            "max_iterations": st.one_of(st.integers(min_value=-(2**70), max_value=2**70), _text),
            "corpora": st.one_of(st.none(), st.lists(_text, max_size=3)),
            "providers": st.one_of(st.none(), st.lists(st.sampled_from(["web", "pubmed", "rag", "local", "x"]), max_size=3)),
            "clarify": _anything,
            "review_plan": _anything,
            "report_depth": st.one_of(st.sampled_from(["brief", "standard", "detailed"]), _anything),
        },
    ),
    st.dictionaries(_text, _anything, max_size=3),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(body=_bodies)
def test_fuzzed_submissions_never_get_a_5xx(client: httpx.Client, body: dict[str, Any]) -> None:
    r = client.post("/api/research/jobs", **_json(body))
    assert r.status_code in (202, 422), f"{r.status_code}: {r.text} for {body!r}"
    assert r.status_code == 202 or "message" in r.json()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(job_id=_text, offset=st.integers(min_value=-(2**70), max_value=2**70), answer=_text)
def test_fuzzed_ids_queries_and_answers_never_get_a_5xx(client: httpx.Client, job_id: str, offset: int, answer: str) -> None:
    quoted = "/api/research/jobs/" + quote(job_id.encode("utf-8", "surrogatepass"), safe="")
    responses = [
        client.get(quoted),
        client.get("/api/research/jobs", params={"offset": str(offset), "limit": str(offset)}),
        client.post(f"/api/research/jobs/{JOB}/clarification", **_json({"answer": answer})),
    ]
    for r in responses:
        assert r.status_code < 500, f"{r.request.method} {r.request.url}: {r.status_code} {r.text}"
