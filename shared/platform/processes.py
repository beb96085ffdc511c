"""Child server processes on loopback: free ports, waiting for one to listen, stopping
one, telling whether a pid is still the server we started, and what the supervisor of
``deepresearch up`` needs of a server it restarts (:class:`Restartable`). The servers
themselves are in :mod:`shared.platform.servers`.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from pathlib import Path

__all__ = ["LOOPBACK", "Restartable", "free_port", "pid_alive", "process_owns", "read_pid", "stop", "tail",
           "wait_for_port"]

LOOPBACK = "127.0.0.1"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], what: str, timeout: float, log_file: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with code {proc.returncode}; log: {log_file}\n{tail(log_file)}")
        with contextlib.suppress(OSError), socket.create_connection((LOOPBACK, port), timeout=0.2):
            return
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"{what} did not listen on {LOOPBACK}:{port} within {timeout}s; log: {log_file}")


def tail(path: Path, lines: int = 20) -> str:
    with contextlib.suppress(OSError):
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    return ""


def stop(proc: subprocess.Popen[bytes] | None, sig: int, timeout: float) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(sig)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process (the postgres system user's, say)
    return True


def process_owns(pid: int, program: str, folder: Path) -> bool:
    """Whether live ``pid`` is ``program`` working on ``folder`` (and not an unrelated
    process that reuses a dead server's pid). Where we cannot tell, assume it is."""
    if not pid_alive(pid):
        return False
    proc = Path(f"/proc/{pid}")
    if proc.is_dir():
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(proc / "cwd")
        except PermissionError:
            return True
        except OSError:  # it exited while we looked
            return pid_alive(pid)
        # The postmaster changes into its data folder; nats-server names its store.
        return program in cmdline and (str(folder) in cmdline or Path(cwd) == folder)
    r = subprocess.run(["ps", "-o", "command=", "-p", str(pid)], capture_output=True, text=True)
    return r.returncode != 0 or (program in r.stdout and str(folder) in r.stdout)


def read_pid(path: Path) -> int | None:
    try:
        first = path.read_text().split("\n", 1)[0].strip()
    except FileNotFoundError:
        return None
    return int(first) if first.isdigit() else None



class Restartable:
    """What the supervisor of ``deepresearch up`` needs of a server it started."""

    name = "server"
    proc: subprocess.Popen[bytes] | None
    port: int
    restart_timeout_s = 30.0

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    def exit_code(self) -> int | None:
        """The code it exited with (reaping it), or None while it runs (or never ran)."""
        return None if self.proc is None else self.proc.poll()

    def restart(self) -> None:
        """Start it again after it exited: the same data folder, port and credentials.
        Raises (as ``start`` does) when it does not come up; the caller retries later."""
        if self.proc is not None and self.proc.poll() is None:
            raise RuntimeError(f"{self.name} (pid {self.proc.pid}) is still running")
        self.start(self.restart_timeout_s)  # type: ignore[attr-defined]
