"""PostgreSQL + PostGIS for rendering: a private cluster cartoqa runs itself, or a given DSN.

One database per extract, named by its hash, imported with osm2pgsql and the
openstreetmap-carto tag transform, and reused while the hash matches.  The
tables carto reads for external data (ocean, ice, country borders) are made
too: the ocean from the extract's own coastline (``maps.coastline``), the
others empty.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import pwd
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cartoqa.errors import DatabaseError
from cartoqa.settings import pg_dir, pg_dsn, running_as_root

from .extracts import Extract

__all__ = [
    "CARTO_DIR",
    "ExtractDatabase",
    "PostgresCluster",
    "database_answers",
    "ensure_database",
    "lost_database",
]

log = logging.getLogger(__name__)

CARTO_DIR = Path("/usr/share/openstreetmap-carto-common")
_PG_BIN_DIRS = sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
_IMPORT_VERSION = 2  # bump when the import changes, so databases are made again
_APT_HINT = "run 'bash scripts/setup.sh main' (Debian packages postgresql, postgis, osm2pgsql)"


def _pg_bin(name: str) -> str:
    for d in _PG_BIN_DIRS:
        if (d / name).exists():
            return str(d / name)
    found = shutil.which(name)
    if found:
        return found
    raise DatabaseError(f"PostgreSQL's {name} is not installed; {_APT_HINT}")


@dataclass(frozen=True)
class Connection:
    """How to reach one database: libpq keywords, usable by psycopg, osm2pgsql and Mapnik."""

    dbname: str
    host: str
    port: int
    user: str

    def conninfo(self) -> str:
        return f"dbname={self.dbname} host={self.host} port={self.port} user={self.user}"


#: lines of server.log quoted in an error when the server does not start
LOG_LINES = 12


class PostgresCluster:
    """A private PostgreSQL cluster in one folder, reached through a unix socket there.

    PostgreSQL will not run as root; as root, cartoqa runs the server as the
    ``postgres`` user, which must be able to reach the folder.  ``start`` and
    ``stop`` hold an exclusive lock on ``<folder>/cluster.lock`` (``flock``), so two
    processes starting a stopped cluster at once both succeed: the second waits
    and finds it running.  The server logs to ``<folder>/server.log``; when it will
    not start, the error names that file and quotes what it wrote.
    """

    def __init__(self, folder: Path | None = None, *, port: int = 5432) -> None:
        self.folder = Path(folder or pg_dir()).absolute()
        self.data = self.folder / "data"
        self.socket_dir = self.folder / "run"
        self.port = port
        self.user = "postgres" if running_as_root() else pwd.getpwuid(os.getuid()).pw_name
        self.log_file = self.folder / "server.log"
        self.lock_file = self.folder / "cluster.lock"

    # a command as the cluster's owner
    def _as_owner(self, args: list[str]) -> list[str]:
        if running_as_root():
            return ["runuser", "-u", "postgres", "--", *args]
        return args

    def _run(self, args: list[str], what: str) -> str:
        proc = subprocess.run(self._as_owner(args), capture_output=True, text=True)
        if proc.returncode != 0:
            raise DatabaseError(
                f"{what} failed ({' '.join(args[:2])}): {proc.stderr.strip()[-800:]}"
            )
        return proc.stdout

    def is_running(self) -> bool:
        if not (self.data / "PG_VERSION").exists():
            return False
        proc = subprocess.run(
            self._as_owner([_pg_bin("pg_ctl"), "status", "-D", str(self.data)]),
            capture_output=True,
            text=True,
        )
        return proc.returncode == 0

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Held while the cluster is made, started or stopped: one process at a time."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            lock = open(self.lock_file, "a")  # noqa: SIM115 - held for the block
        except OSError as exc:
            raise DatabaseError(
                f"cannot make the private PostgreSQL cluster's folder {self.folder}: "
                f"{exc.strerror}; set CARTOQA_PG_DIR to a folder you can write, or give a "
                "server with --dsn / CARTOQA_DSN"
            ) from None
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def start(self) -> PostgresCluster:
        """Create the cluster if needed and start it; a no-op when it runs already.

        Serialised across processes by ``cluster.lock``: a second caller waits for the
        first and then finds the server running.
        """
        if self.is_running():
            return self
        with self._locked():
            if not self.is_running():
                self._start_locked()
        return self

    def _start_locked(self) -> None:
        self.socket_dir.mkdir(parents=True, exist_ok=True)
        if running_as_root():
            try:
                pw = pwd.getpwnam("postgres")
            except KeyError:
                raise DatabaseError(
                    f"there is no 'postgres' user to run the server as; {_APT_HINT}"
                ) from None
            for p in (self.folder, self.socket_dir):
                os.chown(p, pw.pw_uid, pw.pw_gid)
            if self.data.exists():
                os.chown(self.data, pw.pw_uid, pw.pw_gid)
        if not (self.data / "PG_VERSION").exists():
            log.info("creating a private PostgreSQL cluster in %s", self.data)
            self._run(
                [
                    _pg_bin("initdb"),
                    "-D",
                    str(self.data),
                    "--auth=trust",
                    "-U",
                    self.user,
                    "-E",
                    "UTF8",
                    "--locale=C",
                ],
                "initdb",
            )
        opts = (
            f"-c listen_addresses='' -c unix_socket_directories='{self.socket_dir}' "
            f"-p {self.port} -c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            "-c max_connections=40 -c shared_buffers=128MB -c work_mem=32MB"
        )
        log_start = self.log_file.stat().st_size if self.log_file.is_file() else 0
        args = [
            _pg_bin("pg_ctl"),
            "start",
            "-w",
            "-t",
            "60",
            "-D",
            str(self.data),
            "-l",
            str(self.log_file),
            "-o",
            opts,
        ]
        proc = subprocess.run(self._as_owner(args), capture_output=True, text=True)
        if proc.returncode != 0:
            said = " ".join((proc.stderr or proc.stdout).split())[-400:]
            said = said.removeprefix("pg_ctl: ").replace(" Examine the log output.", "")
            raise DatabaseError(
                f"PostgreSQL did not start in {self.data} (pg_ctl: {said}). "
                f"Its log {self.log_file} says:\n{self.log_tail(since=log_start)}\n"
                "Fix what the log names, or delete the folder ('cartoqa maps db --drop') to "
                "make a fresh cluster on the next run"
            )

    def log_tail(self, lines: int = LOG_LINES, *, since: int = 0) -> str:
        """The last ``lines`` lines of server.log written after byte ``since`` (all of the file's
        last lines when nothing was written since), indented; a note when there is no log."""
        try:
            with open(self.log_file, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                start = since if 0 < since < size else 0
                f.seek(max(start, size - 64_000))
                text = f.read().decode("utf-8", "replace")
        except OSError as exc:
            return f"    (no log: {exc.strerror})"
        tail = [line for line in text.splitlines() if line.strip()][-lines:]
        return "\n".join(f"    {line}" for line in tail) if tail else "    (the log is empty)"

    def stop(self) -> None:
        """Stop the server (fast: open connections are ended); a no-op when it is stopped."""
        if not self.is_running():
            return
        with self._locked():
            if self.is_running():
                self._run(
                    [_pg_bin("pg_ctl"), "stop", "-m", "fast", "-w", "-D", str(self.data)],
                    "stopping PostgreSQL",
                )

    def connection(self, dbname: str) -> Connection:
        return Connection(dbname=dbname, host=str(self.socket_dir), port=self.port, user=self.user)


def _parse_dsn(dsn: str, dbname: str) -> Connection:
    from psycopg.conninfo import conninfo_to_dict

    d = conninfo_to_dict(dsn)
    return Connection(
        dbname=dbname,
        host=str(d.get("host") or "localhost"),
        port=int(d.get("port") or 5432),
        user=str(d.get("user") or os.environ.get("PGUSER") or pwd.getpwuid(os.getuid()).pw_name),
    )


@dataclass(frozen=True)
class ExtractDatabase:
    """A database holding one imported extract."""

    extract: Extract
    connection: Connection
    imported_now: bool
    """True when this call ran the import; False when an earlier import was reused."""


@contextlib.contextmanager
def _connect(conn: Connection, *, autocommit: bool = True) -> Iterator[object]:
    import psycopg

    try:
        c = psycopg.connect(conn.conninfo(), autocommit=autocommit, connect_timeout=10)
    except psycopg.OperationalError as exc:
        raise DatabaseError(f"cannot connect to {conn.conninfo()}: {str(exc).strip()}") from None
    try:
        yield c
    finally:
        c.close()


def ensure_database(
    extract: Extract,
    *,
    cluster: PostgresCluster | None = None,
    dsn: str | None = None,
) -> ExtractDatabase:
    """The database for ``extract``: imported now, or reused when its hash matches.

    With ``dsn`` (or CARTOQA_DSN) that server is used; otherwise the private
    cluster is started.  Safe when two processes ask at once: they take an
    advisory lock, and the second finds the first one's import.
    """
    import psycopg

    dsn = dsn or pg_dsn()
    dbname = f"cartoqa_{extract.sha256[:16]}"
    if dsn:
        admin = _parse_dsn(dsn, "postgres")
    else:
        cluster = (cluster or PostgresCluster()).start()
        admin = cluster.connection("postgres")
    conn = Connection(dbname, admin.host, admin.port, admin.user)
    with _connect(admin) as a:
        a.execute("SELECT pg_advisory_lock(hashtext(%s))", (dbname,))  # type: ignore[attr-defined]
        try:
            if _is_ready(conn, extract):
                return ExtractDatabase(extract, conn, imported_now=False)
            a.execute(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)')  # type: ignore[attr-defined]
            a.execute(f'CREATE DATABASE "{dbname}"')  # type: ignore[attr-defined]
            _import(conn, extract)
            return ExtractDatabase(extract, conn, imported_now=True)
        except psycopg.Error as exc:
            raise DatabaseError(f"preparing database {dbname} failed: {str(exc).strip()}") from None
        finally:
            a.execute("SELECT pg_advisory_unlock(hashtext(%s))", (dbname,))  # type: ignore[attr-defined]


def database_answers(conn: Connection, *, timeout_s: int = 3) -> str | None:
    """None when the database at ``conn`` answers a query now; else why not, in psycopg's words.

    For telling a lost database from other failures of a renderer: a refused or missing
    socket answers at once, an unreachable host within ``timeout_s``.
    """
    import psycopg

    try:
        with psycopg.connect(conn.conninfo(), autocommit=True, connect_timeout=timeout_s) as c:
            c.execute("SELECT 1")
    except psycopg.Error as exc:
        return " ".join(str(exc).split())[:300] or type(exc).__name__
    return None


def lost_database(conn: Connection, *, during: str) -> DatabaseError | None:
    """The error to raise when the database at ``conn`` stopped answering (checked now), or None
    when it answers (the failure that made the caller ask was something else)."""
    why = database_answers(conn)
    if why is None:
        return None
    return DatabaseError(
        f"the database at {conn.conninfo()} stopped answering while {during} ({why}). "
        "If it is cartoqa's private cluster it was stopped ('cartoqa maps db --stop') or its "
        "server died: rerun the command, which starts it again ('cartoqa maps db' shows it); "
        "for a server given with --dsn or CARTOQA_DSN, start that server, then rerun"
    )


def query_rows(
    conn: Connection, sql: str, params: Any = None, *, during: str, what: str
) -> list[Any]:
    """The rows of one query on the extract's database.  A failed connection or query raises
    ``lost_database``'s error when the database stopped answering (``during``: what was
    under way), else a ``DatabaseError`` saying ``what`` failed ("reading road names")."""
    import psycopg

    try:
        with psycopg.connect(conn.conninfo(), connect_timeout=10) as c:
            return list(c.execute(sql, params))
    except psycopg.OperationalError as exc:
        lost = lost_database(conn, during=during)
        raise lost or DatabaseError(f"{what} from {conn.conninfo()}: {exc}") from None


def _is_ready(conn: Connection, extract: Extract) -> bool:
    import psycopg

    try:
        with _connect(conn) as c:
            row = c.execute(  # type: ignore[attr-defined]
                "SELECT sha256, import_version FROM cartoqa_import LIMIT 1"
            ).fetchone()
    except (DatabaseError, psycopg.Error):
        return False
    return row is not None and row[0] == extract.sha256 and row[1] == _IMPORT_VERSION


_EXTERNAL_TABLES = """
CREATE TABLE IF NOT EXISTS water_polygons (way geometry(MultiPolygon, 3857));
CREATE TABLE IF NOT EXISTS simplified_water_polygons (way geometry(MultiPolygon, 3857));
CREATE TABLE IF NOT EXISTS icesheet_polygons (way geometry(MultiPolygon, 3857));
CREATE TABLE IF NOT EXISTS icesheet_outlines (way geometry(LineString, 3857), ice_edge text);
CREATE TABLE IF NOT EXISTS ne_110m_admin_0_boundary_lines_land
    (way geometry(MultiLineString, 3857));
