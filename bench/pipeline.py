"""Pipeline benchmark: submit N research jobs and measure them end to end.

Runs against a system that is already up (``deepresearch up``; ``--gateway URL``,
default ``RESEARCH_GATEWAY_URL`` or http://127.0.0.1:8080), or with ``--start``
starts its own in a temporary data folder (nats-server, PostgreSQL, the gateway and
the five stage services, with the sample corpus indexed) and stops it afterwards.

It submits every job first, then follows each job's server-sent events concurrently
until the job's terminal status event. Times are the events' own ``at`` timestamps
(the gateway's and the stages' clocks), so a stream opened a little after its job
started still measures it exactly:

- end-to-end latency: the job's QUEUED status event (the submission, persisted) to
  its terminal status event (COMPLETED, FAILED, CANCELLED or EXPIRED);
- queue wait: QUEUED to PROCESSING (admission; RESEARCH_MAX_CONCURRENCY jobs run at
  once, the rest wait);
- per stage: ``duration_s`` of the stage's ``done`` events (one per stage run; a job
  that loops back to planning runs plan..score more than once).

Exits 1 when any job did not complete, 2 on a usage or start-up error.

    make bench BENCH_ARGS="--start --jobs 20"
    python bench/pipeline.py --gateway http://127.0.0.1:8080 --jobs 10

``--event-path`` starts a system of its own (offline engine) and prints the JetStream
floor (a publish to a pull already waiting), the mean stage-to-stage hop and its
ratio to the floor, and the completion lag (the completed event stored to COMPLETED
in PostgreSQL) with 1 and 3 jobs in flight (see bench/event_path.py):

    python bench/pipeline.py --event-path --jobs 6

``--stage-concurrency`` starts two systems of its own in turn, with IO-bound
loopback fakes (model 1 s a call, search 0.3 s) and one process per stage, runs the
jobs on each with RESEARCH_STAGE_CONCURRENCY=1 and then the default, and prints
jobs/min of each and their ratio (see bench/stage_concurrency.py):

    python bench/pipeline.py --stage-concurrency --jobs 24

Both flags together print every figure in one run (the event path first):

    python bench/pipeline.py --event-path --stage-concurrency --jobs 6
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as `python bench/pipeline.py` from a checkout
    sys.path.insert(0, str(ROOT))

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


def _timestamp(event: dict) -> float:
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


def _headers() -> dict[str, str]:
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
                status, at = event.get("status"), _timestamp(event)
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
    async with httpx.AsyncClient(base_url=url, headers=_headers(), timeout=30, limits=limits) as client:
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


def _fmt(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.3f}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    return [line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def fetch_usage(url: str, runs: list[JobRun]) -> None:
    """Each completed job's token usage, from its stored result."""
    key = os.environ.get("RESEARCH_API_KEY")
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
        for r in runs:
            if r.status == "COMPLETED" and r.job_id:
                r.usage = client.get(f"/api/research/jobs/{r.job_id}/result").json().get("tokenUsage")


def report(url: str, runs: list[JobRun], wall_s: float, max_concurrency: int | None, note: str | None, started_own: bool) -> str:
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
    return _table(
        ["", "n", "p50", "p95", "max"],
        [
            ["end-to-end", str(len(latencies)), _fmt(percentile(latencies, 50)), _fmt(percentile(latencies, 95)), _fmt(max(latencies) if latencies else math.nan)],
            ["queue wait", str(len(waits)), _fmt(percentile(waits, 50)), _fmt(percentile(waits, 95)), _fmt(max(waits) if waits else math.nan)],
        ],
    )


def _stage_durations(runs: list[JobRun]) -> list[str]:
    rows = []
    for stage in STAGES:
        values = [d for r in runs for d in r.stage_durations.get(stage, [])]
        mean = sum(values) / len(values) if values else math.nan
        rows.append([stage, str(len(values)), _fmt(mean), _fmt(percentile(values, 95))])
    return _table(["stage", "runs", "mean", "p95"], rows)


def _llm_usage(usages: list[dict]) -> list[str]:
    """Calls, tokens and model time per stage and per job, means over the completed jobs."""
    rows = []
    for stage in STAGES:
        per_job = [u.get("by_stage", {}).get(stage, {}) for u in usages]
        calls = [p.get("calls", 0) for p in per_job]
        if any(calls):
            rows.append([stage, _fmt(sum(calls) / len(usages)),
                         _fmt(sum(p.get("input_tokens", 0) for p in per_job) / len(usages)),
                         _fmt(sum(p.get("output_tokens", 0) for p in per_job) / len(usages)),
                         _fmt(sum(p.get("latency_s", 0.0) for p in per_job) / len(usages))])
    totals = [(u.get("llm_calls", 0), u.get("input_tokens", 0), u.get("output_tokens", 0)) for u in usages]
    rows.append(["per job", _fmt(sum(t[0] for t in totals) / len(totals)), _fmt(sum(t[1] for t in totals) / len(totals)),
                 _fmt(sum(t[2] for t in totals) / len(totals)), ""])
    return _table(["stage", "calls", "input tok", "output tok", "model s"], rows)


