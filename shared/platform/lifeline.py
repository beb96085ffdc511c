"""Child processes that die with the process that started them.

``deepresearch up`` starts nats-server, PostgreSQL and six service processes. If it
is killed outright (SIGKILL, the OOM killer, a closed terminal's session going away)
it cannot stop them, and they would go on serving, holding the data folder's
PostgreSQL lock and ports. Three mechanisms make them follow it:

- Linux: ``prctl(PR_SET_PDEATHSIG, sig)`` in the child before exec, so the kernel
  signals the child when its parent goes. The kernel ties this to the parent *thread*
  that forked, so children must be spawned from a thread that lives as long as the
  process: ``die_with_parent`` refuses (returns None) off the main thread.
- Elsewhere, a non-Python server is started under ``python -m shared.platform.lifeline``, a
  small wrapper that runs it and signals it when the wrapper's parent changes.
- A Python service also runs ``watch_parent``: a thread that notices its parent is
  gone (``os.getppid()`` changed) and stops the process, on every platform.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

__all__ = ["die_with_parent", "guarded_command", "watch_parent", "SUPERVISOR_PID_ENV"]

log = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1
SUPERVISOR_PID_ENV = "RESEARCH_SUPERVISOR_PID"
"""Set by the supervisor in each service's environment: the pid ``watch_parent`` expects as parent."""

_LINUX = sys.platform.startswith("linux")


def die_with_parent(sig: int = signal.SIGTERM) -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child receive ``sig`` when this process dies, or
    None where that cannot be promised (not Linux, or not on the main thread)."""
    if not _LINUX:
        return None
    if threading.current_thread() is not threading.main_thread():
        log.debug("not on the main thread: children started here cannot use PR_SET_PDEATHSIG")
        return None
    # Resolved before fork: the child must not load libraries between fork and exec.
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    parent = os.getpid()

    def _in_child() -> None:
        if prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"prctl(PR_SET_PDEATHSIG) failed: {os.strerror(err)}")
        # The parent may have died between fork and prctl: then nobody would signal us.
        if os.getppid() != parent:
            os.kill(os.getpid(), int(sig))

    return _in_child


def guarded_command(cmd: list[str], sig: int = signal.SIGTERM) -> list[str]:
    """``cmd`` as it must be started to die with us: unchanged on Linux (pair it with
    ``die_with_parent``), under the ``shared.platform.lifeline`` wrapper elsewhere."""
    if _LINUX:
        return cmd
    return [sys.executable, "-m", "shared.platform.lifeline", str(os.getpid()), str(int(sig)), "--", *cmd]


def watch_parent(parent_pid: int, *, grace_s: float = 10.0, interval_s: float = 0.5) -> threading.Thread:
    """Stop this process when ``parent_pid`` is no longer its parent: SIGTERM to
    ourselves (the service's own graceful shutdown), then a hard exit after ``grace_s``."""

    def _watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(interval_s)
        log.error("supervisor (pid %s) is gone; stopping this service", parent_pid)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(grace_s)
        log.error("still running %.0fs after the supervisor went; exiting now", grace_s)
        os._exit(1)

    thread = threading.Thread(target=_watch, name="watch-parent", daemon=True)
    thread.start()
    return thread


def _wrapper(argv: list[str]) -> int:
    """``python -m shared.platform.lifeline PARENT_PID SIGNAL -- CMD...``: run CMD, pass on
    SIGTERM/SIGINT, and send SIGNAL to it once PARENT_PID is no longer our parent."""
    parent, sig, sep, *cmd = argv
    if sep != "--" or not cmd:
        print("usage: python -m shared.platform.lifeline PARENT_PID SIGNAL -- CMD...", file=sys.stderr)
        return 2
    child = subprocess.Popen(cmd)
    for forwarded in (signal.SIGTERM, signal.SIGINT, signal.SIGQUIT):
        signal.signal(forwarded, lambda signum, _frame: child.send_signal(signum))
    while child.poll() is None:
        if os.getppid() != int(parent):
            child.send_signal(int(sig))
            try:
                child.wait(30)
            except subprocess.TimeoutExpired:
                child.kill()
            break
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.wait(0.5)
    return child.wait()


if __name__ == "__main__":
    sys.exit(_wrapper(sys.argv[1:]))
