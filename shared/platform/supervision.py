"""The supervisor's status file: what ``deepresearch up`` knows about its services.

The supervisor (``services/cli/supervisor.py``) rewrites ``supervisor.json`` in the data
folder whenever a service or a server it started (nats-server, PostgreSQL) starts,
exits or is restarted; the gateway's readiness check reads it, so ``/readyz`` names
a service that keeps crashing, or a server that is down, instead of answering
"ready" while jobs can never finish. A file left by a supervisor that is
gone (killed outright) is ignored.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

__all__ = [
    "STATUS_FILE", "CONNECTION_FILE", "CRASH_LOOPING", "status_path", "write_status", "read_status",
    "failing_services", "down_servers", "connection_path", "write_connection", "read_connection",
]

log = logging.getLogger(__name__)

STATUS_FILE = "supervisor.json"
CONNECTION_FILE = "connection.env"
"""``NATS_URL``, ``DATABASE_URL`` (with credentials) and ``RESEARCH_GATEWAY_URL`` of the
running system, mode 0600, for ``deepresearch env`` and for joining more processes."""
CRASH_LOOPING = "crash_looping"
"""A service's state after it exited soon after each of its last few starts."""


def status_path(data_dir: Path) -> Path:
    return Path(data_dir) / STATUS_FILE


def write_status(path: Path, status: dict[str, Any]) -> None:
    """Replace the file atomically, so a reader never sees half of it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(status, indent=2, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def _alive(pid: object) -> bool:
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_status(data_dir: Path) -> dict[str, Any] | None:
    """The live supervisor's status, or None: no file, a file of a dead supervisor,
    or one that cannot be read (logged; readiness then relies on its own checks)."""
    path = status_path(data_dir)
    try:
        status = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("cannot read the supervisor status %s: %s", path, exc)
        return None
    if not isinstance(status, dict) or not _alive(status.get("supervisor_pid")):
        return None
    return status


def failing_services(data_dir: Path) -> dict[str, str]:
    """Services the live supervisor reports as crash-looping, each with a short reason."""
    status = read_status(data_dir)
    if status is None:
        return {}
    services = status.get("services")
    failing: dict[str, str] = {}
    for name, svc in (services.items() if isinstance(services, dict) else ()):
        if isinstance(svc, dict) and svc.get("state") == CRASH_LOOPING:
            failing[name] = (
                f"crash-looping: exited {svc.get('consecutive_failures')} times in a row "
                f"(last exit code {svc.get('last_exit_code')}, {svc.get('restarts')} restarts)"
            )
    return failing


def down_servers(data_dir: Path) -> dict[str, str]:
    """The servers the live supervisor started itself (nats, postgres) that are not
    running now (exited, waiting for or failing their restart), each with a reason."""
    status = read_status(data_dir)
    servers = status.get("servers") if status is not None else None
    down: dict[str, str] = {}
    for name, srv in (servers.items() if isinstance(servers, dict) else ()):
        # Down while it has no pid: one that crash-looped but runs now is not named.
        if isinstance(srv, dict) and srv.get("pid") is None:
            down[name] = (
                f"{'crash-looping' if srv.get('state') == CRASH_LOOPING else 'down'}: exited with code "
                f"{srv.get('last_exit_code')} at {srv.get('last_exit_at')}; the supervisor starts it again on port "
                f"{srv.get('port')} in {srv.get('next_restart_in_s')}s ({srv.get('restarts')} restarts so far)"
            )
    return down


def connection_path(data_dir: Path) -> Path:
    return Path(data_dir) / CONNECTION_FILE


def write_connection(path: Path, values: dict[str, str]) -> None:
    """Write ``KEY=value`` lines readable only by us: the URLs carry passwords."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.writelines(f"{key}={value}\n" for key, value in values.items())
    os.replace(tmp, path)


def read_connection(data_dir: Path) -> dict[str, str] | None:
    """The running system's URLs, or None when no live supervisor owns the folder."""
    if read_status(data_dir) is None:
        return None
    try:
        text = connection_path(data_dir).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
