"""Server drill: the project's own nats-server and PostgreSQL SIGKILLed under ``deepresearch up``.

Starts ``deepresearch up`` in a temporary folder (offline engine, no keys, the sample
corpus indexed, retrieve, digest and score slowed by ``--stage-delay`` so that jobs
are in flight) and SIGKILLs the servers ``up`` started, in the order ``--kills`` gives
(default: PostgreSQL, nats-server, PostgreSQL, nats-server), each once the system is
ready again after the previous one. The pids come from ``up``'s status file
(``supervisor.json``), which also says when ``up`` has started the server again.

The ``--jobs`` research jobs are submitted over HTTP in batches, ``--spacing`` seconds
apart within one: a batch before the first kill and one right after each kill, into
the outage. Each carries an ``Idempotency-Key``; a 503 is retried with the same key
after its ``Retry-After``. It prints, per kill, the server, the jobs in flight, kill
to the server's return and kill to ``/readyz`` 200; the answers (202, 503 with and
without Retry-After, anything else), split by the server that was down (or back and
not yet ready); jobs completed and failed; duplicates (a job with more than one stored
result, ``completed`` event, COMPLETED status event or synthesis); jobs stored that
no 202 answered; and what an abrupt stop of each server could lose with the settings
the servers run with. Exits 1 when a target is missed:

- ``/readyz`` answers 200 within 15 s of each server's return;
- every job answered 202 completes, exactly once (one of each record above);
- no job is stored without a 202;
- every 503 carries Retry-After, no answer is anything but 202 or 503, and a
  submission made while PostgreSQL is down is answered 503;

and 2 on a start-up error.

    python bench/chaos.py --servers --jobs 20
"""

from __future__ import annotations

import argparse
import collections
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as `python bench/chaos_servers.py` from a checkout
    sys.path.insert(0, str(ROOT))

from bench.jobs import QUESTIONS, SAMPLE_CORPUS, SAMPLE_CORPUS_NAME, TERMINAL, remove_unless_kept  # noqa: E402
from shared import subjects  # noqa: E402
from shared.platform.processes import free_port  # noqa: E402
from shared.platform.supervision import read_connection, read_status  # noqa: E402
from tests.integration.harness import read_stream, run_sql  # noqa: E402

READY_TARGET_S = 15.0
USER = "local"  # the gateway's user when it asks for no API key
SERVERS = ("postgres", "nats")
# What a job completed exactly once has one of: its stored result, its `completed`
# event, its COMPLETED status event, its synthesis (the synthesize stage's `done` event).
RECORDS = ("result rows", "completed events", "COMPLETED status events", "syntheses")


@dataclass
class Outage:
    server: str
    pid: int
    in_flight: int  # jobs PROCESSING just before the kill
    killed_at: float  # monotonic
    back_at: float | None = None  # up's status file shows the server running again
    ready_at: float | None = None  # /readyz answered 200 again
    named: bool = False  # /readyz named the server while it was down

    @property
    def down_s(self) -> float | None:
        return None if self.back_at is None else self.back_at - self.killed_at

    @property
    def ready_s(self) -> float | None:
        return None if self.ready_at is None else self.ready_at - self.killed_at

    @property
    def ready_after_return_s(self) -> float | None:
        return None if self.ready_at is None or self.back_at is None else self.ready_at - self.back_at


