"""Runs the system as separate OS processes: the gateway and the five stages.

Used by ``deepresearch up`` (foreground until Ctrl-C / SIGTERM) and by ``deepresearch
ask`` when no gateway answers (for the duration of one job). Children die with the
supervisor, even when it is killed outright (``shared.platform.lifeline``). A child that exits
unexpectedly is restarted after a delay that doubles with each quick exit in a row, up
to a cap; one that keeps exiting is reported as crash-looping (log, status file,
the gateway's ``/readyz``) and still retried, never taking the others down. The
nats-server and PostgreSQL it started itself are supervised the same way: one that
exits is started again on the same data folder, port and credentials (so every URL
the services hold stays valid and they reconnect), with the same back-off, and is
named in the status file and ``/readyz`` while it is down. On shutdown every child
gets SIGTERM, then SIGKILL after a grace period, and only then are the servers we
started stopped.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from shared.platform.lifeline import SUPERVISOR_PID_ENV, die_with_parent
from shared.platform.processes import free_port
from shared.platform.servers import NatsServer, PostgresServer, ensure_servers
from shared.platform.supervision import CRASH_LOOPING, connection_path, status_path, write_connection, write_status

log = logging.getLogger(__name__)

SERVICES = ("gateway", "decomposition", "retrieval", "digest", "scoring", "synthesis")
STAGE_SERVICES = SERVICES[1:]
CRASH_LOOP_AFTER = 3
"""Quick exits in a row after which a service is reported as crash-looping."""


def service_command(name: str) -> list[str]:
    return [sys.executable, "-m", "services.cli", "service", name]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class ServiceState:
    """What the supervisor knows about one service, as written to the status file."""

    state: str = "running"  # running | restarting | crash_looping
    pid: int | None = None
    restarts: int = 0
    consecutive_failures: int = 0  # exits in a row, each soon after its start
    last_exit_code: int | None = None
    last_exit_at: str | None = None
    next_restart_in_s: float | None = None
    started: float = 0.0  # monotonic
    restart_at: float | None = None  # monotonic; set while waiting to restart

    def public(self) -> dict[str, Any]:
        return {
            "state": self.state, "pid": self.pid, "restarts": self.restarts,
            "consecutive_failures": self.consecutive_failures, "last_exit_code": self.last_exit_code,
            "last_exit_at": self.last_exit_at, "next_restart_in_s": self.next_restart_in_s,
        }


@dataclass
class Supervisor:
    env: dict[str, str]
    names: tuple[str, ...] = SERVICES
    grace_s: float = 15.0
    log_dir: Path | None = None
    url: str = ""
    backoff_s: float = 1.0
    """Delay before restarting a service that exited; doubles per quick exit in a row."""
    backoff_max_s: float = 60.0
    """Cap of that delay. A run that lasted this long counts as healthy and resets it."""
    status_file: Path | None = None
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    states: dict[str, ServiceState] = field(default_factory=dict)
    ready: dict[str, Any] = field(default_factory=dict)
    servers: dict[str, NatsServer | PostgresServer] = field(default_factory=dict)
    """The servers we started ourselves (none when NATS_URL / DATABASE_URL name others)."""
    server_states: dict[str, ServiceState] = field(default_factory=dict)

    def start(self) -> None:
        now = time.monotonic()
        for name, server in self.servers.items():
            self.server_states[name] = ServiceState(pid=server.pid, started=now)
        for name in self.names:
            self._spawn(name)
        self._write_status()

    def _spawn(self, name: str) -> None:
        # The services watch this pid too (shared.platform.lifeline.watch_parent): the portable
        # half of dying with us, where PR_SET_PDEATHSIG does not exist.
        env = {**self.env, "RESEARCH_PROCESS_NAME": name, SUPERVISOR_PID_ENV: str(os.getpid())}
        out = None
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            out = open(self.log_dir / f"{name}.log", "ab")  # noqa: SIM115 - owned by the child
        try:
            self.procs[name] = subprocess.Popen(
                service_command(name), env=env, stdout=out, stderr=subprocess.STDOUT if out else None,
                stdin=subprocess.DEVNULL, preexec_fn=die_with_parent(signal.SIGTERM),
            )
        finally:
            if out:
                out.close()
        st = self.states.setdefault(name, ServiceState())
        st.pid, st.started, st.restart_at, st.next_restart_in_s = self.procs[name].pid, time.monotonic(), None, None
        if st.state != CRASH_LOOPING:
            st.state = "running"

    def poll(self) -> None:
        """Restart children that died, each after its back-off delay; never give up."""
        now = time.monotonic()
        changed = self._poll_servers(now)
        for name, proc in list(self.procs.items()):
            st = self.states.setdefault(name, ServiceState(pid=proc.pid, started=now))
            if proc.poll() is None:
                if st.state == CRASH_LOOPING and now - st.started >= self.backoff_max_s:
                    log.info("%s has been running for %.0fs since its last restart; no longer crash-looping", name, now - st.started)
                    st.state, st.consecutive_failures = "running", 0
                    changed = True
                continue
            if st.restart_at is None:
                self._exited(name, st, proc.returncode, now)
                changed = True
            elif now >= st.restart_at:
                st.restarts += 1
                self._spawn(name)
                changed = True
        if changed:
            self._write_status()

    def _poll_servers(self, now: float) -> bool:
        """Start a server that exited again, after its back-off; True if anything changed."""
        changed = False
        for name, server in self.servers.items():
            st = self.server_states.setdefault(name, ServiceState(pid=server.pid, started=now))
            if st.restart_at is None:
                code = server.exit_code()
                if code is None:
                    if st.state == CRASH_LOOPING and now - st.started >= self.backoff_max_s:
                        st.state, st.consecutive_failures = "running", 0
                        changed = True
                    continue
                self._exited(name, st, code, now)
                changed = True
            elif now >= st.restart_at:
                st.restarts += 1
                st.started, st.restart_at = now, None
                log.warning("starting %s again on port %s (restart %d)", name, server.port, st.restarts)
                try:
                    server.restart()
                except Exception as exc:  # noqa: BLE001 - it is retried after its back-off, like a crashing service
                    log.error("%s did not start again: %s", name, exc)
                    self._exited(name, st, server.exit_code() if server.exit_code() is not None else -1, time.monotonic())
                else:
                    st.pid, st.next_restart_in_s = server.pid, None
                    if st.state != CRASH_LOOPING:
                        st.state = "running"
                    log.warning("%s is back (pid %s, port %s) after %.1fs", name, server.pid, server.port, time.monotonic() - now)
                changed = True
        return changed

    def _exited(self, name: str, st: ServiceState, code: int, now: float) -> None:
        lived = now - st.started
        st.consecutive_failures = 1 if lived >= self.backoff_max_s else st.consecutive_failures + 1
        # The exponent is bounded: a service failing for days must not overflow the float.
        delay = min(self.backoff_max_s, self.backoff_s * 2 ** min(st.consecutive_failures - 1, 40))
        st.last_exit_code, st.last_exit_at, st.pid = code, _now(), None
        st.restart_at, st.next_restart_in_s = now + delay, round(delay, 2)
        if st.consecutive_failures >= CRASH_LOOP_AFTER:
            st.state = CRASH_LOOPING
            log.error(
                "%s is crash-looping: exited with code %s after %.1fs, %d times in a row; restarting in %.1fs "
                "(the other services keep running; see its log)", name, code, lived, st.consecutive_failures, delay,
            )
        else:
            st.state = "restarting"
            log.warning("%s exited with code %s after %.1fs; restarting in %.1fs", name, code, lived, delay)

    def _write_status(self) -> None:
        if self.status_file is None:
            return
        status = {
            "supervisor_pid": os.getpid(),
            "updated_at": _now(),
            "services": {name: st.public() for name, st in self.states.items()},
            "servers": {
                name: st.public() | {"port": self.servers[name].port} for name, st in self.server_states.items()
            },
        }
        try:
            write_status(self.status_file, status)
        except OSError as exc:
            log.warning("cannot write the supervisor status %s: %s", self.status_file, exc)

    def failing(self) -> list[str]:
        return [name for name, st in self.states.items() if st.state == CRASH_LOOPING]

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + self.grace_s
        for proc in self.procs.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(max(0.1, deadline - time.monotonic()))
            if proc.poll() is None:
                proc.kill()
                proc.wait(5)
        if self.status_file is not None:
            self.status_file.unlink(missing_ok=True)


def wait_ready(url: str, timeout: float = 60.0, procs: Supervisor | None = None) -> dict[str, Any]:
    """Wait until the gateway is ready and return its ``/readyz`` body. A gateway
    whose servers answer while a stage crash-loops counts as up (the body names the
    stage): the supervisor keeps retrying it, and stopping everything would not help."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError, ValueError):
            r = httpx.get(f"{url}/readyz", timeout=2)
            body = r.json()
            if r.status_code == 200 or (body.get("failing_services") and body.get("nats") and body.get("postgres")):
                return body
        if procs is not None:
            procs.poll()
            gw = procs.procs.get("gateway")
            if gw is not None and gw.poll() is not None and procs.states.get("gateway", ServiceState()).state == CRASH_LOOPING:
                raise RuntimeError(f"the gateway keeps exiting during start-up (code {gw.returncode}); see its log")
        time.sleep(0.2)
    raise RuntimeError(f"the gateway at {url} was not ready within {timeout}s")


