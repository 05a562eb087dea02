"""A real, throw-away PostgreSQL server for tests and benchmarks: initdb, pg_ctl start, pg_ctl stop, rm -rf.

The server runs from the Debian package ``postgresql`` (``/usr/lib/postgresql/<version>/bin``). ``initdb`` and
``pg_ctl`` refuse to run as root: as root they run as the ``postgres`` system user through ``runuser``, in a
temporary folder under /tmp owned by that user; as any other user they run directly, as that user. Either way the
database superuser is ``postgres`` and loopback connections need no password (``--auth=trust``).

The server is tuned for tests, not for safety: no fsync, no synchronous commit, no full-page writes. Its locale
is C (text sorts by code point, as on SQLite), its encoding UTF-8.

Usage (tests use the ``postgres_server`` and ``postgres_url`` fixtures of tests/support/databases.py)::

    with PostgresServer() as server:
        server.create_database("demo")
        url = server.url("demo")  # postgresql+psycopg://postgres@127.0.0.1:PORT/demo
        ...
        server.drop_database("demo")

``PostgresUnavailable`` says why no server can be started on this machine (no binaries, no ``postgres`` user,
no ``runuser``); fixtures turn it into a skip.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Self

from tests.support.ports import free_port

logger = logging.getLogger(__name__)

SERVER_PACKAGE = "PostgreSQL server not installed (Debian package postgresql)"
"""The start of the reason given when no server binaries are found."""

BINDIR_ENV = "TOPICSTREAMS_PG_BINDIR"
"""Environment variable naming the folder of the server binaries, where they are not found by themselves."""

SYSTEM_USER = "postgres"
"""The system user the server runs as when the tests run as root."""

SUPERUSER = "postgres"
"""The database superuser initdb creates (whatever the system user)."""

SERVER_SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "200",
    "shared_buffers": "128MB",
}
"""``postgres -c`` settings: loopback only, durability off (a test server is thrown away, never recovered)."""

START_TIMEOUT = 60
"""Seconds ``pg_ctl start -w`` waits for the server to accept connections."""


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL server can be started on this machine; the message says why and what to install."""


def find_bindir() -> Path:
    """The folder of the server binaries: $TOPICSTREAMS_PG_BINDIR if set, else ``pg_config --bindir`` when it has
    ``initdb``, else the newest /usr/lib/postgresql/*/bin. Raises PostgresUnavailable when there is none."""
    if os.environ.get(BINDIR_ENV):
        candidates = [Path(os.environ[BINDIR_ENV])]
        if not all((candidates[0] / name).is_file() for name in ("initdb", "pg_ctl", "postgres")):
            raise PostgresUnavailable(
                f"{SERVER_PACKAGE}: ${BINDIR_ENV} is {candidates[0]}, which has no initdb/pg_ctl/postgres"
            )
        return candidates[0]
    candidates = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=30, check=True)
            candidates.append(Path(out.stdout.strip()))
        except (OSError, subprocess.SubprocessError) as exc:
            logger.debug("pg_config --bindir failed: %s", exc)
    candidates.extend(sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=_version_key, reverse=True))
    for folder in candidates:
        if all((folder / name).is_file() for name in ("initdb", "pg_ctl", "postgres")):
            return folder
    looked = ", ".join(str(folder) for folder in candidates) or "no pg_config, no /usr/lib/postgresql/*/bin"
    raise PostgresUnavailable(
        f"{SERVER_PACKAGE}: no initdb/pg_ctl/postgres found (looked in: {looked});"
        " install it with `apt-get install postgresql`"
    )


def _version_key(folder: Path) -> tuple[int, ...]:
    return tuple(int(part) for part in folder.parent.name.split(".") if part.isdigit())