@dataclass
class Load:
    """Submits jobs in batches, ``release(n)``: one thread per job, started ``spacing``
    seconds apart, each submitting until it is answered 202; a 503 is retried with the
    same Idempotency-Key after its Retry-After. Every answer is counted under the
    server that was down when it was asked."""

    url: str
    spacing: float
    down: dict[str, str | None] = field(default_factory=lambda: {"now": None})
    accepted: dict[str, str] = field(default_factory=dict)  # idempotency key -> job id
    answers: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)  # (down server or "-", answer)
    bad: list[str] = field(default_factory=list)  # answers that miss the contract
    stop: threading.Event = field(default_factory=threading.Event)
    threads: list[threading.Thread] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def release(self, n: int) -> None:
        for k in range(n):
            i = len(self.threads)
            t = threading.Thread(target=self._submit, args=(i, k * self.spacing), daemon=True)
            self.threads.append(t)
            t.start()

    def join(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        for t in self.threads:
            t.join(max(0.0, deadline - time.monotonic()))

    def _count(self, answer: tuple[str, str], bad: str | None = None) -> None:
        with self.lock:
            self.answers[answer] += 1
            if bad:
                self.bad.append(bad)

    def _submit(self, i: int, delay: float) -> None:
        body = {"question": QUESTIONS[i % len(QUESTIONS)], "corpora": [SAMPLE_CORPUS_NAME], "max_iterations": 1, "reuse": False}
        key = f"servers-drill-{uuid.uuid4()}"
        self.stop.wait(delay)
        with httpx.Client(base_url=self.url, timeout=30) as client:
            while not self.stop.is_set():
                down = self.down["now"] or "-"
                try:
                    r = client.post("/api/research/jobs", json=body, headers={"Idempotency-Key": key})
                except httpx.HTTPError as exc:  # the gateway is never killed here: it must answer
                    self._count((down, type(exc).__name__), f"job {i + 1}: no answer while {down} was down: {exc!r}")
                    self.stop.wait(1)
                    continue
                if r.status_code == 202:
                    with self.lock:
                        self.accepted[key] = r.json()["job_id"]
                    self._count((down, "202"))
                    return
                retry_after = r.headers.get("retry-after", "")
                if r.status_code == 503 and retry_after.isdigit() and int(retry_after) > 0:
                    self._count((down, "503 + Retry-After"))
                    self.stop.wait(int(retry_after))
                    continue
                self._count((down, f"{r.status_code} {'with' if retry_after else 'without'} Retry-After"),
                            f"job {i + 1}: HTTP {r.status_code} while {down} was down: {r.text[:300]}")
                self.stop.wait(1)


@dataclass
class Drill:
    data: Path
    url: str
    up: subprocess.Popen[bytes]
    load: Load
    outages: list[Outage] = field(default_factory=list)

    def _server(self, name: str) -> dict[str, Any]:
        status = read_status(self.data)
        if status is None:
            raise RuntimeError(f"`up` wrote no status ({self.data / 'supervisor.json'}); exit code {self.up.poll()}")
        return status["servers"][name]

    def _readyz(self) -> httpx.Response | None:
        try:
            return httpx.get(f"{self.url}/readyz", timeout=5)  # a probe of a server just killed may wait out its 2 s
        except httpx.HTTPError:
            return None

    def _in_flight(self) -> int:
        return len(sql(self.data, "SELECT id FROM research_jobs WHERE status = 'PROCESSING'"))

    def _watch_return(self, outage: Outage, deadline: float) -> None:
        while outage.back_at is None and time.monotonic() < deadline and self.up.poll() is None:
            now = self._server(outage.server)
            if now.get("state") == "running" and now.get("pid") not in (None, outage.pid):
                outage.back_at = time.monotonic()
                self.load.down["now"] = f"{outage.server} back, not yet ready"
            time.sleep(0.05)

    def kill(self, name: str, submit: int, timeout: float = 120) -> Outage:
        """SIGKILL server ``name`` and submit ``submit`` jobs at once, into the outage;
        return when /readyz is 200 again after the server's return."""
        before = self._server(name)
        if before.get("state") != "running" or not before.get("pid"):
            raise RuntimeError(f"{name} is not running before its kill: {before}")
        outage = Outage(name, before["pid"], self._in_flight(), time.monotonic())
        self.load.down["now"] = name
        os.kill(outage.pid, signal.SIGKILL)
        self.load.release(submit)
        deadline = outage.killed_at + timeout
        # The status file is watched on its own, so that a /readyz probe waiting on a
        # dead server does not delay seeing the server's return.
        watcher = threading.Thread(target=self._watch_return, args=(outage, deadline), daemon=True)
        watcher.start()
        while time.monotonic() < deadline and self.up.poll() is None:
            r = self._readyz()
            if r is not None and r.status_code == 503 and name in r.json().get("servers_down", {}):
                outage.named = True
            if outage.back_at is not None and r is not None and r.status_code == 200:
                outage.ready_at = time.monotonic()
                break
            time.sleep(0.1)
        watcher.join(5)
        self.load.down["now"] = None
        self.outages.append(outage)
        return outage


def sql(data: Path, query: str, *args: Any) -> list[Any]:
    conn = read_connection(data)
    if conn is None:
        raise RuntimeError(f"no running `up` on {data}")
    return run_sql(conn["DATABASE_URL"], query, *args)


def start_up(data: Path, port: int, env_extra: dict[str, str], timeout: float = 240) -> subprocess.Popen[bytes]:
    from services.retrieval.index import index_corpus

    data.mkdir(parents=True, exist_ok=True)
    index_corpus(SAMPLE_CORPUS, name=SAMPLE_CORPUS_NAME, corpora_dir=data / "corpora")
    drop = {"NATS_URL", "DATABASE_URL", "RESEARCH_GATEWAY_URL", "RESEARCH_API_KEYS"}
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.endswith("_API_KEY")}
    env |= {"RESEARCH_DATA_DIR": str(data), "GATEWAY_PORT": str(port), "LLM_PROVIDER": "offline",
            "RESEARCH_RATE_LIMIT_MAX": "100000", **env_extra}
    with open(data / "up.log", "wb") as log_fh:  # a pipe nobody reads would block every service writing to it
        up = subprocess.Popen([sys.executable, "-m", "services.cli", "up"], env=env, cwd=ROOT,
                              stdin=subprocess.DEVNULL, stdout=log_fh, stderr=log_fh)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if up.poll() is not None:
            raise RuntimeError(f"`up` exited with {up.returncode}; see {data / 'up.log'}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200 and read_connection(data):
                return up
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    stop_up(up)
    raise RuntimeError(f"the system was not ready within {timeout:g} s; see {data / 'up.log'}")


def stop_up(up: subprocess.Popen[bytes]) -> None:
    if up.poll() is None:
        up.send_signal(signal.SIGTERM)
        try:
            up.wait(60)
        except subprocess.TimeoutExpired:
            up.kill()
            up.wait(10)


def wait_terminal(data: Path, job_ids: set[str], grace: float) -> dict[str, str]:
    deadline = time.monotonic() + grace
    while True:
        rows = {r["id"]: r["status"] for r in sql(data, "SELECT id, status FROM research_jobs WHERE id = ANY($1)", list(job_ids))}
        if all(rows.get(j) in TERMINAL for j in job_ids) or time.monotonic() > deadline:
            return {j: rows.get(j, "NOT STORED") for j in job_ids}
        time.sleep(1)


@dataclass
class Findings:
    """What the drill measured and found, for the report and for tests."""

    outages: list[Outage]
    answers: collections.Counter[tuple[str, str]]
    bad_answers: list[str]
    accepted: set[str]
    statuses: dict[str, str]  # accepted job -> status
    per_job: dict[str, collections.Counter[str]]  # accepted job -> {what (RECORDS): count}
    unanswered: set[str]  # stored for the drill's user, never answered 202
    settings: dict[str, str]

    @property
    def duplicates(self) -> dict[str, dict[str, int]]:
        """Jobs with more than one of a record, with those counts."""
        return {j: {k: n for k, n in c.items() if n > 1} for j, c in self.per_job.items() if any(n > 1 for n in c.values())}

    @property
    def totals(self) -> collections.Counter[str]:
        return sum(self.per_job.values(), collections.Counter())

    @property
    def completed(self) -> int:
        return sum(s == "COMPLETED" for s in self.statuses.values())

    def missed(self) -> list[str]:
        out = []
        for o in self.outages:
            if o.ready_after_return_s is None or o.ready_after_return_s > READY_TARGET_S:
                out.append(f"{o.server}: /readyz not 200 within {READY_TARGET_S:g} s of its return (kill→ready {o.ready_s})")
        out += [f"job {j} is {s}, not COMPLETED" for j, s in sorted(self.statuses.items()) if s != "COMPLETED"]
        out += [f"job {j} duplicated: {d}" for j, d in sorted(self.duplicates.items())]
        out += [f"job {j} is COMPLETED without its {', '.join(k for k in RECORDS if not self.per_job[j][k])}"
                for j, s in sorted(self.statuses.items()) if s == "COMPLETED" and not all(self.per_job[j][k] for k in RECORDS)]
        out += [f"job {j} stored without a 202" for j in sorted(self.unanswered)]
        out += self.bad_answers
        if any(o.server == "postgres" for o in self.outages) and not any(
                down == "postgres" and answer.startswith("503") for down, answer in self.answers):
            out.append("no submission was answered 503 while PostgreSQL was down")
        return out


def findings(drill: Drill, statuses: dict[str, str]) -> Findings:
    accepted = set(drill.load.accepted.values())
    stored = {r["id"] for r in sql(drill.data, "SELECT id FROM research_jobs WHERE user_id = $1", USER)}
    counts: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for r in sql(drill.data, "SELECT job_id, count(*) AS n FROM research_results GROUP BY job_id"):
        counts[r["job_id"]]["result rows"] += r["n"]
    nats_url = read_connection(drill.data)["NATS_URL"]  # type: ignore[index]
    for _, e in read_stream(nats_url, subjects.EVENTS_WILDCARD, stream=subjects.EVENTS_STREAM, settle_s=1.0):
        job = e.get("job_id")
        if e.get("type") == "completed":
            counts[job]["completed events"] += 1
        elif e.get("type") == "status" and e.get("status") == "COMPLETED":
            counts[job]["COMPLETED status events"] += 1
        elif e.get("type") == "stage" and e.get("stage") == "synthesize" and e.get("state") == "done":
            counts[job]["syntheses"] += 1
    return Findings(drill.outages, drill.load.answers, drill.load.bad, accepted, statuses,
                    {j: counts[j] for j in accepted}, stored - accepted, server_settings(drill.data))


def server_settings(data: Path) -> dict[str, str]:
    rows = sql(data, "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes')")
    conf = (data / "nats" / "nats-server.conf").read_text()
    sync = next((line.split(":", 1)[1].strip() for line in conf.splitlines() if "sync_interval" in line), "default (2m)")
    return {**{r["name"]: r["setting"] for r in rows}, "sync_interval": sync}


def losses(settings: dict[str, str]) -> list[str]:
    """What an abrupt stop of each server could lose, with the settings it runs with."""
    pg_safe = settings.get("fsync") == "on" and settings.get("synchronous_commit") in ("on", "remote_apply", "remote_write", "local")
    nats_safe = settings.get("sync_interval") == "always"
    return [
        f"postgres (fsync={settings.get('fsync')}, synchronous_commit={settings.get('synchronous_commit')}, "
        f"full_page_writes={settings.get('full_page_writes')}): "
        + ("nothing committed, even if the machine crashes: a commit is in the WAL on disk before the gateway answers 202, "
           "and the next start replays it; what is lost is uncommitted work (a submission in flight is answered 503, "
           "an event being stored is retried from JetStream)" if pg_safe else
           "a SIGKILL loses nothing committed (the kernel keeps the writes), but a machine crash could lose recent commits"),
        f"nats-server (sync_interval: {settings.get('sync_interval')}): "
        + ("nothing acknowledged, even if the machine crashes: each message is fsynced before its ack; a command in a "
           "stage's hands when it dies is redelivered after ack_wait and deduplicated by its Nats-Msg-Id"
           if nats_safe else
           "a SIGKILL loses nothing acknowledged (the kernel keeps the writes), but a machine crash could lose the "
           "messages of the last sync interval, among them ones the outbox already deleted as published"),
    ]


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def report(f: Findings, args: argparse.Namespace) -> str:
    lines = ["deepresearch server drill (`deepresearch up`, its own nats-server and PostgreSQL SIGKILLed)", "",
             f"jobs {args.jobs}, kills {args.kills}, batches of submissions {args.spacing:g} s apart (one batch before the kills, one into each outage), stage delay {args.stage_delay:g} s, "
             f"restart back-off {args.backoff:g} s", "",
             "kill  server    in flight  kill→back (s)  kill→ready (s)  back→ready (s)  named in /readyz"]
    for i, o in enumerate(f.outages, 1):
        lines.append(f"{i:>4}  {o.server:<8}  {o.in_flight:>9}  {_s(o.down_s):>13}  {_s(o.ready_s):>14}  "
                     f"{_s(o.ready_after_return_s):>14}  {'yes' if o.named else 'no'}")
    by_down: dict[str, list[str]] = collections.defaultdict(list)
    for (down, answer), n in sorted(f.answers.items()):
        by_down[down].append(f"{n}x {answer}")
    lines += ["", "answers to submissions"] + [
        f"  {'no server down' if down == '-' else down if ' ' in down else down + ' down'}: {', '.join(parts)}"
        for down, parts in sorted(by_down.items())]
    failed = sum(s in TERMINAL and s != "COMPLETED" for s in f.statuses.values())
    lines += ["", f"jobs answered 202        {len(f.accepted)}", f"completed                {f.completed}",
              f"failed/cancelled/expired {failed}", f"not terminal             {sum(s not in TERMINAL for s in f.statuses.values())}",
              f"duplicates               {len(f.duplicates)} (over the jobs: {', '.join(f'{n} {k}' for k, n in sorted(f.totals.items()))})",
              f"stored without a 202     {len(f.unanswered)}",
              "", "what an abrupt stop could lose, with the settings chosen"] + [f"  {line}" for line in losses(f.settings)]
    missed = f.missed()
    lines += ["", "targets: all met" if not missed else "targets missed"] + [f"  {m}" for m in missed]
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bench/chaos.py --servers", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--jobs", type=int, default=20, help="jobs to submit (default 20)")
    p.add_argument("--kills", default="postgres,nats,postgres,nats", help="servers to SIGKILL in turn (default postgres,nats,postgres,nats)")
    p.add_argument("--spacing", type=float, default=0.5, help="seconds between the submissions of one batch (default 0.5)")
    p.add_argument("--pause", type=float, default=3.0, help="seconds after the system is ready again before the next kill (default 3)")
    p.add_argument("--stage-delay", type=float, default=2.0,
                   help="seconds retrieve, digest and score sleep before working (RESEARCH_CHAOS; default 2), so jobs are in flight at the kills")
    p.add_argument("--backoff", type=float, default=1.0, help="RESEARCH_RESTART_BACKOFF_S of `up` (default 1, its default)")
    p.add_argument("--grace", type=float, default=240.0, help="seconds after the last kill for every job to end (default 240)")
    p.add_argument("--keep-data", action="store_true", help="keep the temporary folder (servers' data and logs)")
    args = p.parse_args(argv)
    kills = [k.strip() for k in args.kills.split(",") if k.strip()]
    if args.jobs < 1 or not kills or set(kills) - set(SERVERS):
        p.error(f"--jobs must be positive and --kills a comma-separated list of {', '.join(SERVERS)}")
    args.kill_list = kills
    return args


