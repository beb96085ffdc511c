"""Runs the system as separate OS processes: the gateway and the five stages.

Used by ``deepresearch up`` (foreground until Ctrl-C / SIGTERM) and by ``deepresearch
ask`` when no gateway answers (for the duration of one job). Children that exit
unexpectedly are restarted; on shutdown every child gets SIGTERM, then SIGKILL after a
grace period, and only then are the servers we started stopped.
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
from pathlib import Path

import httpx

from shared.servers import ensure_servers, free_port

log = logging.getLogger(__name__)

SERVICES = ("gateway", "decomposition", "retrieval", "digest", "scoring", "synthesis")
STAGE_SERVICES = SERVICES[1:]


def service_command(name: str) -> list[str]:
    return [sys.executable, "-m", "services.cli", "service", name]


@dataclass
class Supervisor:
    env: dict[str, str]
    names: tuple[str, ...] = SERVICES
    grace_s: float = 15.0
    log_dir: Path | None = None
    url: str = ""
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    _restarts: dict[str, list[float]] = field(default_factory=dict)

    def start(self) -> None:
        for name in self.names:
            self._spawn(name)

    def _spawn(self, name: str) -> None:
        env = {**self.env, "RESEARCH_PROCESS_NAME": name}
        out = None
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            out = open(self.log_dir / f"{name}.log", "ab")  # noqa: SIM115 - owned by the child
        self.procs[name] = subprocess.Popen(service_command(name), env=env, stdout=out, stderr=subprocess.STDOUT if out else None, stdin=subprocess.DEVNULL)
        if out:
            out.close()

    def poll(self) -> None:
        """Restart children that died, at most 5 times a minute each."""
        now = time.monotonic()
        for name, proc in list(self.procs.items()):
            if proc.poll() is None:
                continue
            recent = [t for t in self._restarts.get(name, []) if now - t < 60]
            if len(recent) >= 5:
                raise RuntimeError(f"{name} keeps exiting (code {proc.returncode}); giving up")
            log.warning("%s exited with code %s; restarting", name, proc.returncode)
            self._restarts[name] = [*recent, now]
            self._spawn(name)

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


def wait_ready(url: str, timeout: float = 60.0, procs: Supervisor | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return
        if procs is not None:
            gw = procs.procs.get("gateway")
            if gw is not None and gw.poll() is not None:
                raise RuntimeError(f"the gateway exited with code {gw.returncode} during start-up")
        time.sleep(0.2)
    raise RuntimeError(f"the gateway at {url} was not ready within {timeout}s")


@contextlib.contextmanager
def running_system(
    *, data_dir: Path, nats_url: str | None, database_url: str | None,
    host: str = "127.0.0.1", port: int | None = None, quiet: bool = False,
) -> Iterator[Supervisor]:
    """Start servers (if needed) and all services; yield the supervisor (its ``url``
    is the gateway's); stop all."""
    with ensure_servers(data_dir=data_dir, nats_url=nats_url, database_url=database_url) as (nats, dsn):
        port = port if port is not None else free_port()
        env = {
            **os.environ,
            "NATS_URL": nats,
            "DATABASE_URL": dsn or "",
            "RESEARCH_DATA_DIR": str(data_dir),
            "GATEWAY_HOST": host,
            "GATEWAY_PORT": str(port),
        }
        sup = Supervisor(env, log_dir=data_dir / "logs" if quiet else None)
        sup.start()
        try:
            sup.url = f"http://{host}:{port}"
            wait_ready(sup.url, procs=sup)
            yield sup
        finally:
            sup.stop()
