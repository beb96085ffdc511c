"""A whole system for a test: its own nats-server and database, the gateway and the
five stages as real OS processes, and a small indexed corpus."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import signal
import subprocess
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import nats
from nats.js import JetStreamContext

from services.retrieval.index import index_corpus
from services.cli.supervisor import SERVICES, Supervisor, service_command, wait_ready
from shared import subjects
from shared.stores import topology
from shared.platform.processes import free_port
from shared.platform.servers import NatsServer, PostgresServer
from tests.fakes.llm import ScriptedLLM
from tests.fakes.tavily import FakeTavily

TERMINAL = {"COMPLETED", "FAILED", "CANCELLED", "EXPIRED"}


def _create_database(postgres: PostgresServer | str, name: str) -> str:
    if isinstance(postgres, PostgresServer):
        postgres.create_database(name)
        return postgres.dsn_for(name)

    async def create() -> None:
        conn = await asyncpg.connect(postgres)
        try:
            await conn.execute(f'CREATE DATABASE "{name}"')
        finally:
            await conn.close()

    asyncio.run(create())
    base, _, _ = postgres.rpartition("/")
    return f"{base}/{name}"


def fake_providers_env(model: ScriptedLLM, web: FakeTavily) -> dict[str, str]:
    """A system's settings for a loopback model fake and the loopback Tavily fake: the
    model's own, the web search's key and address, and page fetches allowed on
    loopback, where the Tavily fake serves the pages it finds."""
    return {
        **model.env(), "TAVILY_API_KEY": web.api_key, "TAVILY_BASE_URL": web.base_url,
        "RESEARCH_FETCH_ALLOWED_HOSTS": "127.0.0.1",
    }


def new_database(postgres: PostgresServer | str, prefix: str) -> str:
    """A fresh database with a random name starting with ``prefix``; its DSN."""
    return _create_database(postgres, prefix + uuid.uuid4().hex[:12])


def process_env(nats_url: str, dsn: str, data_dir: Path, port: int) -> dict[str, str]:
    """What every process of a test system is told: where NATS, the database and the
    data are, and the loopback port its gateway (if it is one) listens on."""
    return {
        **os.environ,
        "NATS_URL": nats_url,
        "DATABASE_URL": dsn,
        "RESEARCH_DATA_DIR": str(data_dir),
        "GATEWAY_HOST": "127.0.0.1",
        "GATEWAY_PORT": str(port),
        "LOG_LEVEL": "INFO",
    }


def spawn_logged(service: str, env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    """One service process, its output appended to ``log_path``."""
    out = open(log_path, "ab")  # noqa: SIM115
    proc = subprocess.Popen(service_command(service), env=env, stdout=out, stderr=subprocess.STDOUT)
    out.close()
    return proc


def tail_logs(log_dir: Path, lines: int) -> str:
    """The last ``lines`` lines of every log in ``log_dir``, each under its name."""
    return "\n".join(f"==== {f.name}\n" + "\n".join(f.read_text(errors="replace").splitlines()[-lines:])
                     for f in sorted(log_dir.glob("*.log")))


def run_sql(dsn: str, query: str, *args: Any) -> list[asyncpg.Record]:
    """``query``'s rows, on a connection of its own."""
    async def run() -> list[asyncpg.Record]:
        conn = await asyncpg.connect(dsn.replace("+asyncpg", ""))
        try:
            return await conn.fetch(query, *args)
        finally:
            await conn.close()

    return asyncio.run(run())


def read_stream(nats_url: str, subject: str, *, stream: str = subjects.EVENTS_STREAM,
                settle_s: float) -> list[tuple[str, dict[str, Any]]]:
    """Every message of ``stream`` on ``subject`` as (subject, JSON body), in stream
    order; the end is when nothing more arrives for ``settle_s``."""
    async def read() -> list[tuple[str, dict[str, Any]]]:
        nc = await nats.connect(servers=nats_url.split(","))
        try:
            sub = await nc.jetstream().subscribe(subject, stream=stream, ordered_consumer=True)
            out = []
            while True:
                try:
                    msg = await sub.next_msg(timeout=settle_s)
                except nats.errors.TimeoutError:
                    return out
                out.append((msg.subject, json.loads(msg.data)))
        finally:
            await nc.close()

    return asyncio.run(read())


def wait_stages_pulling(nats_url: str, *, timeout: float) -> None:
    """Wait until a process of every stage is asking its durable for work. The gateway
    is ready before the stages are (a stage loads its word tables first), and a job
    submitted earlier waits in the stream: right, but a test that times a job from its
    submission would count a stage's start-up as the job's."""
    async def pulling() -> None:
        nc = await nats.connect(servers=nats_url.split(","))
        try:
            js, waiting = nc.jetstream(), set(subjects.Stage)
            end = time.monotonic() + timeout
            while waiting:
                for stage in list(waiting):
                    # (not made yet, or the server slow to answer under load: asked again)
                    with contextlib.suppress(nats.errors.Error):
                        info = await js.consumer_info(subjects.JOBS_STREAM, subjects.stage_durable(stage))
                        if info.num_waiting:
                            waiting.discard(stage)
                if waiting and time.monotonic() > end:
                    raise RuntimeError(f"no process of {sorted(waiting)} asked for work within {timeout}s")
                await asyncio.sleep(0.1)
        finally:
            await nc.close()

    # (in a thread of its own: a browser test's caller already runs an event loop)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, pulling()).result()


@contextlib.asynccontextmanager
async def jetstream_with_topology(nats_url: str, *, ttl_s: float = 600) -> AsyncIterator[JetStreamContext]:
    """JetStream on a connection of its own, with the streams and buckets a system
    makes at start already there, so that a test can drive the pieces without one;
    the connection is closed however the test ends."""
    nc = await nats.connect(nats_url)
    try:
        js = nc.jetstream()
        await topology.ensure_topology(js, ttl_s=ttl_s)
        yield js
    finally:
        await nc.close()


