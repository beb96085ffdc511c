"""Gateway processes run alone (no stages) over one nats-server and one database: what
the gateway-only reliability tests start, with helpers to read its database and streams.
An admitted job stays PROCESSING until it is cancelled, which makes slots and
transitions easy to count."""

from __future__ import annotations

import asyncio
import subprocess
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import nats

from services.cli.supervisor import wait_ready
from shared import subjects
from shared.research.envelope import JobConfidence, StageUsage, Usage
from shared.research.events import ChecklistCoverage, JobCompleted, ResearchOutput, ResearchResult
from shared.platform.processes import free_port
from shared.platform.servers import NatsServer
from shared.runtime.publishing import MSG_ID
from tests.integration.harness import new_database, process_env, read_stream, run_sql, spawn_logged, tail_logs

__all__ = ["Gateways", "completed_result", "publish_completed", "submit"]


@dataclass
class Gateways:
    """One nats-server, one database, and gateway processes on both."""

    root: Path
    postgres: Any
    env_overrides: dict[str, str] = field(default_factory=dict)
    nats_max_file_store: int | None = None  # bytes: a tiny JetStream store fills up at once
    nats: NatsServer | None = None
    dsn: str = ""
    urls: list[str] = field(default_factory=list)
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(self, count: int = 1) -> Gateways:
        self.root.mkdir(parents=True, exist_ok=True)
        self.nats = NatsServer(self.root / "nats", max_file_store=self.nats_max_file_store).start()
        self.dsn = new_database(self.postgres, "g_")
        for _ in range(count):
            self.add_gateway()
        return self

    def add_gateway(self) -> str:
        assert self.nats is not None
        port = free_port()
        env = {
            **process_env(self.nats.url, self.dsn, self.root / "data", port),
            "RESEARCH_ADMISSION_INTERVAL_S": "0.2",
            "RESEARCH_RATE_LIMIT_MAX": "100000",
            "GATEWAY_EVENT_RETRY_DELAY_S": "0.1",
            **self.env_overrides,
        }
        (self.root / "logs").mkdir(exist_ok=True)
        self.procs.append(spawn_logged("gateway", env, self.root / "logs" / f"gateway-{len(self.procs)}.log"))
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, timeout=60)
        self.urls.append(url)
        return url

    def stop(self) -> None:
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        if self.nats:
            self.nats.stop()

    def log_text(self) -> str:
        return "\n".join(f.read_text(errors="replace") for f in sorted((self.root / "logs").glob("*.log")))

    def logs(self) -> str:
        return tail_logs(self.root / "logs", 60)

    def client(self, i: int = 0) -> httpx.Client:
        return httpx.Client(base_url=self.urls[i], timeout=30)

    def sql(self, query: str, *args: Any) -> list[asyncpg.Record]:
        return run_sql(self.dsn, query, *args)

    def status(self, job_id: str) -> str:
        return self.sql("SELECT status FROM research_jobs WHERE id = $1", job_id)[0]["status"]

    def wait_status(self, job_id: str, want: set[str], timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while (s := self.status(job_id)) not in want:
            assert time.monotonic() < deadline, f"job {job_id} is {s}, not {want}\n{self.logs()}"
            time.sleep(0.1)
        return s

    def events(self, filter_subject: str = subjects.EVENTS_WILDCARD, *, stream: str = subjects.EVENTS_STREAM, settle_s: float = 0.5) -> list[tuple[str, dict[str, Any]]]:
        assert self.nats is not None
        return read_stream(self.nats.url, filter_subject, stream=stream, settle_s=settle_s)

    def statuses(self, job_id: str | None = None) -> list[dict[str, Any]]:
        return [e for _, e in self.events() if e["type"] == "status" and (job_id is None or e["job_id"] == job_id)]

    def js(self, fn) -> Any:  # noqa: ANN001
        """Run ``await fn(js)`` on a fresh connection."""
        assert self.nats is not None

        async def run() -> Any:
            nc = await nats.connect(self.nats.url)  # type: ignore[union-attr]
            try:
                return await fn(nc.jetstream())
            finally:
                await nc.close()

        return asyncio.run(run())


def submit(c: httpx.Client, question: str = "How do lighthouses use Fresnel lenses?", **kw: Any) -> httpx.Response:
    return c.post("/api/research/jobs", json={"question": question, "max_iterations": 1}, **kw)


def completed_result(report: str, *, engine: str = "offline", tokens: int = 0) -> ResearchResult:
    """A minimal result for a ``completed`` event published by hand."""
    return ResearchResult(
        report=report,
        output=ResearchOutput(
            trace_id="t", answer=report, sources=[], checklist_coverage=ChecklistCoverage(satisfied=[], gaps=[]),
            iterations_used=1, status="completed",
        ),
        scored_sources=[], claims=[],
        confidence=JobConfidence(confidence=0.5, claim_count=0, source_count=0, has_contradictions=False),
        usage=Usage(by_stage={"synthesize": StageUsage(input_tokens=tokens)}), engine=engine,
    )


def publish_completed(g: Gateways, job_id: str, result: ResearchResult) -> None:
    """Publish the job's ``completed`` event as synthesis would (a fresh message id)."""
    event = JobCompleted(job_id=job_id, result=result)

    async def pub(js) -> None:  # noqa: ANN001
        await js.publish(subjects.event_subject(job_id, "completed"), event.model_dump_json().encode(), headers={MSG_ID: f"{job_id}:completed:{uuid.uuid4().hex[:6]}"})

    g.js(pub)