# -- entry ---------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--jobs", type=int, default=10, help="jobs to submit (default 10)")
    p.add_argument(
        "--event-path", action="store_true",
        help="start a system of its own and print the JetStream floor, the stage-to-stage hop and the completion "
             "lag with 1 and 3 jobs in flight (--jobs jobs at each)",
    )
    p.add_argument(
        "--gateway", default=os.environ.get("RESEARCH_GATEWAY_URL") or "http://127.0.0.1:8080",
        help="gateway of a running system (default: RESEARCH_GATEWAY_URL or http://127.0.0.1:8080)",
    )
    p.add_argument("--start", action="store_true", help="start a system of its own in a temporary folder, with the sample corpus")
    p.add_argument("--timeout", type=float, default=600.0, help="overall limit in seconds for submitting and following (default 600)")
    p.add_argument(
        "--concurrency-note", metavar="TEXT",
        help="free text printed with the figures, e.g. 'RESEARCH_MAX_CONCURRENCY=6, 3 retrieval replicas'",
    )
    p.add_argument("--keep-data", action="store_true", help="with --start: keep the temporary folder (servers' data and logs)")
    p.add_argument(
        "--fake-claude", action="store_true",
        help="with --start: plan through the test suite's loopback Anthropic fake (real SDK, fake model): measures "
             "calls and token accounting per job, not Claude's latency or quality",
    )
    p.add_argument(
        "--stage-concurrency", action="store_true",
        help="run the jobs twice on systems of its own with IO-bound fakes (model 1 s a call, search 0.3 s), "
             "RESEARCH_STAGE_CONCURRENCY=1 then the default, and print jobs/min of each and the ratio",
    )
    args = p.parse_args(argv)
    if args.stage_concurrency and (args.start or args.fake_claude):
        p.error("--stage-concurrency starts its own systems and fakes: drop --start and --fake-claude")
    if args.fake_claude and not args.start:
        p.error("--fake-claude needs --start")
    if args.jobs < 1:
        p.error("--jobs must be at least 1")
    if args.timeout <= 0:
        p.error("--timeout must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.event_path or args.stage_concurrency:
        # Either or both in one run: the event path first (offline engine), then the
        # stage concurrency comparison (IO-bound fakes); each starts systems of its own.
        codes = []
        if args.event_path:
            from bench.event_path import event_path_figures  # it imports this module

            codes.append(event_path_figures(args.jobs, args.timeout))
        if args.stage_concurrency:
            from bench.stage_concurrency import stage_concurrency_comparison  # it imports this module

            codes.append(stage_concurrency_comparison(args.jobs, args.timeout))
        return max(codes)
    runs = [JobRun(i + 1, QUESTIONS[i % len(QUESTIONS)]) for i in range(args.jobs)]
    return _with_own_system(args, runs) if args.start else _against_running(args, runs)


def _against_running(args: argparse.Namespace, runs: list[JobRun]) -> int:
    """The jobs on a system that is already up, at ``--gateway``."""
    url = args.gateway.rstrip("/")
    try:
        ready = httpx.get(f"{url}/readyz", timeout=5).status_code == 200
    except httpx.HTTPError:
        ready = False
    if not ready:
        print(f"no ready gateway at {url}: start one with `deepresearch up`, or pass --start", file=sys.stderr)
        return 2
    wall, max_conc = asyncio.run(run_bench(url, runs, None, args.timeout))
    fetch_usage(url, runs)
    print(report(url, runs, wall, max_conc, args.concurrency_note, started_own=False))
    return 0 if all(r.status == "COMPLETED" for r in runs) else 1


def remove_unless_kept(folder: Path, *, ok: bool, keep: bool) -> None:
    """A run's data folder is removed after a good run; after a failed one (or with
    --keep-data) it is kept, and said where, for its logs."""
    if ok and not keep:
        shutil.rmtree(folder, ignore_errors=True)
    else:
        print(f"data and logs kept in {folder}", file=sys.stderr)


def _with_own_system(args: argparse.Namespace, runs: list[JobRun]) -> int:
    """The jobs on a system of its own, in a temporary folder with the sample corpus."""
    from services.retrieval.index import index_corpus
    from services.cli.supervisor import running_system
    from shared.platform.errors import ResearchError

    data_dir = Path(tempfile.mkdtemp(prefix="deepresearch-bench-"))
    # The children inherit os.environ: point them at our folder, and lift the
    # per-user submission limit so the gateway does not answer 429 to the bench.
    os.environ["RESEARCH_DATA_DIR"] = str(data_dir)
    os.environ["RESEARCH_RATE_LIMIT_MAX"] = "100000"
    ok = False
    fake = None
    if args.fake_claude:
        sys.path.insert(0, str(ROOT))
        from tests.fakes.anthropic import AnthropicFake

        fake = AnthropicFake().start()
        os.environ.update(fake.env())
    try:
        stats = index_corpus(SAMPLE_CORPUS, name=SAMPLE_CORPUS_NAME, corpora_dir=data_dir / "corpora")
        print(f"indexed {stats.files_indexed} sample documents ({stats.chunks} chunks) into {data_dir}", file=sys.stderr)
        print("starting nats-server, PostgreSQL, the gateway and the five stages...", file=sys.stderr, flush=True)
        with running_system(data_dir=data_dir, nats_url=None, database_url=None, quiet=True) as system:
            url = system.url
            print(f"system up at {url}; submitting {args.jobs} jobs", file=sys.stderr, flush=True)
            wall, max_conc = asyncio.run(run_bench(url, runs, [SAMPLE_CORPUS_NAME], args.timeout))
            fetch_usage(url, runs)
            print("stopping the system...", file=sys.stderr, flush=True)
        print(report(url, runs, wall, max_conc, args.concurrency_note, started_own=True))
        ok = all(r.status == "COMPLETED" for r in runs)
        return 0 if ok else 1
    except (RuntimeError, ResearchError) as exc:  # a server or service did not start
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    finally:
        if fake is not None:
            fake.stop()
        remove_unless_kept(data_dir, ok=ok, keep=args.keep_data)


if __name__ == "__main__":
    sys.exit(main())
