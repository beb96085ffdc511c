"""Metrics and structured logs of a whole system (real servers, real processes, the
loopback Anthropic fake): after a job, a stage's /metrics endpoint shows its counters
moved, and its JSON log lines name the job, stage and attempt."""

from __future__ import annotations

import contextlib
import json
import random
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from shared.platform.metrics import PORT_OFFSETS
from tests.fakes.anthropic import AnthropicFake
from tests.integration.conftest import running_system
from tests.integration.harness import System


def _free_base(span: int = len(PORT_OFFSETS)) -> int:
    """A base port whose next ``span`` ports are free right now, chosen below the
    kernel's ephemeral range: a port inside it can be taken, between this choice and a
    stage's start, as the local end of some process's outgoing connection (to NATS, to
    PostgreSQL), and the stage would then serve its metrics on another port."""
    low = 32768
    with contextlib.suppress(OSError, ValueError):
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    rng = random.Random()
    for _ in range(200):
        base = rng.randrange(10000, max(10001, low - span))
        socks: list[socket.socket] = []
        try:
            for p in range(base, base + span):
                sock = socket.socket()
                socks.append(sock)
                sock.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for sock in socks:
                sock.close()
    raise RuntimeError("no free port range")


@pytest.fixture(scope="module")
def observed(tmp_root: Path, postgres) -> Iterator[tuple[System, int]]:  # noqa: ANN001
    base = _free_base()
    with AnthropicFake() as claude:
        env = {**claude.env(), "RESEARCH_METRICS_PORT": str(base), "RESEARCH_LOG_FORMAT": "json"}
        with running_system(tmp_root, postgres, env_overrides=env) as s:
            yield s, base


def _samples(port: int) -> dict[tuple[str, frozenset], float]:
    deadline = time.monotonic() + 30  # the gateway answers before every stage has started
    while True:
        try:
            text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
            break
        except httpx.ConnectError:
            assert time.monotonic() < deadline, f"nothing serves metrics on port {port}"
            time.sleep(0.2)
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def _value(samples: dict, name: str, **labels: str) -> float:
    return sum(v for (n, ls), v in samples.items() if n == name and set(labels.items()) <= ls)


def test_a_stage_serves_metrics_that_moved_with_a_job(observed: tuple[System, int]) -> None:
    system, base = observed
    plan_port = base + PORT_OFFSETS["plan"]
    before = _samples(plan_port)
    job_id = system.submit("How did automation change lighthouse keeping?", max_iterations=1)
    assert system.wait_terminal(job_id)["status"] == "COMPLETED"
    after = _samples(plan_port)

    def moved(name: str, **labels: str) -> float:
        return _value(after, name, **labels) - _value(before, name, **labels)

    assert moved("research_stage_messages_total", stage="plan", outcome="done") == 1
    assert moved("research_stage_duration_seconds_count", stage="plan", outcome="done") == 1
    assert moved("research_llm_calls_total", stage="plan", outcome="ok") >= 2
    assert moved("research_llm_tokens_total", stage="plan", direction="input") > 0
    assert moved("research_llm_tokens_total", stage="plan", direction="output") > 0
    assert moved("research_llm_call_seconds_count", stage="plan") >= 2
    assert moved("faststream_received_messages_total") >= 1  # FastStream's own middleware
    # Every stage process has its own port; the digest serves its own metrics there too.
    digest = _samples(base + PORT_OFFSETS["digest"])
    assert _value(digest, "research_stage_messages_total", stage="digest", outcome="done") >= 1
    assert any(n.startswith("digest_sources_processed") for n, _ in digest)
    for stage in ("retrieve", "score", "synthesize"):
        assert _value(_samples(base + PORT_OFFSETS[stage]), "research_stage_messages_total", stage=stage, outcome="done") >= 1


def test_log_lines_inside_a_job_carry_its_id_stage_and_attempt(observed: tuple[System, int]) -> None:
    system, _ = observed
    job_id = system.submit("Why were lighthouse keepers withdrawn?", max_iterations=1)
    assert system.wait_terminal(job_id)["status"] == "COMPLETED"
    lines = [json.loads(line) for line in (system.root / "logs" / "decomposition.log").read_text().splitlines()
             if line.startswith("{")]
    mine = [line for line in lines if line.get("job_id") == job_id]
    assert mine, "no log line names the job"
    assert all(line["stage"] == "plan" and line["delivery"] == 1 for line in mine)
    assert any("plan stage done" in line["message"] for line in mine)
    assert all({"time", "level", "logger", "message"} <= line.keys() for line in lines)
    gateway = [json.loads(line) for line in (system.root / "logs" / "gateway.log").read_text().splitlines()
               if line.startswith("{")]
    assert gateway and all(line["process"] == "gateway" for line in gateway)  # the gateway writes JSON too


def test_the_gateway_serves_jobs_by_status_and_admission_waits(observed: tuple[System, int]) -> None:
    system, base = observed
    port = base + PORT_OFFSETS["gateway"]
    before = _value(_samples(port), "research_admission_wait_seconds_count")
    job_id = system.submit("What are spring tides?", max_iterations=1)
    assert system.wait_terminal(job_id)["status"] == "COMPLETED"
    completed = len([r for r in system.sql("SELECT id FROM research_jobs WHERE status = 'COMPLETED'")])
    deadline = time.monotonic() + 20  # the gateway reads the database every 5 s
    while True:
        samples = _samples(port)
        if (_value(samples, "research_jobs", status="COMPLETED") == completed
                and _value(samples, "research_admission_wait_seconds_count") > before):
            break
        assert time.monotonic() < deadline, f"gateway metrics did not move: {samples}"
        time.sleep(0.5)
    assert _value(samples, "research_jobs", status="PROCESSING") == 0
