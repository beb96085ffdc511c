"""The OpenAPI document describes what the gateway really answers."""

from __future__ import annotations

from typing import Any

import pytest

from services.gateway.service import app


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return app.openapi()


def _error_ref(op: dict[str, Any], code: str) -> str:
    return op["responses"][code]["content"]["application/json"]["schema"]["$ref"]


def test_every_api_operation_lists_its_errors_with_the_error_body(doc: dict[str, Any]) -> None:
    assert set(doc["components"]["schemas"]["ErrorBody"]["properties"]) >= {"message", "detail"}
    ops = [(path, method, op) for path, item in doc["paths"].items() if path.startswith("/api/") for method, op in item.items()]
    assert len(ops) >= 8
    for path, method, op in ops:
        for code in ("401", "422", "503"):
            assert _error_ref(op, code) == "#/components/schemas/ErrorBody", (path, method, code)
        if "{job_id}" in path:
            assert _error_ref(op, "404") == "#/components/schemas/ErrorBody", (path, method)
    submit = doc["paths"]["/api/research/jobs"]["post"]
    assert {"202", "409", "429", "503"} <= set(submit["responses"])
    assert "Retry-After" in submit["responses"]["429"]["headers"]
    assert "Retry-After" in submit["responses"]["503"]["headers"]
    assert "409" in doc["paths"]["/api/research/jobs/{job_id}/cancel"]["post"]["responses"]
    assert any(p["name"] == "Idempotency-Key" and p["in"] == "header" for p in submit["parameters"])


def test_the_event_stream_is_described_as_server_sent_events(doc: dict[str, Any]) -> None:
    content = doc["paths"]["/api/research/jobs/{job_id}/events"]["get"]["responses"]["200"]["content"]
    assert list(content) == ["text/event-stream"]


def test_field_limits_are_in_the_schema(doc: dict[str, Any]) -> None:
    props = doc["components"]["schemas"]["JobCreate"]["properties"]
    assert props["question"]["maxLength"] >= 4000 and props["question"]["minLength"] == 1
    assert (props["max_iterations"]["minimum"], props["max_iterations"]["maximum"]) == (1, 50)
    corpora = next(s for s in props["corpora"]["anyOf"] if s.get("type") == "array")
    assert corpora["items"]["pattern"] == "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$"
    listing = {p["name"]: p["schema"] for p in doc["paths"]["/api/research/jobs"]["get"]["parameters"]}
    assert listing["offset"]["maximum"] > 0 and listing["limit"]["maximum"] == 100


def test_bearer_security_scheme_applies_to_the_api(doc: dict[str, Any]) -> None:
    schemes = doc["components"]["securitySchemes"]
    assert schemes["bearerAuth"] == {**schemes["bearerAuth"], "type": "http", "scheme": "bearer"}
    assert doc["paths"]["/api/research/jobs"]["post"]["security"] == [{"bearerAuth": []}]
    assert "security" not in doc["paths"]["/healthz"]["get"]
