"""A loopback HTTP server for fakes of paid external APIs.

Runs any ASGI app (Starlette, FastAPI) under uvicorn in a background thread with its
own event loop, on a free port of 127.0.0.1. The test's own event loop stays free, and
the system's services, started as separate OS processes, reach the same fake over
loopback by its `base_url`.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from types import TracebackType
from collections.abc import Callable
from typing import Any, Self

import uvicorn

__all__ = ["LoopbackServer", "RecordingFake", "ServedFake", "search_terms", "wait_until"]

_START_TIMEOUT_S = 10.0


class LoopbackServer:
    """Serve `app` on 127.0.0.1:<free port> from a daemon thread.

    Use as a context manager, or call `start()` / `stop()`. `base_url` is
    `http://127.0.0.1:<port>` (no trailing slash, no path).
    """

    def __init__(
        self, app: Any, *, host: str = "127.0.0.1", graceful_shutdown_s: float = 1.0
    ) -> None:
        self.app = app
        self.host = host
        # A fake may be mid-way through a scripted delay when the test ends; waiting
        # for it would only slow the suite, so in-flight requests get a short grace.
        self._graceful_shutdown_s = graceful_shutdown_s
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        self.port: int | None = None

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise RuntimeError("LoopbackServer is not started")
        return f"http://{self.host}:{self.port}"

    def start(self) -> Self:
        if self._thread is not None:
            raise RuntimeError("LoopbackServer already started")
        # Bind before starting the thread so the port is known (and held) up front.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, 0))
        sock.listen(128)
        self._socket = sock
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=self._graceful_shutdown_s,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [sock]},
            name=f"loopback-{self.port}",
            daemon=True,
        )
        self._thread.start()
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("LoopbackServer thread died during startup")
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"LoopbackServer did not start within {_START_TIMEOUT_S}s"
                )
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is None or self._thread is None:
            return
        self._server.should_exit = True
        self._thread.join(timeout=self._graceful_shutdown_s + 5.0)
        if self._thread.is_alive():
            self._server.force_exit = True
            self._thread.join(timeout=5.0)
        if self._socket is not None:
            self._socket.close()
        self._server = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()



class ServedFake:
    """Base of the fakes: serves the ASGI app ``self.app`` (set by the subclass) on a
    LoopbackServer from ``start()`` to ``stop()``, or as a context manager."""

    app: Any
    _server: LoopbackServer | None = None

    def start(self) -> Self:
        self._server = LoopbackServer(self.app).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` while started."""
        if self._server is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        return self._server.base_url


class RecordingFake(ServedFake):
    """A served fake that records each request it gets (a dict with at least its
    ``"path"``) and can be scripted to fail the next ones; what a failure is, and how
    it is answered, is the subclass's."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self._failures: list[Any] = []
        self._lock = threading.Lock()

    def _script_failures(self, failure: Any, n: int) -> None:
        with self._lock:
            self._failures.extend([failure] * n)

    def clear_failures(self) -> None:
        with self._lock:
            self._failures.clear()

    def count(self, path: str) -> int:
        """How many requests reached ``path``."""
        with self._lock:
            return sum(1 for r in self.requests if r["path"] == path)

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an and are as at be by do does for from how in is it of on or the to what which with why".split()
)


def search_terms(query: str) -> list[str]:
    """The words a fake search engine matches documents on: lower-cased, stop words out."""
    return [w for w in _WORD.findall(query.lower()) if w not in _STOP]


def wait_until(predicate: Callable[[], bool], timeout: float = 3.0) -> bool:
    """Whether ``predicate`` held within ``timeout`` seconds: a fake records what it
    sees in its own thread, so a test polls for it (checked once more at the end)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()
