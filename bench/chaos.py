"""Chaos benchmark: research jobs through a system whose processes keep dying.

Starts a whole system of its own in a temporary folder: a 3-node NATS cluster (R3
streams, ``sync_interval: always``), PostgreSQL, one gateway and two processes of each
stage, offline engine, the sample corpus. It submits ``--jobs`` research jobs spread
over the first half of ``--duration`` seconds, and every ``--interval`` seconds for the
whole duration kills something with SIGKILL: a stage process (preferably one that holds
a job at that moment), the gateway, or one NATS node; each is restarted after a short
delay, as the supervisor would. Retrieve, digest and score are slowed by ``--stage-delay``
seconds each (the stages' own fault injection, RESEARCH_CHAOS) so that jobs are in
flight when processes die. Then it waits ``--grace`` seconds for every job to end,
and prints:

- submitted (answered 202; 503 answers are retried after Retry-After), completed,
  failed, stuck (not terminal after the grace period);
- duplicate results: jobs with more than one ``completed`` event, or more than one
  stored result;
- max concurrency observed: the most PROCESSING jobs seen in the queue summary
  (sampled every 0.25 s) and in the stream of status events, against
  RESEARCH_MAX_CONCURRENCY;
- takeover delay: for each killed stage process that held a job, the time from the
  kill to that job's next stage event from another process.

The same ``--seed`` kills the same kinds of targets in the same order (which process
holds a job at a given moment still depends on timing). Exits 1 when a job failed,
got stuck or completed twice, a job was stored that no 202 answered, or the concurrency
limit was exceeded; 2 on a start-up error.

    python bench/chaos.py --jobs 30 --duration 90 --seed 7

``--servers`` runs the server drill of ``bench/chaos_servers.py`` instead (its own
options follow): ``deepresearch up`` with its nats-server and PostgreSQL SIGKILLed.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import random
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import nats

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as `python bench/chaos.py` from a checkout
    sys.path.insert(0, str(ROOT))

from bench.chaos_servers import main as servers_main  # noqa: E402
from bench.jobs import QUESTIONS as PIPELINE_QUESTIONS  # noqa: E402
from bench.jobs import SAMPLE_CORPUS, remove_unless_kept  # noqa: E402
from services.cli.supervisor import STAGE_SERVICES  # noqa: E402
from shared.platform.servers import PostgresServer  # noqa: E402
from shared.settings import CommonSettings  # noqa: E402
from tests.integration.cluster import NatsCluster  # noqa: E402
from tests.integration.harness import TERMINAL, System  # noqa: E402

# Six of the pipeline bench's questions over the sample corpus, taken in turn.
QUESTIONS = tuple(PIPELINE_QUESTIONS[i] for i in (0, 1, 2, 3, 4, 6))
# What gets killed, in proportion: stage processes most, the gateway and a NATS node now and then.
ACTIONS = ("stage", "stage", "stage", "gateway", "nats")


def _ts(event: dict[str, Any]) -> float:
    return datetime.fromisoformat(event["at"]).timestamp()


def _pid(worker: str | None) -> int | None:
    if not worker or ":" not in worker:
        return None
    tail = worker.rsplit(":", 1)[1]
    return int(tail) if tail.isdigit() else None


@dataclass
class Kill:
    kind: str  # stage, gateway, nats
    target: str  # process label or node name
    at: float  # wall clock
    pid: int | None = None
    held: list[str] = field(default_factory=list)  # jobs the process was working on


@dataclass
class Run:
    system: System
    cluster: NatsCluster
    jobs: int
    duration: float
    interval: float
    rng: random.Random
    accepted: list[str] = field(default_factory=list)
    refused: collections.Counter[str] = field(default_factory=collections.Counter)
    kills: list[Kill] = field(default_factory=list)
    peak_sampled: int = 0
    samples: int = 0
    max_concurrency: int | None = None
    stop: threading.Event = field(default_factory=threading.Event)  # set when the run is over

    # -- load ----------------------------------------------------------------------------

    def submit_all(self) -> None:
        """``jobs`` submissions over the first half of the run; each retried until it
        is answered 202. A retry carries the first attempt's Idempotency-Key, so an
        attempt whose answer was lost with a killed gateway never makes a second job."""
        spacing = self.duration / 2 / self.jobs
        with httpx.Client(base_url=self.system.url, timeout=30) as client:
            for i in range(self.jobs):
                # The questions repeat: "reuse": false keeps every job doing its own research.
                body = {"question": QUESTIONS[i % len(QUESTIONS)], "corpora": ["samples"], "max_iterations": 1, "reuse": False}
                headers = {"Idempotency-Key": f"chaos-{uuid.uuid4()}"}
                while not self.stop.is_set():
                    try:
                        r = client.post("/api/research/jobs", json=body, headers=headers)
                    except httpx.HTTPError as exc:
                        self.refused[type(exc).__name__] += 1
                        time.sleep(0.5)
                        continue
                    if r.status_code == 202:
                        self.accepted.append(r.json()["job_id"])
                        break
                    self.refused[str(r.status_code)] += 1
                    time.sleep(float(r.headers.get("retry-after", "1")))
                time.sleep(spacing)

    def sample_concurrency(self) -> None:
        with httpx.Client(base_url=self.system.url, timeout=5) as client:
            while not self.stop.is_set():
                try:
                    summary = client.get("/api/research/queue/summary").json()
                    self.peak_sampled = max(self.peak_sampled, int(summary["system"]["PROCESSING"]))
                    self.max_concurrency = summary.get("max_concurrency")
                    self.samples += 1
                except (httpx.HTTPError, ValueError, KeyError) as exc:  # the gateway is down: no sample
                    print(f"  (queue summary unavailable: {type(exc).__name__})", file=sys.stderr)
                    self.stop.wait(1)
                self.stop.wait(0.25)

    # -- chaos ---------------------------------------------------------------------------

    def holders(self) -> dict[int, list[str]]:
        """pid -> jobs whose latest stage event is a 'started' by that process."""
        try:
            events = self.system.events(settle_s=0.2)
        except (nats.errors.Error, OSError) as exc:  # read during a NATS outage: choose blindly
            print(f"  (events unreadable: {exc!r}; choosing a stage process at random)", file=sys.stderr)
            return {}
        last: dict[str, dict[str, Any]] = {}
        for e in events:
            if e.get("type") == "stage":
                last[e["job_id"]] = e
        held: dict[int, list[str]] = collections.defaultdict(list)
        for job_id, e in last.items():
            pid = _pid(e.get("worker"))
            if e["state"] == "started" and pid is not None:
                held[pid].append(job_id)
        return held

    def kill_stage(self) -> Kill:
        sup = self.system.sup
        assert sup is not None
        stage_labels = sorted(label for label in sup.procs if label.split("-")[0] in STAGE_SERVICES and sup.procs[label].poll() is None)
        held = self.holders()
        busy = [label for label in stage_labels if sup.procs[label].pid in held]
        label = self.rng.choice(busy or stage_labels)
        proc = sup.procs[label]
        kill = Kill("stage", label, time.time(), proc.pid, held.get(proc.pid, []))
        self.system.kill(label)
        time.sleep(1.0)  # the supervisor's restart delay
        self.system.spawn(label.split("-")[0], label)
        return kill

    def kill_gateway(self) -> Kill:
        kill = Kill("gateway", "gateway", time.time())
        self.system.kill("gateway")
        time.sleep(1.0)
        self.system.spawn("gateway", "gateway")
        return kill

    def kill_nats(self) -> Kill:
        node = self.rng.choice(self.cluster.nodes)
        kill = Kill("nats", node.name, time.time())
        node.kill()
        time.sleep(5.0)  # long enough for the streams it led to elect new leaders
        node.start()
        return kill

    def chaos(self) -> None:
        end = time.monotonic() + self.duration
        actions = list(ACTIONS)
        while not self.stop.wait(self.interval) and time.monotonic() < end:
            if not actions:
                actions = list(ACTIONS)
            action = actions.pop(self.rng.randrange(len(actions)))
            kill = {"stage": self.kill_stage, "gateway": self.kill_gateway, "nats": self.kill_nats}[action]()
            self.kills.append(kill)
            held = f" holding {len(kill.held)} job(s)" if kill.held else ""
            print(f"  killed {kill.kind} {kill.target}{held}", file=sys.stderr, flush=True)


# -- figures ---------------------------------------------------------------------------


def takeover_delays(kills: list[Kill], events: list[dict[str, Any]]) -> list[float]:
    delays = []
    for kill in kills:
        for job_id in kill.held:
            later = [
                e for e in events
                if e.get("type") == "stage" and e["job_id"] == job_id and _ts(e) > kill.at and _pid(e.get("worker")) != kill.pid
            ]
            if later:
                delays.append(min(_ts(e) for e in later) - kill.at)
    return delays


def peak_from_events(events: list[dict[str, Any]], jobs: set[str]) -> int:
    running: set[str] = set()
    peak = 0
    for e in events:
        if e.get("type") == "status" and e["job_id"] in jobs:
            if e["status"] == "PROCESSING":
                running.add(e["job_id"])
            elif e["status"] in TERMINAL:
                running.discard(e["job_id"])
            peak = max(peak, len(running))
    return peak


def wait_terminal(system: System, job_ids: list[str], grace: float) -> dict[str, str]:
    statuses: dict[str, str] = {}
    deadline = time.monotonic() + grace
    with httpx.Client(base_url=system.url, timeout=10) as client:
        while time.monotonic() < deadline and len(statuses) < len(job_ids):
            for job_id in job_ids:
                if job_id in statuses:
                    continue
                try:
                    status = client.get(f"/api/research/jobs/{job_id}").json()["status"]
                except (httpx.HTTPError, ValueError, KeyError):
                    break  # the gateway restarts; ask again on the next round
                if status in TERMINAL:
                    statuses[job_id] = status
            time.sleep(0.5)
        for job_id in job_ids:
            if job_id not in statuses:
                try:
                    statuses[job_id] = "STUCK:" + client.get(f"/api/research/jobs/{job_id}").json()["status"]
                except (httpx.HTTPError, ValueError, KeyError) as exc:
                    statuses[job_id] = f"STUCK:unknown ({type(exc).__name__})"
    return statuses


def _stats(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    median = ordered[len(ordered) // 2] if len(ordered) % 2 else (ordered[len(ordered) // 2 - 1] + ordered[len(ordered) // 2]) / 2
    return f"n={len(values)} min {ordered[0]:.1f} s, median {median:.1f} s, max {ordered[-1]:.1f} s"


def report(run: Run, statuses: dict[str, str], events: list[dict[str, Any]], results: dict[str, int], stored: set[str], args: argparse.Namespace) -> tuple[str, bool]:
    counts = collections.Counter(s if not s.startswith("STUCK") else "STUCK" for s in statuses.values())
    completed_events = collections.Counter(e["job_id"] for e in events if e.get("type") == "completed")
    duplicates = sorted({j for j, n in completed_events.items() if n > 1} | {j for j, n in results.items() if n > 1})
    unanswered = sorted(stored - set(run.accepted))
    delays = takeover_delays(run.kills, events)
    by_kind = collections.Counter(k.kind for k in run.kills)
    rows = [
        ("seed / jobs / duration", f"{args.seed} / {args.jobs} / {args.duration:g} s, a kill every {args.interval:g} s, stage delay {args.stage_delay:g} s, ack_wait {args.ack_wait:g} s"),
        ("kills", ", ".join(f"{n} {kind}" for kind, n in sorted(by_kind.items())) or "none"),
        ("submitted (202)", str(len(run.accepted))),
        ("refused, retried", ", ".join(f"{n}x {code}" for code, n in sorted(run.refused.items())) or "none"),
        ("stored, never answered 202", str(len(unanswered))),
        ("completed", str(counts.get("COMPLETED", 0))),
        ("failed", str(counts.get("FAILED", 0) + counts.get("EXPIRED", 0) + counts.get("CANCELLED", 0))),
        ("stuck", f"{counts.get('STUCK', 0)} (not terminal {args.grace:g} s after the last kill)"),
        ("duplicate results", str(len(duplicates))),
        ("max concurrency observed", f"{run.peak_sampled} sampled ({run.samples} samples), {peak_from_events(events, set(run.accepted))} from status events; limit {run.max_concurrency}"),
        ("takeover delay", _stats(delays) + f" ({sum(len(k.held) for k in run.kills)} held jobs killed)"),
    ]
    width = max(len(k) for k, _ in rows)
    lines = ["deepresearch chaos benchmark", ""] + [f"{k.ljust(width)}  {v}" for k, v in rows]
    problems = [(j, s) for j, s in statuses.items() if s != "COMPLETED"]
    if problems:
        lines += ["", "jobs that did not complete"] + [f"  {j} {s}" for j, s in problems]
    if duplicates:
        lines += ["", "jobs completed more than once"] + [f"  {j}" for j in duplicates]
    if unanswered:
        lines += ["", "jobs stored without a 202 answer (a second job made by a retried submission)"] + [f"  {j}" for j in unanswered]
    over = run.max_concurrency is not None and max(run.peak_sampled, peak_from_events(events, set(run.accepted))) > run.max_concurrency
    ok = not problems and not duplicates and not unanswered and not over
    return "\n".join(lines), ok


# -- entry -----------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--jobs", type=int, default=30, help="jobs to submit (default 30)")
    p.add_argument("--duration", type=float, default=120.0, help="seconds of chaos (default 120); jobs are submitted over the first half")
    p.add_argument("--interval", type=float, default=8.0, help="seconds between kills (default 8)")
    p.add_argument("--grace", type=float, default=180.0, help="seconds after the chaos for every job to end (default 180)")
    p.add_argument("--seed", type=int, default=1, help="random seed of the kill schedule (default 1)")
    p.add_argument("--max-concurrency", type=int, default=3, help="RESEARCH_MAX_CONCURRENCY of the gateway (default 3)")
    p.add_argument(
        "--stage-delay", type=float, default=2.0,
        help="seconds retrieve, digest and score sleep before working (RESEARCH_CHAOS delay; default 2): offline "
             "stages take milliseconds, and a kill then rarely finds a process holding a job",
    )
    p.add_argument(
        "--ack-wait", type=float, default=CommonSettings.model_fields["research_ack_wait_s"].default,
        help="RESEARCH_ACK_WAIT_S of the stages (default: the setting's default): how long a dead process's "
             "command waits before another process takes it over",
    )
    p.add_argument("--keep-data", action="store_true", help="keep the temporary folder (servers' data and logs)")
    p.add_argument("--servers", action="store_true",
                   help="run the server drill instead: `deepresearch up` with its nats-server and PostgreSQL SIGKILLed "
                        "(bench/chaos_servers.py; see `bench/chaos.py --servers --help` for its options)")
    args = p.parse_args(argv)
    if args.jobs < 1 or args.duration <= 0 or args.interval <= 0 or args.grace <= 0 or args.stage_delay < 0:
        p.error("--jobs, --duration, --interval and --grace must be positive, --stage-delay at least 0")
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--servers" in argv:
        return servers_main([a for a in argv if a != "--servers"])
    args = parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="dr-chaos-"))
    ok = False
    cluster = NatsCluster(root / "nats", sync_always=True)
    postgres = PostgresServer(root / "pg")
    system: System | None = None
    try:
        print(f"starting a 3-node NATS cluster, PostgreSQL and the system in {root}...", file=sys.stderr, flush=True)
        cluster.start()
        postgres.start()
        system = System(
            root=root / "system", postgres=postgres, corpus=SAMPLE_CORPUS, corpus_name="samples", nats_url=cluster.url,
            extra=dict.fromkeys(STAGE_SERVICES, 1),  # two processes of each stage
            env_overrides={
                "RESEARCH_STREAM_REPLICAS": "3",
                "RESEARCH_RATE_LIMIT_MAX": "100000",
                "RESEARCH_MAX_CONCURRENCY": str(args.max_concurrency),
                "RESEARCH_ACK_WAIT_S": f"{args.ack_wait:g}",
                "RESEARCH_CHAOS": ",".join(f"{stage}:delay={args.stage_delay:g}" for stage in ("retrieve", "digest", "score"))
                if args.stage_delay > 0 else "",
            },
        ).start()
        run = Run(system, cluster, args.jobs, args.duration, args.interval, random.Random(args.seed))
        print(f"system up at {system.url}; {args.jobs} jobs, a kill every {args.interval:g} s for {args.duration:g} s", file=sys.stderr, flush=True)
        threads = [threading.Thread(target=f, daemon=True) for f in (run.submit_all, run.sample_concurrency)]
        for t in threads:
            t.start()
        run.chaos()
        threads[0].join(args.grace)  # the last submissions may wait for a restarted gateway
        statuses = wait_terminal(system, list(run.accepted), args.grace)
        run.stop.set()
        threads[1].join(5)
        asyncio.run(cluster.wait_meta_leader())
        events = system.events(settle_s=1.0)
        results = {r["job_id"]: r["n"] for r in system.sql("SELECT job_id, count(*) AS n FROM research_results GROUP BY job_id")}
        stored = {r["id"] for r in system.sql("SELECT id FROM research_jobs")}
        text, ok = report(run, statuses, events, results, stored, args)
        print(text)
        return 0 if ok else 1
    except RuntimeError as exc:  # a server or service did not start
        print(f"chaos: {exc}", file=sys.stderr)
        return 2
    finally:
        if system is not None:
            system.stop()
        cluster.stop()
        postgres.stop()
        remove_unless_kept(root, ok=ok, keep=args.keep_data)


if __name__ == "__main__":
    sys.exit(main())
