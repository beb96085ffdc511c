"""Every process stops on SIGTERM by itself, after it has done work: none has to be
killed when the supervisor's grace runs out, and none logs a NATS drain that timed out
(the gateway once took an idle fetch's timeout for a failure and replaced its pull
subscription without closing it, one a second; its drain then waited its whole
timeout, 30 s, for them)."""

from __future__ import annotations

import signal
import time
import uuid
from pathlib import Path

from tests.conftest import FIXTURE_CORPUS
from tests.integration.harness import System


def test_every_process_stops_on_sigterm_without_being_killed(tmp_root: Path, postgres) -> None:  # noqa: ANN001
    s = System(root=tmp_root / uuid.uuid4().hex[:8], postgres=postgres, corpus=FIXTURE_CORPUS).start()
    try:
        job = s.wait_terminal(s.submit(), timeout=90)
        assert job["status"] == "COMPLETED", job
        s.submit("How were lighthouse lamps fuelled?")  # in flight while everything stops
        # The drain hang needed consumers that had idled through many empty fetches.
        time.sleep(15)
    finally:
        s.stop()
    assert s.sup is not None
    killed = {name: p.returncode for name, p in s.sup.procs.items() if p.returncode == -signal.SIGKILL}
    assert not killed, f"killed after the grace: {killed}\n{s.logs()}"
    logs = "\n".join(f.read_text(errors="replace") for f in (s.root / "logs").glob("*.log"))
    assert "DrainTimeoutError" not in logs, s.logs()
    assert "pass failed" not in logs, s.logs()  # an empty fetch is no failure of a gateway loop