@dataclass
class System:
    root: Path
    postgres: PostgresServer | str
    env_overrides: dict[str, str] = field(default_factory=dict)
    extra: dict[str, int] = field(default_factory=dict)  # more processes of a stage
    corpus: Path | None = None
    corpus_name: str = "testdocs"
    nats_url: str | None = None  # an external NATS (a cluster's seed list); None: start one
    nats: NatsServer | None = None
    dsn: str = ""
    url: str = ""
    sup: Supervisor | None = None

    def start(self) -> System:
        self.root.mkdir(parents=True, exist_ok=True)
        if self.nats_url is None:
            self.nats = NatsServer(self.root / "nats").start()
            self.nats_url = self.nats.url
        self.dsn = new_database(self.postgres, "t_")
        data_dir = self.root / "data"
        if self.corpus is not None:
            index_corpus(self.corpus, name=self.corpus_name, corpora_dir=data_dir / "corpora")
        port = free_port()
        env = {
            **process_env(self.nats_url, self.dsn, data_dir, port),
            "RESEARCH_ACK_WAIT_S": "3",
            "RESEARCH_RETRY_DELAY_S": "0.2",
            "RESEARCH_ADMISSION_INTERVAL_S": "0.5",
            # Offline unless a test points a provider at a fake: a developer's own
            # ANTHROPIC_API_KEY must never reach a real API from the test suite.
            "LLM_PROVIDER": "offline",
            # The fixture corpus's documents are far below DIGEST_MIN_CHARS: digest them
            # all, so that every test job has evidence locators.
            "DIGEST_POLICY": "always",
            # Tests ask the same questions job after job and expect each job to do its
            # own research: reuse of an earlier job's research only where a test turns it on.
            "RESEARCH_REUSE_MAX_AGE_S": "0",
            **self.env_overrides,
        }
        self.sup = Supervisor(env, names=SERVICES, grace_s=10, log_dir=self.root / "logs")
        self.sup.start()
        for stage, n in self.extra.items():
            for i in range(n):
                self.spawn(stage, f"{stage}-{i + 2}")
        self.url = f"http://127.0.0.1:{port}"
        # Generous: on a loaded machine the first start-up of a fresh install (byte-code
        # compilation, word tables) has taken over a minute.
        try:
            wait_ready(self.url, timeout=120, procs=self.sup)
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}\n{self.logs()}") from exc
        wait_stages_pulling(self.nats_url, timeout=120)
        return self

    def spawn(self, stage: str, label: str, **env: str) -> subprocess.Popen[bytes]:
        assert self.sup is not None
        proc = spawn_logged(stage, {**self.sup.env, "RESEARCH_PROCESS_NAME": label, **env}, self.root / "logs" / f"{label}.log")
        self.sup.procs[label] = proc
        return proc

    def stop(self) -> None:
        if self.sup:
            self.sup.stop()
        if self.nats:
            self.nats.stop()

    def logs(self) -> str:
        return tail_logs(self.root / "logs", 40)

    # -- HTTP ----------------------------------------------------------------------

    def second_gateway(self) -> str:
        """Another gateway process on the same database and NATS; returns its URL."""
        port = free_port()
        self.spawn("gateway", "gateway-2", GATEWAY_PORT=str(port))
        url = f"http://127.0.0.1:{port}"
        wait_ready(url, timeout=120)
        return url

    def client(self, key: str | None = None, *, url: str | None = None) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=url or self.url, headers=headers, timeout=30)

    def submit(self, question: str = "How do lighthouses use Fresnel lenses?", *, key: str | None = None, url: str | None = None, **body: Any) -> str:
        with self.client(key, url=url) as c:
            r = c.post("/api/research/jobs", json={"question": question, **body})
        assert r.status_code == 202, r.text
        return r.json()["job_id"]

    def job(self, job_id: str, *, key: str | None = None) -> dict[str, Any]:
        with self.client(key) as c:
            r = c.get(f"/api/research/jobs/{job_id}")
        assert r.status_code == 200, r.text
        return r.json()

    def wait_terminal(self, job_id: str, *, key: str | None = None, timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            job = self.job(job_id, key=key)
            if job["status"] in TERMINAL:
                return job
            time.sleep(0.1)
        raise AssertionError(f"job {job_id} not finished after {timeout}s: {self.job(job_id, key=key)}\n{self.logs()}")

    # -- events straight from JetStream ---------------------------------------------

    def events(self, job_id: str | None = None, *, settle_s: float = 0.3) -> list[dict[str, Any]]:
        """Every event in the events stream (of one job, or all), in stream order."""
        assert self.nats_url is not None
        subject = subjects.job_events_filter(job_id) if job_id else subjects.EVENTS_WILDCARD
        return [event for _, event in read_stream(self.nats_url, subject, settle_s=settle_s)]

    def progress_messages(self, job_id: str, stage: str) -> list[str]:
        """The messages of one stage's progress events for a job, in order."""
        return [e["message"] for e in self.events(job_id) if e.get("type") == "progress" and e.get("stage") == stage]

    def sources(self, job_id: str) -> list[dict[str, Any]]:
        """The job's sources as the API lists them."""
        with self.client() as c:
            return c.get(f"/api/research/jobs/{job_id}/sources").json()["sources"]

    def sql(self, query: str, *args: Any) -> list[asyncpg.Record]:
        return run_sql(self.dsn, query, *args)

    def kill(self, label: str) -> None:
        assert self.sup is not None
        proc = self.sup.procs[label]
        proc.send_signal(signal.SIGKILL)
        proc.wait(5)