class PostgresServer:
    """One PostgreSQL server in a temporary folder, on a free loopback port, for the life of the object.

    ``start()`` (or ``with``) runs initdb and starts it; ``stop()`` stops it and removes the folder (also at
    interpreter exit, should the caller forget).
    """

    host = "127.0.0.1"
    user = SUPERUSER
    password: str | None = None
    maintenance_dbname = "postgres"

    def __init__(self, bindir: Path | None = None, settings: dict[str, str] | None = None) -> None:
        self.settings = {**SERVER_SETTINGS, **(settings or {})}
        self.bindir = bindir
        self.port = 0
        self.folder: Path | None = None
        self.run_as: str | None = None
        self.version = ""
        self._running = False

    # -- where and as whom -------------------------------------------------------------------------------------

    @property
    def datadir(self) -> Path:
        assert self.folder is not None, "the server was never started"
        return self.folder / "data"

    @property
    def logfile(self) -> Path:
        assert self.folder is not None, "the server was never started"
        return self.folder / "server.log"

    def check_available(self) -> None:
        """Raise PostgresUnavailable unless this machine can run a server as this user."""
        if self.bindir is None:
            self.bindir = find_bindir()
        if os.geteuid() != 0:
            self.run_as = None  # initdb and the server run as this user, who owns the folder
            return
        try:
            pwd.getpwnam(SYSTEM_USER)
        except KeyError:
            raise PostgresUnavailable(
                f"PostgreSQL cannot run as root and there is no {SYSTEM_USER!r} system user to run it as"
                " (the Debian package postgresql creates it): tests needing a PostgreSQL server are skipped"
            ) from None
        if shutil.which("runuser") is None:
            raise PostgresUnavailable(
                "PostgreSQL cannot run as root and `runuser` (Debian package util-linux) is missing to run it"
                f" as {SYSTEM_USER!r}: tests needing a PostgreSQL server are skipped"
            )
        self.run_as = SYSTEM_USER

    def _command(self, *args: str) -> list[str]:
        if self.run_as is None:
            return list(args)
        return ["runuser", "-u", self.run_as, "--", *args]

    def _run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        command = self._command(*args)
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, cwd=self.folder
        )
        if result.returncode != 0:
            log = self.logfile.read_text(errors="replace")[-3000:] if self.logfile.exists() else ""
            raise RuntimeError(
                f"{' '.join(command)} exited {result.returncode}:\n{result.stdout[-2000:]}"
                f"\n{result.stderr[-2000:]}\n{log}"
            )
        return result

    def _make_folder(self) -> Path:
        """A new folder under /tmp, owned by the user the server runs as (/tmp itself is world-traversable;
        pytest's own temp folders are not: 0700 root)."""
        parent = Path("/tmp") if self.run_as is not None else Path(tempfile.gettempdir())
        folder = Path(tempfile.mkdtemp(prefix="topicstreams-pg-", dir=parent))
        if self.run_as is not None:
            account = pwd.getpwnam(self.run_as)
            os.chown(folder, account.pw_uid, account.pw_gid)
            folder.chmod(0o700)
        return folder

    # -- life cycle --------------------------------------------------------------------------------------------

    def start(self) -> Self:
        """initdb a new cluster and start it on a free port; returns self once it accepts connections."""
        if self._running or self.folder is not None:
            return self
        self.check_available()
        self.folder = self._make_folder()
        atexit.register(self.stop)
        try:
            initdb = self.bindir / "initdb"
            self._run(
                str(initdb),
                "-D",
                str(self.datadir),
                "-U",
                SUPERUSER,
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            )
            self.version = self._run(str(self.bindir / "postgres"), "--version").stdout.strip()
            self._start_on_a_free_port()
        except BaseException:
            self.stop()
            raise
        logger.info("Started %s on %s:%s in %s", self.version, self.host, self.port, self.folder)
        return self

    def _start_on_a_free_port(self, attempts: int = 3) -> None:
        """``pg_ctl start`` on a port free a moment ago; another process may take it first, so try again."""
        for attempt in range(1, attempts + 1):
            self.port = free_port(self.host)
            options = " ".join(
                [
                    f"-p {self.port}",
                    f"-k {self.folder}",
                    *(f"-c {name}={value}" for name, value in self.settings.items()),
                ]
            )
            try:
                self._run(
                    str(self.bindir / "pg_ctl"),
                    "-D",
                    str(self.datadir),
                    "-l",
                    str(self.logfile),
                    "-o",
                    options,
                    "-t",
                    str(START_TIMEOUT),
                    "-w",
                    "start",
                    timeout=START_TIMEOUT + 30,
                )
            except RuntimeError:
                if attempt == attempts:
                    raise
                logger.warning("PostgreSQL did not start on port %s; trying another port", self.port)
                continue
            self._running = True
            return

    def halt(self) -> None:
        """Shut the server down (fast: open connections are closed), keeping its data and port: an outage, ended by
        :meth:`resume`."""
        assert self._running and self.folder is not None, "the server is not running"
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "-m", "fast", "-w", "stop")
        self._running = False

    def resume(self) -> None:
        """Start the halted server again, on the same port, with its data."""
        assert not self._running and self.folder is not None, "the server is not halted"
        options = " ".join(
            [f"-p {self.port}", f"-k {self.folder}", *(f"-c {name}={value}" for name, value in self.settings.items())]
        )
        self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(self.datadir),
            "-l",
            str(self.logfile),
            "-o",
            options,
            "-t",
            str(START_TIMEOUT),
            "-w",
            "start",
            timeout=START_TIMEOUT + 30,
        )
        self._running = True

    def stop(self) -> None:
        """Stop the server (fast shutdown: open connections are closed) and remove its folder. Idempotent."""
        folder, self.folder = self.folder, None
        if folder is None:
            return
        try:
            if (folder / "data" / "postmaster.pid").exists():  # also after a start that failed half-way
                subprocess.run(
                    self._command(str(self.bindir / "pg_ctl"), "-D", str(folder / "data"), "-m", "fast", "-w", "stop"),
                    capture_output=True,
                    text=True,
                    timeout=120,
                    stdin=subprocess.DEVNULL,
                    cwd=folder,
                )
        finally:
            self._running = False
            shutil.rmtree(folder, ignore_errors=True)
            atexit.unregister(self.stop)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- databases ---------------------------------------------------------------------------------------------

    def url(self, dbname: str) -> str:
        """The SQLAlchemy URL (driver psycopg 3) of the database *dbname* on this server."""
        return f"postgresql+psycopg://{self.user}@{self.host}:{self.port}/{dbname}"

    def janitor(self, dbname: str, template: str | None = None):
        """pytest-postgresql's DatabaseJanitor for *dbname* on this server (``init()`` creates, ``drop()`` drops;
        *template*: a database to clone)."""
        from pytest_postgresql.janitor import DatabaseJanitor

        return DatabaseJanitor(
            user=self.user,
            password=self.password,
            host=self.host,
            port=self.port,
            dbname=dbname,
            template_dbname=template,
            maintenance_dbname=self.maintenance_dbname,
            connection_timeout=30,
        )

    def create_database(self, dbname: str, template: str | None = None) -> str:
        """Create the empty database *dbname* (a copy of *template* if given); returns its URL."""
        self.janitor(dbname, template).init()
        return self.url(dbname)

    def drop_database(self, dbname: str) -> None:
        """Drop *dbname* if it exists, closing the connections still open to it (other processes' too)."""
        self.janitor(dbname).drop()

    def databases(self) -> list[str]:
        """The names of the databases on the server, templates left out."""
        with self.janitor(self.maintenance_dbname).cursor() as cursor:
            cursor.execute("SELECT datname FROM pg_database WHERE NOT datistemplate ORDER BY datname")
            return [row[0] for row in cursor.fetchall()]


def main() -> None:
    """Run a server until Ctrl-C, printing its URL (for benchmarks and manual tries)."""
    import argparse
    import signal

    parser = argparse.ArgumentParser(prog="python -m tests.support.postgres_server", description=main.__doc__)
    parser.add_argument("--database", default="topicstreams", help="a database to create (default topicstreams)")
    parser.add_argument(
        "--durable",
        action="store_true",
        help="fsync, synchronous commit and full-page writes on, as a production server runs",
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    durable = {"fsync": "on", "synchronous_commit": "on", "full_page_writes": "on"} if args.durable else {}
    with PostgresServer(settings=durable) as server:
        print(server.create_database(args.database), flush=True)
        signal.signal(signal.SIGTERM, signal.default_int_handler)  # a kill stops the server too
        with contextlib.suppress(KeyboardInterrupt):
            signal.pause()


if __name__ == "__main__":
    main()
