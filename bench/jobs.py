"""What the benches that run research jobs share: the sample corpus and the questions
asked of it, a job as the bench saw it (``JobRun``), submitting jobs and following
their event streams (``run_bench``), the printed report and its tables, and the
temporary data folders of the systems the benches start of their own.

``bench/pipeline.py`` runs jobs with these and prints their report;
``bench/event_path.py`` and ``bench/stage_concurrency.py``, which the pipeline bench
runs for ``--event-path`` and ``--stage-concurrency``, run and report their jobs the
same way; ``bench/chaos.py`` takes the questions, the sample corpus and the clean-up
of its data folder from here, ``bench/adversarial.py`` the sample corpus and the
clean-up. It lives apart from ``bench/pipeline.py`` so that the pipeline bench can
import the benches it runs without their importing it back.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import httpx

__all__ = [
    "QUESTIONS", "SAMPLE_CORPUS", "SAMPLE_CORPUS_NAME", "STAGES", "TERMINAL", "JobRun", "fetch_usage", "fmt",
    "follow", "headers", "job_runs", "percentile", "remove_unless_kept", "report", "run_bench", "sample_system_folder",
    "submit", "table", "timestamp",
]

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_CORPUS = ROOT / "samples" / "corpus"
SAMPLE_CORPUS_NAME = "samples"
STAGES = ("plan", "retrieve", "digest", "score", "synthesize")
TERMINAL = frozenset({"COMPLETED", "FAILED", "CANCELLED", "EXPIRED"})

# The sample corpus is about concurrency and systems; these questions exercise it.
QUESTIONS = (
    "What are the trade-offs between threads and processes?",
    "How does the Python GIL affect CPU-bound and I/O-bound programs?",
    "When should a program use asyncio instead of a thread pool?",
    "How do message queues provide backpressure between producers and consumers?",
    "What causes deadlocks and how can lock ordering prevent them?",
    "How do goroutines differ from operating system threads?",
    "What does at-least-once delivery require from message consumers?",
    "How does false sharing hurt performance on multi-core CPUs?",
    "What are the costs of context switching between threads and processes?",
    "How do supervisors and process isolation make systems tolerate crashes?",
)


@dataclass
class JobRun:
    """What the bench saw of one job."""

    index: int
    question: str
    job_id: str | None = None
    submitted: float = 0.0  # client wall clock, fallback when no QUEUED event is seen
    refused: str | None = None
    queued_at: float | None = None
    processing_at: float | None = None
    finished_at: float | None = None
    status: str | None = None
    reason: str | None = None
    stage_durations: dict[str, list[float]] = field(default_factory=dict)
    usage: dict | None = None  # the result's tokenUsage

    @property
    def start(self) -> float:
        return self.queued_at if self.queued_at is not None else self.submitted

    @property
    def latency(self) -> float | None:
        return None if self.finished_at is None else self.finished_at - self.start

    @property
    def queue_wait(self) -> float | None:
        return None if self.processing_at is None else self.processing_at - self.start


def job_runs(jobs: int) -> list[JobRun]:
    """``jobs`` jobs numbered from 1, asking QUESTIONS in turn (they repeat when there
    are more jobs than questions)."""
    return [JobRun(i + 1, QUESTIONS[i % len(QUESTIONS)]) for i in range(jobs)]


def timestamp(event: dict) -> float:
    """An event's own ``at`` time, so that the figures are the servers' clocks rather
    than when the bench happened to read the event; the bench's clock only when an
    event carries no readable time."""
    at = event.get("at")
    if isinstance(at, str):
        try:
            return datetime.fromisoformat(at).timestamp()
        except ValueError:
            pass
    return time.time()


def percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default), q in 0..100."""
    if not values:
        return math.nan
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def headers() -> dict[str, str]:
    """The bearer token of RESEARCH_API_KEY, when the gateway asks for one."""
    key = os.environ.get("RESEARCH_API_KEY")
    return {"Authorization": f"Bearer {key}"} if key else {}


# -- the run -------------------------------------------------------------------------


async def submit(client: httpx.AsyncClient, run: JobRun, corpora: list[str] | None) -> None:
    # The questions repeat: each job must research, not reuse an earlier job's research.
    body: dict = {"question": run.question, "reuse": False}
    if corpora:
        body["corpora"] = corpora
    run.submitted = time.time()
    r = await client.post("/api/research/jobs", json=body)
    if r.status_code != 202:
        run.refused = f"HTTP {r.status_code}: {r.text[:300]}"
        if r.status_code == 429:
            run.refused += " (raise RESEARCH_RATE_LIMIT_MAX on the gateway, or use --start)"
        run.status = "REFUSED"
        return
    run.job_id = r.json()["job_id"]