def run(args: argparse.Namespace, root: Path) -> Findings:
    """The drill in ``root``: ``up`` started, loaded, its servers killed, the findings
    read; ``up`` is stopped however it ends."""
    data, port = root / "data", free_port()
    env = {"RESEARCH_RESTART_BACKOFF_S": f"{args.backoff:g}"}
    if args.stage_delay > 0:
        env["RESEARCH_CHAOS"] = ",".join(f"{s}:delay={args.stage_delay:g}" for s in ("retrieve", "digest", "score"))
    print(f"starting `deepresearch up` in {data}...", file=sys.stderr, flush=True)
    up = start_up(data, port, env)
    try:
        url = f"http://127.0.0.1:{port}"
        load = Load(url, args.spacing)
        drill = Drill(data, url, up, load)
        # A share of the jobs before the first kill, the others into the outages.
        per_kill = args.jobs // (len(args.kill_list) + 1)
        load.release(args.jobs - per_kill * len(args.kill_list))
        deadline = time.monotonic() + 60
        while not load.accepted and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(args.pause)
        for name in args.kill_list:
            o = drill.kill(name, per_kill)
            print(f"  killed {name} (pid {o.pid}, {o.in_flight} jobs in flight): back after {_s(o.down_s)} s, "
                  f"ready after {_s(o.ready_s)} s", file=sys.stderr, flush=True)
            if up.poll() is not None:
                raise RuntimeError(f"`up` exited with {up.returncode}; see {data / 'up.log'}")
            time.sleep(args.pause)
        load.join(args.grace)
        load.stop.set()
        statuses = wait_terminal(data, set(load.accepted.values()), args.grace)
        return findings(drill, statuses)
    finally:
        stop_up(up)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="dr-srv-"))  # short: PostgreSQL's socket path has a length limit
    ok = False
    try:
        f = run(args, root)
        print(report(f, args))
        ok = not f.missed()
        return 0 if ok else 1
    except RuntimeError as exc:
        print(f"server drill: {exc}", file=sys.stderr)
        return 2
    finally:
        remove_unless_kept(root, ok=ok, keep=args.keep_data)


if __name__ == "__main__":
    sys.exit(main())
