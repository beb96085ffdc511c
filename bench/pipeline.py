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
import os
import sys
import tempfile
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as `python bench/pipeline.py` from a checkout
    sys.path.insert(0, str(ROOT))

from bench.event_path import event_path_figures  # noqa: E402
from bench.jobs import (  # noqa: E402
    SAMPLE_CORPUS,
    SAMPLE_CORPUS_NAME,
    JobRun,
    fetch_usage,
    job_runs,
    remove_unless_kept,
    report,
    run_bench,
)
from bench.stage_concurrency import stage_concurrency_comparison  # noqa: E402


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
            codes.append(event_path_figures(args.jobs, args.timeout))
        if args.stage_concurrency:
            codes.append(stage_concurrency_comparison(args.jobs, args.timeout))
        return max(codes)
    runs = job_runs(args.jobs)
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