async def follow(client: httpx.AsyncClient, run: JobRun) -> None:
    """Read the job's SSE stream until its terminal status event."""
    assert run.job_id is not None
    path = f"/api/research/jobs/{run.job_id}/events"
    async with client.stream("GET", path, timeout=httpx.Timeout(30, read=None)) as response:
        if response.status_code != 200:
            run.status, run.reason = "UNKNOWN", f"events stream answered HTTP {response.status_code}"
            return
        async for line in response.aiter_lines():
            if not line.startswith("data: "):
                continue
            event = json.loads(line[6:])
            kind = event.get("type")
            if kind == "status":
                status, at = event.get("status"), timestamp(event)
                if status == "QUEUED" and run.queued_at is None:
                    run.queued_at = at
                elif status == "PROCESSING" and run.processing_at is None:
                    run.processing_at = at
                elif status in TERMINAL:
                    run.status, run.reason, run.finished_at = status, event.get("reason"), at
                    return
            elif kind == "stage" and event.get("state") == "done" and event.get("duration_s") is not None:
                run.stage_durations.setdefault(event["stage"], []).append(float(event["duration_s"]))
            elif kind == "failed" and run.reason is None:
                run.reason = event.get("reason")


async def run_bench(url: str, runs: list[JobRun], corpora: list[str] | None, timeout_s: float) -> tuple[float, int | None]:
    """Submit every job, follow them all; return (wall seconds, max_concurrency)."""
    limits = httpx.Limits(max_connections=len(runs) + 10, max_keepalive_connections=len(runs) + 10)
    async with httpx.AsyncClient(base_url=url, headers=headers(), timeout=30, limits=limits) as client:
        max_concurrency = None
        try:
            summary = await client.get("/api/research/queue/summary")
            if summary.status_code == 200:
                max_concurrency = summary.json().get("max_concurrency")
        except httpx.HTTPError:
            pass

        started = time.monotonic()

        async def everything() -> None:
            for run in runs:
                await submit(client, run, corpora)
            await asyncio.gather(*(follow(client, run) for run in runs if run.job_id))

        try:
            await asyncio.wait_for(everything(), timeout_s)
        except TimeoutError:
            for run in runs:
                if run.status is None:
                    run.status, run.reason = "TIMEOUT", f"no terminal status within {timeout_s:g}s"
        return time.monotonic() - started, max_concurrency


# -- the report ------------------------------------------------------------------------


def fmt(value: float) -> str:
    """Three decimals, or a dash where there was nothing to measure (NaN)."""
    return "-" if math.isnan(value) else f"{value:.3f}"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    """Lines of a plain-text table: the first column left-aligned and the figures
    right-aligned, each column as wide as its widest cell, a rule under the header."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return [line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def fetch_usage(url: str, runs: list[JobRun]) -> None:
    """Each completed job's token usage, from its stored result."""
    with httpx.Client(base_url=url, headers=headers(), timeout=30) as client:
        for r in runs:
            if r.status == "COMPLETED" and r.job_id:
                r.usage = client.get(f"/api/research/jobs/{r.job_id}/result").json().get("tokenUsage")


def report(url: str, runs: list[JobRun], wall_s: float, max_concurrency: int | None, note: str | None, started_own: bool) -> str:
    """The report of one run of jobs: the summary, the latencies, the stage durations,
    the model usage when the stages called a model, and the jobs that did not complete."""
    lines = ["deepresearch pipeline benchmark", ""]
    lines += _summary(url, runs, wall_s, max_concurrency, note, started_own)
    lines += ["", "latency (s)"] + _latencies(runs)
    lines += ["", "stage durations (s, from stage done events)"] + _stage_durations(runs)
    usages = [r.usage for r in runs if r.usage]
    if usages and any(u.get("llm_calls") for u in usages):
        lines += ["", "LLM usage (mean per completed job)"] + _llm_usage(usages)
    problems = [r for r in runs if r.status != "COMPLETED"]
    if problems:
        lines += ["", "jobs that did not complete"]
        lines += [f"  #{r.index} {r.job_id or '-'} {r.status}: {r.refused or r.reason or ''}" for r in problems]
    return "\n".join(lines)


