"""`deepresearch up` as a supervisor: its children die with it, however it ends, its
data folder recovers, and a service that keeps crashing is retried and reported while
the others go on."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import signal
import subprocess
import sys
import time
from pathlib import Path

import asyncpg
import httpx
import nats
import psutil

from shared.platform.processes import free_port


def _env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NATS_URL", "DATABASE_URL", "RESEARCH_GATEWAY_URL")}
    return {**env, "RESEARCH_DATA_DIR": str(data_dir), "LLM_PROVIDER": "offline", **extra}


def _up(data_dir: Path, port: int, **extra: str) -> subprocess.Popen[str]:
    # Its output (and the services', which inherit it) goes to a file: a pipe nobody
    # reads fills up and blocks every writer, the gateway included.
    data_dir.mkdir(parents=True, exist_ok=True)
    with open(data_dir.parent / f"{data_dir.name}-up-{port}.log", "w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "services.cli", "up"], env=_env(data_dir, GATEWAY_PORT=str(port), **extra),
            stdout=subprocess.DEVNULL, stderr=out, text=True,
        )
    proc.log = out.name  # type: ignore[attr-defined]
    return proc


def _output(proc: subprocess.Popen[str]) -> str:
    return Path(proc.log).read_text(errors="replace")  # type: ignore[attr-defined]


def _readyz(port: int, timeout: float = 1) -> httpx.Response | None:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=timeout)
    except httpx.HTTPError:
        return None


def _wait(port: int, proc: subprocess.Popen[str], ok, timeout: float = 90) -> httpx.Response:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"`up` exited with {proc.returncode}: {_output(proc)[-5000:]}")
        r = _readyz(port)
        if r is not None and ok(r):
            return r
        time.sleep(0.3)
    raise AssertionError(f"gateway on {port} never reached the expected state; last: {r.text if r else None}\n{_output(proc)[-5000:]}")


def _commands(pid: int) -> list[str]:
    """Command lines of the live descendants of ``pid`` (a crashed, not yet reaped
    service is a zombie without one)."""
    out = []
    for child in psutil.Process(pid).children(recursive=True):
        try:
            out.append(" ".join(child.cmdline()))
        except (psutil.ZombieProcess, psutil.NoSuchProcess):
            continue
    return out


def _cli_env(data_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "services.cli", "env"], env=_env(data_dir), capture_output=True, text=True, timeout=60)


async def _use(nats_url: str, database_url: str) -> None:
    nc = await nats.connect(nats_url, allow_reconnect=False, connect_timeout=3)
    try:
        await nc.jetstream().account_info()
    finally:
        await nc.close()
    conn = await asyncpg.connect(database_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        assert await conn.fetchval("SELECT count(*) FROM research_jobs") >= 0  # the gateway's tables are there
    finally:
        await conn.close()


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_sigkill_of_up_takes_every_child_down_and_the_folder_starts_again(tmp_root: Path) -> None:
    data = tmp_root / "sup-kill"
    port = free_port()
    first = _up(data, port)
    try:
        _wait(port, first, lambda r: r.status_code == 200)
        deadline = time.monotonic() + 30  # a service that crashed meanwhile is restarted first
        commands = _commands(first.pid)
        while sum("services.cli service" in c for c in commands) < 6 and time.monotonic() < deadline:
            time.sleep(0.3)
            commands = _commands(first.pid)
        assert any("nats-server" in c for c in commands) and any("postgres" in c for c in commands), commands
        assert sum("services.cli service" in c for c in commands) == 6, commands
        children = psutil.Process(first.pid).children(recursive=True)
        first.kill()  # SIGKILL: no handler, no clean-up of its own
        first.wait(10)
        _, alive = psutil.wait_procs(children, timeout=15)
        assert not alive, [" ".join(p.cmdline()) for p in alive]
        assert _readyz(port) is None  # the old gateway no longer answers
        stale = _cli_env(data)  # its connection file is left behind, but names no live system
        assert stale.returncode == 2 and "no `deepresearch up` is running" in stale.stderr
    finally:
        if first.poll() is None:
            first.kill()

    # The same folder, again: no stale postmaster.pid or lock stands in the way.
    port2 = free_port()
    second = _up(data, port2)
    try:
        body = _wait(port2, second, lambda r: r.status_code == 200).json()
        assert body["ready"] and body["nats"] and body["postgres"]
        # `deepresearch env` hands out the URLs with their credentials; they work.
        printed = _cli_env(data)
        assert printed.returncode == 0, printed.stderr
        urls = dict(line.removeprefix("export ").split("=", 1) for line in printed.stdout.splitlines())
        assert urls["RESEARCH_GATEWAY_URL"] == f"http://127.0.0.1:{port2}"
        assert stat.S_IMODE((data / "connection.env").stat().st_mode) == 0o600
        asyncio.run(_use(urls["NATS_URL"].strip("'"), urls["DATABASE_URL"].strip("'")))
    finally:
        _stop(second)
    assert second.returncode == 0


def test_a_stale_postmaster_pid_naming_a_live_unrelated_process_is_recovered(tmp_root: Path) -> None:
    """PostgreSQL alone refuses a postmaster.pid whose pid is alive, even when the pid
    now belongs to some other process, as happens after a crash and pid reuse."""
    data = tmp_root / "sup-stale"
    port = free_port()
    first = _up(data, port)
    try:
        _wait(port, first, lambda r: r.status_code == 200)
    finally:
        _stop(first)
    pgdata = data / "postgres" / "pgdata"
    assert not (pgdata / "postmaster.pid").exists()
    stranger = subprocess.Popen(["sleep", "120"])
    try:
        # A crashed server's pid file (its content as PostgreSQL writes it), now
        # naming a live process that is not a postgres of this folder.
        lines = [str(stranger.pid), str(pgdata), str(int(time.time())), "5432", str(data / "postgres" / "sock"), "127.0.0.1", "  1234   5678", "ready   "]
        (pgdata / "postmaster.pid").write_text("\n".join(lines) + "\n")
        port2 = free_port()
        second = _up(data, port2)
        try:
            _wait(port2, second, lambda r: r.status_code == 200)
        finally:
            _stop(second)
        assert second.returncode == 0
    finally:
        stranger.kill()


def test_a_crash_looping_stage_is_retried_and_named_in_readyz_while_the_rest_run(tmp_root: Path) -> None:
    data = tmp_root / "sup-loop"
    port = free_port()
    # An invalid digest setting: the services that read the digest settings (the digest
    # stage, and any other that sizes its work by them) exit at start-up. A service that
    # lived as long as the longest back-off counts as having started well, so that
    # longest back-off stays above a failing start-up's time on a loaded machine (2.5 s
    # seen), while the first delays stay short.
    proc = _up(data, port, DIGEST_POLICY="sometimes", RESEARCH_RESTART_BACKOFF_S="0.2", RESEARCH_RESTART_BACKOFF_MAX_S="15")
    try:
        r = _wait(port, proc, lambda r: "digest" in r.json().get("failing_services", {}), timeout=120)
        assert r.status_code == 503
        body = r.json()
        assert body["nats"] and body["postgres"] and not body["ready"]
        assert "crash-looping" in body["failing_services"]["digest"]

        status = json.loads((data / "supervisor.json").read_text())
        assert status["supervisor_pid"] == proc.pid
        assert status["services"]["digest"]["state"] == "crash_looping"
        assert status["services"]["digest"]["last_exit_code"] not in (None, 0)
        healthy = [name for name, svc in status["services"].items() if svc["last_exit_code"] is None]
        assert "gateway" in healthy and len(healthy) >= 3, status
        assert not set(body["failing_services"]) & set(healthy)
        for name in healthy:
            assert status["services"][name]["state"] == "running", status

        # Still retried (restarts keep growing), never giving up, the others untouched.
        # (polled: under load a restart's start-up alone can take seconds)
        restarts = status["services"]["digest"]["restarts"]
        deadline = time.monotonic() + 30
        while True:
            time.sleep(1)
            later = json.loads((data / "supervisor.json").read_text())
            if later["services"]["digest"]["restarts"] > restarts or time.monotonic() > deadline:
                break
        assert proc.poll() is None
        assert later["services"]["digest"]["restarts"] > restarts
        alive = _commands(proc.pid)
        for name in healthy:
            assert any(f"service {name}" in c for c in alive), alive
            assert later["services"][name]["restarts"] == 0, later
    finally:
        _stop(proc)
    assert proc.returncode == 0
    assert "digest is crash-looping" in _output(proc)
    assert not (data / "supervisor.json").exists()


def _orphans_of_killed_parent(inner: str) -> list[psutil.Process]:
    """Run ``inner`` (a shell command line) under an intermediate shell, SIGKILL that
    shell once ``inner`` runs, and return every process that was below it."""
    shell = subprocess.Popen(["sh", "-c", f"{inner} & wait"], cwd=Path(__file__).resolve().parents[2])
    deadline = time.monotonic() + 20
    while len(kids := psutil.Process(shell.pid).children(recursive=True)) < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(1.5)  # let it import, start its own child and start watching
    kids = psutil.Process(shell.pid).children(recursive=True)
    assert kids, "the inner command never started"
    shell.kill()
    shell.wait(5)
    return kids


def test_a_service_whose_supervisor_vanished_stops_itself_without_pdeathsig(tmp_root: Path) -> None:
    """The portable half: no PR_SET_PDEATHSIG here, only the parent-pid watch."""
    code = "import os, time; from shared.platform.lifeline import watch_parent; watch_parent(os.getppid(), grace_s=2, interval_s=0.1); time.sleep(60)"
    orphans = _orphans_of_killed_parent(f"{sys.executable} -c '{code}'")
    _, alive = psutil.wait_procs(orphans, timeout=5)
    assert not alive


def test_the_lifeline_wrapper_signals_its_server_when_its_parent_vanishes(tmp_root: Path) -> None:
    """How non-Linux systems start nats-server and PostgreSQL: under the wrapper."""
    orphans = _orphans_of_killed_parent(f"{sys.executable} -m shared.platform.lifeline $$ {int(signal.SIGTERM)} -- sleep 300")
    assert any(p.name() == "sleep" for p in orphans), orphans  # the "server" below the wrapper
    _, alive = psutil.wait_procs(orphans, timeout=10)
    assert not alive, alive


def test_restart_delays_double_up_to_the_cap_and_a_long_run_resets_them() -> None:
    from services.cli.supervisor import ServiceState, Supervisor

    sup = Supervisor({}, names=(), backoff_s=1.0, backoff_max_s=60.0)
    st = ServiceState(started=0.0)
    delays, states = [], []
    for _ in range(9):
        sup._exited("digest", st, 1, st.started + 0.5)  # noqa: SLF001 - quick exits in a row
        delays.append(st.next_restart_in_s)
        states.append(st.state)
    assert delays == [1, 2, 4, 8, 16, 32, 60, 60, 60]
    assert states[:2] == ["restarting"] * 2 and set(states[2:]) == {"crash_looping"}
    for _ in range(2000):  # days of failures: still the cap, no overflow
        sup._exited("digest", st, 1, st.started + 0.5)  # noqa: SLF001
    assert st.next_restart_in_s == 60
    sup._exited("digest", st, 1, st.started + 61)  # noqa: SLF001 - it had run for longer than the cap
    assert st.consecutive_failures == 1 and st.next_restart_in_s == 1


def _status(data: Path) -> dict:
    return json.loads((data / "supervisor.json").read_text())


def test_a_killed_nats_server_and_postgres_are_started_again_and_the_system_recovers(tmp_root: Path) -> None:
    """The drill: SIGKILL the nats-server, then PostgreSQL, under `up`. Each is started
    again (a new pid, the same port), named in /readyz while it is down, and the
    system is ready again within 15 s of its return; a job submitted then completes.
    While PostgreSQL is down a submission answers 503 with Retry-After and is not stored."""
    from tests.conftest import FIXTURE_CORPUS

    data = tmp_root / "sup-servers"
    port = free_port()
    # A 3 s first delay: long enough to see each server named while it is down, also on a
    # loaded machine (a /readyz already probing the server just killed waits out its 2 s).
    proc = _up(data, port, RESEARCH_RESTART_BACKOFF_S="3", RESEARCH_RESTART_BACKOFF_MAX_S="10")
    timings: dict[str, dict[str, float]] = {}
    try:
        _wait(port, proc, lambda r: r.status_code == 200)
        assert "sync_interval: always" in (data / "nats" / "nats-server.conf").read_text()
        for name in ("nats", "postgres"):
            before = _status(data)["servers"][name]
            assert before["state"] == "running" and before["pid"], before
            killed_at = time.monotonic()
            os.kill(before["pid"], signal.SIGKILL)
            named = rejected = False
            deadline = killed_at + 60
            while True:
                assert time.monotonic() < deadline, (_status(data), _output(proc)[-3000:])
                assert proc.poll() is None, _output(proc)[-5000:]
                now = _status(data)["servers"][name]
                if now["pid"] not in (None, before["pid"]) and now["state"] == "running":
                    back_at = time.monotonic()
                    break
                r = _readyz(port, timeout=5)  # its probe of a server just killed may wait out its 2 s
                if r is not None and r.status_code == 503 and name in r.json().get("servers_down", {}):
                    named = True
                if name == "postgres" and not rejected:
                    sub = httpx.post(f"http://127.0.0.1:{port}/api/research/jobs", json={"question": "lost while PostgreSQL is down?"}, timeout=10)
                    if sub.status_code == 503:
                        assert int(sub.headers["Retry-After"]) > 0, sub.headers
                        rejected = True
                time.sleep(0.1)
            assert named, f"/readyz never named {name} while it was down"
            assert now["port"] == before["port"] and now["restarts"] == 1, now
            assert f"{name} is back (pid {now['pid']}, port {now['port']})" in _output(proc)
            r = _wait(port, proc, lambda r: r.status_code == 200, timeout=15)
            ready_at = time.monotonic()
            assert "servers_down" not in r.json()
            timings[name] = {"down_s": round(back_at - killed_at, 2), "ready_after_return_s": round(ready_at - back_at, 2),
                             "kill_to_ready_s": round(ready_at - killed_at, 2)}
            if name == "postgres":
                assert rejected, "no submission was refused while PostgreSQL was down"
                listed = httpx.get(f"http://127.0.0.1:{port}/api/research/jobs", timeout=10).json()
                assert all(j["question"] != "lost while PostgreSQL is down?" for j in listed["items"]), listed
        print(f"recovery times: {json.dumps(timings)}")  # noqa: T201 - the measurement the drill reports
        (tmp_root / "sup-servers-timings.json").write_text(json.dumps(timings))

        # A job submitted after both came back completes.
        ask = subprocess.run(
            [sys.executable, "-m", "services.cli", "ask", "How did automation change lighthouse keeping?",
             "--corpus", str(FIXTURE_CORPUS), "--max-iterations", "1", "--json"],
            env=_env(data, RESEARCH_GATEWAY_URL=f"http://127.0.0.1:{port}"), capture_output=True, text=True, timeout=240,
        )
        assert ask.returncode == 0, ask.stderr[-3000:]
        assert json.loads(ask.stdout)["status"] in ("completed", "max_iterations_reached")
        assert all(st["restarts"] == 0 for st in _status(data)["services"].values()), _status(data)
    finally:
        _stop(proc)
    assert proc.returncode == 0