@contextlib.contextmanager
def running_system(
    *, data_dir: Path, nats_url: str | None, database_url: str | None,
    host: str = "127.0.0.1", port: int | None = None, quiet: bool = False,
    backoff_s: float = 1.0, backoff_max_s: float = 60.0,
) -> Iterator[Supervisor]:
    """Start servers (if needed) and all services; yield the supervisor (its ``url``
    is the gateway's, ``ready`` the gateway's first readiness answer); stop all."""
    data_dir.mkdir(parents=True, exist_ok=True)
    started: dict[str, NatsServer | PostgresServer] = {}
    with ensure_servers(data_dir=data_dir, nats_url=nats_url, database_url=database_url, started=started) as (nats, dsn):
        port = port if port is not None else free_port()
        env = {
            **os.environ,
            "NATS_URL": nats,
            "DATABASE_URL": dsn or "",
            "RESEARCH_DATA_DIR": str(data_dir),
            "GATEWAY_HOST": host,
            "GATEWAY_PORT": str(port),
        }
        sup = Supervisor(
            env, log_dir=data_dir / "logs" if quiet else None, backoff_s=backoff_s, backoff_max_s=backoff_max_s,
            status_file=status_path(data_dir), servers=started,
        )
        conn_file = connection_path(data_dir)
        try:
            sup.start()
            sup.url = f"http://{host}:{port}"
            sup.ready = wait_ready(sup.url, procs=sup)
            write_connection(conn_file, {"NATS_URL": nats, "DATABASE_URL": dsn or "", "RESEARCH_GATEWAY_URL": sup.url})
            yield sup
        finally:
            conn_file.unlink(missing_ok=True)
            sup.stop()
