"""The servers `deepresearch` starts for itself require credentials: loopback is open
to every account on the machine, so nothing may get in without the data folder's
secrets, and folders made before credentials existed are migrated."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import uuid
from pathlib import Path

import asyncpg
import nats
import pytest

from shared.platform.errors import ConfigurationError
from shared.platform.servers import CREDENTIALS_FILE, Credentials, NatsServer, PostgresServer, _postgres_bin_dir, ensure_servers

pytestmark = pytest.mark.integration


def _nats_refuses(url: str) -> str:
    async def go() -> str:
        try:
            nc = await nats.connect(url, allow_reconnect=False, max_reconnect_attempts=0, connect_timeout=3)
        except Exception as exc:  # noqa: BLE001 - the refusal is what we look at
            return f"{type(exc).__name__}: {exc}"
        await nc.close()
        return ""

    return asyncio.run(go())


def _nats_works(url: str) -> None:
    async def go() -> None:
        nc = await nats.connect(url, allow_reconnect=False, connect_timeout=3)
        try:
            info = await nc.jetstream().account_info()
            assert info is not None
        finally:
            await nc.close()

    asyncio.run(go())


def _pg_refuses(dsn: str) -> str:
    async def go() -> str:
        try:
            conn = await asyncpg.connect(dsn, timeout=5)
        except (asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            return f"{type(exc).__name__}: {exc}"
        await conn.close()
        return ""

    return asyncio.run(go())


def _pg_select(dsn: str) -> int:
    async def go() -> int:
        conn = await asyncpg.connect(dsn, timeout=5)
        try:
            return int(await conn.fetchval("SELECT 41 + 1"))
        finally:
            await conn.close()

    return asyncio.run(go())


def _without_password(dsn: str) -> str:
    scheme, rest = dsn.split("://", 1)
    creds, host = rest.split("@", 1)
    return f"{scheme}://{creds.split(':', 1)[0]}@{host}"


def test_self_started_servers_refuse_connections_without_the_folder_credentials(tmp_root: Path) -> None:
    data = tmp_root / f"auth-{uuid.uuid4().hex[:6]}"
    with ensure_servers(data_dir=data, nats_url=None, database_url=None) as (nats_url, dsn):
        assert dsn is not None
        creds_file = data / CREDENTIALS_FILE
        assert stat.S_IMODE(creds_file.stat().st_mode) == 0o600
        creds = Credentials.load_or_create(creds_file)
        assert creds.nats_password in nats_url and creds.postgres_password in dsn
        for config in (data / "nats" / "nats-server.conf",):
            assert stat.S_IMODE(config.stat().st_mode) == 0o600

        # NATS: no credentials, or wrong ones, are refused; the right ones work.
        address = "nats://" + nats_url.rsplit("@", 1)[1]
        assert "Authorization" in _nats_refuses(address)
        assert "Authorization" in _nats_refuses(nats_url.replace(creds.nats_password, "guess"))
        _nats_works(nats_url)

        # PostgreSQL over TCP: the same.
        plain = dsn.replace("postgresql+asyncpg://", "postgresql://")
        assert _pg_refuses(_without_password(plain))
        assert "password authentication failed" in _pg_refuses(plain.replace(creds.postgres_password, "guess"))
        assert _pg_select(plain) == 42

        # ...and over its unix socket, where trust used to let anyone in.
        sock = data / "postgres" / "sock"
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        port = plain.rsplit(":", 1)[1].split("/", 1)[0]
        r = subprocess.run(
            [str(_postgres_bin_dir() / "psql"), "-h", str(sock), "-p", port, "-U", "postgres", "-d", "postgres", "-w", "-tAc", "SELECT 1"],
            capture_output=True, text=True, env=env, timeout=30,
        )
        assert r.returncode != 0 and "password" in r.stderr, r
        hba = (data / "postgres" / "pgdata" / "pg_hba.conf").read_text()
        assert not [line for line in hba.splitlines() if line.strip() and not line.startswith("#") and line.split()[-1] == "trust"]

    # The folder starts again with the same secrets.
    with ensure_servers(data_dir=data, nats_url=None, database_url=None) as (nats_url2, dsn2):
        assert Credentials.load_or_create(data / CREDENTIALS_FILE).postgres_password in (dsn2 or "")
        _nats_works(nats_url2)
        assert _pg_select((dsn2 or "").replace("postgresql+asyncpg://", "postgresql://")) == 42


def test_a_folder_created_without_credentials_is_migrated_and_starts_again_with_its_data(tmp_root: Path) -> None:
    folder = tmp_root / f"legacy-{uuid.uuid4().hex[:6]}"
    # A folder as earlier versions made it: trust for everyone, no credentials file,
    # with data in it. Started once the old way, to hold a table.
    old = PostgresServer(folder)
    bin_dir = _postgres_bin_dir()
    folder.mkdir(parents=True)
    old._prepare_permissions(bin_dir)  # noqa: SLF001 - the same system user as the real start
    pgdata = folder / "pgdata"
    pgdata.mkdir()
    old._chown(pgdata)  # noqa: SLF001
    subprocess.run([str(bin_dir / "initdb"), "-D", str(pgdata), "--auth=trust", "-U", "postgres", "--no-sync"],
                   check=True, capture_output=True, user=old._run_as)  # noqa: SLF001
    (folder / CREDENTIALS_FILE).unlink(missing_ok=True)
    assert "trust" in (pgdata / "pg_hba.conf").read_text()

    pg = PostgresServer(folder).start()
    try:
        plain = pg.dsn
        assert _pg_select(plain) == 42
        assert _pg_refuses(_without_password(plain))
        rules = [line for line in (pgdata / "pg_hba.conf").read_text().splitlines() if line.strip() and not line.startswith("#")]
        assert rules and all(line.split()[-1] == "scram-sha-256" for line in rules)
        asyncio.run(_create_table(plain))
    finally:
        pg.stop()

    again = PostgresServer(folder).start()  # migrated once; starts as any new folder
    try:
        assert asyncio.run(_count(again.dsn)) == 1
    finally:
        again.stop()


async def _create_table(dsn: str) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute("CREATE TABLE kept (id int); INSERT INTO kept VALUES (1)")
    finally:
        await conn.close()


async def _count(dsn: str) -> int:
    conn = await asyncpg.connect(dsn)
    try:
        return int(await conn.fetchval("SELECT count(*) FROM kept"))
    finally:
        await conn.close()


def test_a_server_still_alive_on_the_folder_is_named_instead_of_started_twice(tmp_root: Path) -> None:
    """A leftover of an earlier run that still serves the folder: starting a second
    server on it would corrupt it (JetStream has no lock of its own), so it is refused
    with the pid to stop."""
    data = tmp_root / f"twice-{uuid.uuid4().hex[:6]}"
    nats_a = NatsServer(data / "nats").start()
    pg_a = PostgresServer(data / "postgres").start()
    try:
        assert nats_a.proc is not None and pg_a.proc is not None
        with pytest.raises(ConfigurationError, match=rf"nats-server \(pid {nats_a.proc.pid}\)"):
            NatsServer(data / "nats").start()
        with pytest.raises(ConfigurationError, match=rf"PostgreSQL server \(pid {pg_a.proc.pid}\)"):
            PostgresServer(data / "postgres").start()
    finally:
        pg_a.stop()
        nats_a.stop()
    # Once they are gone, the folder starts normally.
    nats_b = NatsServer(data / "nats").start()
    nats_b.stop()