CREATE INDEX IF NOT EXISTS water_polygons_way ON water_polygons USING gist (way);
"""


def _ending_with_this_process(cmd: list[str]) -> list[str]:
    """``cmd`` run so that it ends with this process (issue 27, item 10): util-linux's
    ``setpriv --pdeathsig KILL`` makes Linux send the child SIGKILL when the thread that
    started it ends, however this process ends (a kill, SIGTERM, a crash), so an import does
    not run on alone (an interrupt that Python sees ends it anyway: ``subprocess.run`` kills
    its child on the way out). Without setpriv (not Linux) ``cmd`` as it is."""
    setpriv = shutil.which("setpriv") if sys.platform.startswith("linux") else None
    return [setpriv, "--pdeathsig", "KILL", "--", *cmd] if setpriv else cmd


def _import(conn: Connection, extract: Extract) -> None:
    from .coastline import sea_polygons_wkb

    t0 = time.perf_counter()
    with _connect(conn) as c:
        c.execute("CREATE EXTENSION IF NOT EXISTS postgis")  # type: ignore[attr-defined]
        c.execute("CREATE EXTENSION IF NOT EXISTS hstore")  # type: ignore[attr-defined]
    osm2pgsql = shutil.which("osm2pgsql")
    if osm2pgsql is None:
        raise DatabaseError(f"osm2pgsql is not installed; {_APT_HINT}")
    style = CARTO_DIR / "openstreetmap-carto.style"
    lua = CARTO_DIR / "openstreetmap-carto.lua"
    if not style.is_file():
        raise DatabaseError(
            f"{style} is missing; install Debian's openstreetmap-carto-common ({_APT_HINT})"
        )
    cmd = [
        osm2pgsql,
        "--create",
        "--slim",
        "--drop",
        "-G",
        "--hstore",
        "--number-processes",
        "2",
        "--cache",
        "256",
        "-S",
        str(style),
        "--tag-transform-script",
        str(lua),
        "-d",
        conn.dbname,
        "-H",
        conn.host,
        "-P",
        str(conn.port),
        "-U",
        conn.user,
        str(extract.path),
    ]
    proc = subprocess.run(_ending_with_this_process(cmd), capture_output=True, text=True)
    if proc.returncode != 0:
        raise DatabaseError(
            f"osm2pgsql could not import {extract.source.name}: {proc.stderr.strip()[-1500:]}"
        )
    indexes = (CARTO_DIR / "indexes.sql").read_text()
    sea = sea_polygons_wkb(extract)
    with _connect(conn, autocommit=False) as c:
        cur = c.cursor()  # type: ignore[attr-defined]
        cur.execute(indexes)
        cur.execute(_EXTERNAL_TABLES)
        for wkb in sea:
            cur.execute(
                "INSERT INTO water_polygons (way) VALUES "
                "(ST_Multi(ST_Transform(ST_SetSRID(ST_GeomFromWKB(%s), 4326), 3857)))",
                (wkb,),
            )
        cur.execute("INSERT INTO simplified_water_polygons SELECT way FROM water_polygons")
        cur.execute(
            "CREATE TABLE cartoqa_import (sha256 text, import_version int, name text, "
            "imported_at timestamptz DEFAULT now())"
        )
        cur.execute(
            "INSERT INTO cartoqa_import (sha256, import_version, name) VALUES (%s, %s, %s)",
            (extract.sha256, _IMPORT_VERSION, extract.name),
        )
        c.commit()  # type: ignore[attr-defined]
    log.info(
        "imported %s into %s in %.1f s (%d sea polygons)",
        extract.name,
        conn.dbname,
        time.perf_counter() - t0,
        len(sea),
    )