def _summary(url: str, runs: list[JobRun], wall_s: float, max_concurrency: int | None, note: str | None,
             started_own: bool) -> list[str]:
    completed = [r for r in runs if r.status == "COMPLETED"]
    other = [r for r in runs if r.status not in ("COMPLETED", "FAILED")]
    summary = [
        ["gateway", url + (" (started by the bench)" if started_own else "")],
        ["max concurrency", str(max_concurrency) if max_concurrency is not None else "unknown"],
    ]
    if note:
        summary.append(["note", note])
    summary += [
        ["jobs", str(len(runs))],
        ["completed", str(len(completed))],
        ["failed", str(sum(r.status == "FAILED" for r in runs))],
    ]
    if other:
        summary.append(["other", ", ".join(f"{r.status}" for r in other)])
    summary += [
        ["wall time", f"{wall_s:.2f} s"],
        ["throughput", f"{len(completed) / wall_s:.3f} jobs/s" if wall_s > 0 else "-"],
    ]
    width = max(len(k) for k, _ in summary)
    return [f"{k.ljust(width)}  {v}" for k, v in summary]


def _latencies(runs: list[JobRun]) -> list[str]:
    latencies = [r.latency for r in runs if r.latency is not None]
    waits = [r.queue_wait for r in runs if r.queue_wait is not None]
    return table(
        ["", "n", "p50", "p95", "max"],
        [
            ["end-to-end", str(len(latencies)), fmt(percentile(latencies, 50)), fmt(percentile(latencies, 95)), fmt(max(latencies) if latencies else math.nan)],
            ["queue wait", str(len(waits)), fmt(percentile(waits, 50)), fmt(percentile(waits, 95)), fmt(max(waits) if waits else math.nan)],
        ],
    )


def _stage_durations(runs: list[JobRun]) -> list[str]:
    rows = []
    for stage in STAGES:
        values = [d for r in runs for d in r.stage_durations.get(stage, [])]
        mean = sum(values) / len(values) if values else math.nan
        rows.append([stage, str(len(values)), fmt(mean), fmt(percentile(values, 95))])
    return table(["stage", "runs", "mean", "p95"], rows)


def _llm_usage(usages: list[dict]) -> list[str]:
    """Calls, tokens and model time per stage and per job, means over the completed jobs."""
    rows = []
    for stage in STAGES:
        per_job = [u.get("by_stage", {}).get(stage, {}) for u in usages]
        calls = [p.get("calls", 0) for p in per_job]
        if any(calls):
            rows.append([stage, fmt(sum(calls) / len(usages)),
                         fmt(sum(p.get("input_tokens", 0) for p in per_job) / len(usages)),
                         fmt(sum(p.get("output_tokens", 0) for p in per_job) / len(usages)),
                         fmt(sum(p.get("latency_s", 0.0) for p in per_job) / len(usages)),
                         f"{sum(p.get('cost_usd', 0.0) for p in per_job) / len(usages):.4f}"])
    totals = [(u.get("llm_calls", 0), u.get("input_tokens", 0), u.get("output_tokens", 0), u.get("cost_usd", 0.0))
              for u in usages]
    rows.append(["per job", fmt(sum(t[0] for t in totals) / len(totals)), fmt(sum(t[1] for t in totals) / len(totals)),
                 fmt(sum(t[2] for t in totals) / len(totals)), "", f"{sum(t[3] for t in totals) / len(totals):.4f}"])
    unpriced = sorted({m for u in usages for m in u.get("unpriced_models") or []})
    return table(["stage", "calls", "input tok", "output tok", "model s", "USD"], rows) + (
        [f"unpriced (counted 0): {', '.join(unpriced)}"] if unpriced else [])


def remove_unless_kept(folder: Path, *, ok: bool, keep: bool) -> None:
    """A run's data folder is removed after a good run; after a failed one (or with
    --keep-data) it is kept, and said where, for its logs."""
    if ok and not keep:
        shutil.rmtree(folder, ignore_errors=True)
    else:
        print(f"data and logs kept in {folder}", file=sys.stderr)


@contextlib.contextmanager
def sample_system_folder(prefix: str, env: dict[str, str]) -> Iterator[Path]:
    """A temporary data folder with the sample corpus indexed into it, for a system a
    bench starts of its own and stops again. The system's processes inherit
    os.environ, so for the while it points them at the folder, lifts the per-user
    submission limit (the gateway would answer the bench 429) and carries ``env``;
    afterwards the environment is as it was and the folder is gone, so that one run
    can start several systems in turn without the first one's settings leaking into
    the next."""
    from services.retrieval.index import index_corpus

    data_dir = Path(tempfile.mkdtemp(prefix=prefix))
    saved = dict(os.environ)
    os.environ.update(env)
    os.environ.update(RESEARCH_DATA_DIR=str(data_dir), RESEARCH_RATE_LIMIT_MAX="100000")
    try:
        index_corpus(SAMPLE_CORPUS, name=SAMPLE_CORPUS_NAME, corpora_dir=data_dir / "corpora")
        yield data_dir
    finally:
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(data_dir, ignore_errors=True)
