"""`deepresearch up` supervises the nats-server and PostgreSQL it started: one that is
killed outright is started again on the same data folder, port and credentials, is
named in the status file (and so in the gateway's /readyz) while it is down, and
loses nothing that was acknowledged before it died."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import asyncpg
import nats
import pytest

from services.cli.supervisor import Supervisor
from shared.platform.servers import NatsServer, PostgresServer, ensure_servers
from shared.platform.supervision import CRASH_LOOPING, down_servers, read_status, status_path

pytestmark = pytest.mark.integration


def _restart_after_kill(sup: Supervisor, data: Path, name: str) -> tuple[dict[str, str], float]:
    """SIGKILL server ``name``; poll the supervisor until it runs again. Returns what
    ``down_servers`` said meanwhile and the seconds from the kill to its return."""
    server = sup.servers[name]
    old_pid, port = server.pid, server.port
    assert old_pid is not None
    os.kill(old_pid, signal.SIGKILL)
    killed = time.monotonic()
    seen: dict[str, str] = {}
    while time.monotonic() - killed < 60:
        sup.poll()
        seen |= down_servers(data)
        st = sup.server_states[name]
        if st.state == "running" and server.pid not in (None, old_pid):
            break
        time.sleep(0.05)
    else:
        raise AssertionError(f"{name} did not come back: {read_status(data)}")
    assert server.port == port
    status = read_status(data)["servers"][name]
    assert status["pid"] == server.pid and status["port"] == port and status["restarts"] == 1, status
    assert not down_servers(data)
    return seen, time.monotonic() - killed


def test_killed_servers_come_back_on_their_port_and_keep_what_they_acknowledged(tmp_root: Path) -> None:
    data = tmp_root / "server-recovery"
    started: dict[str, NatsServer | PostgresServer] = {}
    with ensure_servers(data_dir=data, nats_url=None, database_url=None, started=started) as (nats_url, dsn):
        sup = Supervisor({}, names=(), backoff_s=0.5, backoff_max_s=5, status_file=status_path(data), servers=started)
        sup.start()

        async def before() -> nats.NATS:
            # A client that stays connected across the restart (unlimited reconnects).
            nc = await nats.connect(nats_url, max_reconnect_attempts=-1, reconnect_time_wait=0.2)
            js = nc.jetstream()
            await js.add_stream(name="DRILL", subjects=["drill.>"])
            ack = await js.publish("drill.one", b"acknowledged before the kill")
            assert ack.seq == 1
            conn = await asyncpg.connect(dsn)
            await conn.execute("CREATE TABLE drill (v text); INSERT INTO drill VALUES ('committed before the kill')")
            await conn.close()
            return nc

        loop = asyncio.new_event_loop()
        try:
            nc = loop.run_until_complete(before())
            seen_nats, nats_s = _restart_after_kill(sup, data, "nats")
            assert "nats" in seen_nats and f"port {started['nats'].port}" in seen_nats["nats"], seen_nats

            async def after_nats() -> None:
                js = nc.jetstream()
                deadline = time.monotonic() + 15
                while True:  # the same client, reconnected by itself
                    try:
                        ack = await js.publish("drill.two", b"after the restart", timeout=2)
                        break
                    except (nats.errors.TimeoutError, nats.errors.NoRespondersError, nats.errors.ConnectionReconnectingError):
                        assert time.monotonic() < deadline
                        await asyncio.sleep(0.2)
                assert ack.seq == 2  # the acknowledged message survived the SIGKILL
                msg = await js.get_msg("DRILL", 1)
                assert msg.data == b"acknowledged before the kill"

            loop.run_until_complete(after_nats())
            seen_pg, pg_s = _restart_after_kill(sup, data, "postgres")
            assert "postgres" in seen_pg, seen_pg

            async def after_pg() -> None:
                conn = await asyncpg.connect(dsn)  # the same URL: port and password unchanged
                try:
                    assert await conn.fetchval("SELECT v FROM drill") == "committed before the kill"
                finally:
                    await conn.close()
                await nc.close()

            loop.run_until_complete(after_pg())
        finally:
            loop.close()
        print(f"kill to running again: nats {nats_s:.2f}s, postgres {pg_s:.2f}s")  # noqa: T201


class _Failing:
    """A server that exited and will not start again."""

    name, port, pid = "postgres", 5999, None

    def __init__(self) -> None:
        self.attempts = 0

    def exit_code(self) -> int:
        return 1

    def restart(self) -> None:
        self.attempts += 1
        raise RuntimeError("postgres exited with code 1")


def test_a_server_that_does_not_start_again_is_retried_with_back_off_and_reported(tmp_path: Path) -> None:
    sup = Supervisor({}, names=(), backoff_s=0.1, backoff_max_s=0.4, servers={"postgres": _Failing()})  # type: ignore[dict-item]
    sup.start()
    delays = []
    deadline = time.monotonic() + 10
    while sup.servers["postgres"].attempts < 5:  # type: ignore[attr-defined]
        assert time.monotonic() < deadline
        sup.poll()
        st = sup.server_states["postgres"]
        if st.next_restart_in_s is not None and (not delays or delays[-1] != (st.restarts, st.next_restart_in_s)):
            delays.append((st.restarts, st.next_restart_in_s))
        time.sleep(0.02)
    assert [d for _, d in delays][:4] == [0.1, 0.2, 0.4, 0.4], delays
    assert sup.server_states["postgres"].state == CRASH_LOOPING
