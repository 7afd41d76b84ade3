"""The backfill's SQLite database: resource tables, job state and checkpoints. No network.

A table per resource (``fixtures``, ``actions``, ``statistics``) keeps a few key columns and
the record's wire JSON (``json``), with a primary key so that writing a record again
replaces it. Work is written in *units* (a page of fixtures, the actions of one fixture,
its statistics): a unit's rows and its checkpoint go in one transaction, so after a crash
a unit is either wholly there and checkpointed, or not there at all.

A *job* is one backfill scope (``Scope.key`` in :mod:`asyncsports.backfill`). ``jobs`` says
whether its last run finished; ``checkpoints`` lists the units done by the current run;
``job_fixtures`` lists the fixtures the job's listings returned, so that a resumed run
knows which fixtures' actions and statistics it still owes without listing them again.

A :class:`Sink` is one ``sqlite3`` connection: use it from one thread only, except
:meth:`Sink.interrupt`, which another thread calls to abort what it is doing.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import shutil
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar, cast

from asyncsports.errors import SinkError
from asyncsports.store._schema import (
    ALL_TABLES,
    RESOURCE_TABLES,
    SCHEMA_VERSION,
    sqlite_ddl,
    sqlite_upsert,
)
from asyncsports.store._types import JobState, Unit

__all__ = [
    "APPLICATION_ID",
    "SCHEMA_VERSION",
    "TABLES",
    "Sink",
    "SinkError",
    "Transaction",
    "connect",
    "storage_error",
]

# Columns of each resource table (asyncsports.store._schema describes them for every engine);
# the first ones named in KEYS form the primary key.
TABLES: dict[str, tuple[str, ...]] = {t.name: t.names for t in RESOURCE_TABLES}
KEYS: dict[str, tuple[str, ...]] = {t.name: t.key for t in RESOURCE_TABLES}

_SCHEMA = sqlite_ddl()
_OLD_MIRROR = "mirror"  # a mirror's file before version 2 kept its version in this table
APPLICATION_ID = 0x41535350
"""``PRAGMA application_id`` of our files ("ASSP"): what tells them from another
application's, whatever tables and ``user_version`` that one has."""
# Files written before the application id: a layout is ours when every one of its tables
# is there (tables the user added beside them are kept).
_LAYOUTS: dict[int, frozenset[str]] = {
    0: frozenset({"fixtures", "actions", "statistics", "changes", "cursors", "marks",
                  "positions", _OLD_MIRROR}),  # the mirror's, before version 2
    1: frozenset({"fixtures", "actions", "statistics", "jobs", "checkpoints", "job_fixtures"}),
    2: frozenset(t.name for t in ALL_TABLES),
}  # fmt: skip

# SQLite's primary result codes (sqlite3.h) that say what the user has to do.
_IOERR, _CORRUPT, _FULL, _NOTADB = 10, 11, 13, 26


def storage_error(path: Path, exc: sqlite3.Error, verb: str = "use") -> SinkError:
    """The SinkError for SQLite's ``exc`` on ``path``: a damaged file and a full disk say
    so and what to do; anything else gives SQLite's words."""
    code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
    if code == _CORRUPT:
        why = (
            f"the file is damaged ({exc}): restore it from a backup, or use another --db "
            f"(sqlite3 {path} .recover may save what is left)"
        )
    elif code == _NOTADB:
        why = "it is not an SQLite database, or its first page is damaged: use another --db"
    elif code == _FULL or (code == _IOERR and _no_space(path)):
        # An I/O error on a disk with no space left: the -shm file (SQLite maps it)
        # could not grow, which SQLite reports as an I/O error, not as a full disk.
        verb = "write"
        why = (
            f"the disk is full ({exc}); what was being written is rolled back and the "
            "database is intact: free some space (or use another --db) and run the "
            "command again: it carries on from what is committed"
        )
    elif code == _IOERR:
        why = f"{exc} ({getattr(exc, 'sqlite_errorname', 'SQLITE_IOERR')})"
    else:
        why = str(exc)
    return SinkError(f"cannot {verb} {path}: {why}")


def _no_space(path: Path) -> bool:
    try:
        return shutil.disk_usage(path.absolute().parent).free < 1 << 20
    except OSError:
        return False


_M = TypeVar("_M", bound=Callable[..., Any])


def _naming(method: _M) -> _M:
    """``method`` of a cursor, with every sqlite3 error a SinkError naming the file."""

    @functools.wraps(method)
    def named(self: _Cursor, *args: Any) -> Any:
        try:
            return method(self, *args)
        except sqlite3.Error as exc:
            raise storage_error(cast(_Connection, self.connection).path, exc) from exc

    return cast(_M, named)


class _Cursor(sqlite3.Cursor):
    """A cursor whose every error is a SinkError naming the file (see :func:`connect`).

    Rows after the first are read as they are fetched: a damaged page further on fails
    in the fetches and the iteration, so they are named too."""

    execute = _naming(sqlite3.Cursor.execute)
    executemany = _naming(sqlite3.Cursor.executemany)
    executescript = _naming(sqlite3.Cursor.executescript)
    fetchone = _naming(sqlite3.Cursor.fetchone)
    fetchmany = _naming(sqlite3.Cursor.fetchmany)
    fetchall = _naming(sqlite3.Cursor.fetchall)
    __next__ = _naming(sqlite3.Cursor.__next__)


class _Connection(sqlite3.Connection):
    """A connection to ``path`` whose statements go through :class:`_Cursor`."""

    path: Path

    # Cursor.execute called as a function, not through _Cursor's own: the mirror makes
    # a few statements a row, and a frame less each counts.
    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return _EXECUTE(self.cursor(_Cursor), sql, parameters)
        except sqlite3.Error as exc:
            raise storage_error(self.path, exc) from exc

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        try:
            return _EXECUTEMANY(self.cursor(_Cursor), sql, parameters)
        except sqlite3.Error as exc:
            raise storage_error(self.path, exc) from exc

    def executescript(self, sql_script: str, /) -> sqlite3.Cursor:
        try:
            return _EXECUTESCRIPT(self.cursor(_Cursor), sql_script)
        except sqlite3.Error as exc:
            raise storage_error(self.path, exc) from exc


_EXECUTE = sqlite3.Cursor.execute
_EXECUTEMANY = sqlite3.Cursor.executemany
_EXECUTESCRIPT = sqlite3.Cursor.executescript


def connect(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
    """Open (or create) the store's database at ``path``: checked, migrated, ready.

    A file that is not ours (another application's, or not SQLite at all), or one written
    by a newer asyncsports, is refused (SinkError) before anything is written to it. A
    file of an older version is brought to :data:`SCHEMA_VERSION` (its tables are kept;
    the missing ones are created). ``readonly``: a file that must exist, checked the same
    way, and never written to (the export).

    Every error of the connection, then, is a SinkError naming the file, saying so when
    the file is damaged or the disk full (:func:`storage_error`). The connection is in
    autocommit mode (transactions are explicit) and may be handed from thread to thread,
    one at a time.
    """
    path = Path(path)
    if readonly and not path.is_file():
        raise SinkError(f"cannot read {path}: there is no such file")
    try:
        db = sqlite3.connect(
            path, isolation_level=None, check_same_thread=False, factory=_Connection
        )
    except sqlite3.Error as exc:
        raise SinkError(f"cannot open {path}: {exc}") from exc
    db.path = path
    try:
        db.execute("PRAGMA busy_timeout = 5000")
        # One read transaction: another connection may be creating the file this moment
        # (the mirror and its change feed), and a version read before its commit beside
        # tables read after it would look like another application's file.
        db.execute("BEGIN")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        app = db.execute("PRAGMA application_id").fetchone()[0]
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
        db.execute("COMMIT")
        names = {n for n in names if not n.startswith("sqlite_")}
        _check(path, version, app, names)
        if readonly:
            if not names:
                raise SinkError(f"cannot read {path}: it holds no asyncsports tables")
            # Not SQLite's mode=ro: a read-only connection cannot remove the -wal and -shm
            # files it makes beside a WAL file, and would leave them there.
            db.execute("PRAGMA query_only = 1")
            return db
        # 16 KiB pages: a record's JSON (about 1.3 kB an action) packs several to a page;
        # set before the first table, a no-op on an existing file. A 64 MiB cache keeps the
        # primary-key indexes in memory as the tables grow. Together they halve the CPU
        # time of writing a backfill (benchmarks/README.md).
        if not names:
            db.execute("PRAGMA page_size = 16384")
        db.execute("PRAGMA cache_size = -65536")
        _setup(db, drop_old_mirror=_OLD_MIRROR in names)
    except BaseException:
        db.close()
        raise
    return db


def _check(path: Path, version: int, app: int, names: set[str]) -> None:
    layout = _LAYOUTS.get(version)
    new = not names and version == 0
    ours = app == APPLICATION_ID or (app == 0 and (new or (layout is not None and layout <= names)))
    if not ours:
        held = f"tables of its own: {', '.join(sorted(names)[:5])}" if names else "no tables"
        mark = f"application id {app:#x}, " if app else ""
        raise SinkError(
            f"{path} is not an asyncsports database ({mark}{held}, user_version {version}): "
            "use another --db"
        )
    if version > SCHEMA_VERSION:
        raise SinkError(
            f"{path} has schema version {version}, written by a newer asyncsports (this one "
            f"reads {SCHEMA_VERSION} and older): upgrade asyncsports, or use another --db"
        )


def _setup(db: sqlite3.Connection, *, drop_old_mirror: bool) -> None:
    # Two connections opening a new file at once (the mirror and its change feed):
    # switching to WAL does not wait for the other's lock, so try again a while.
    for attempt in range(50):
        try:
            # WAL: readers (the change feed, sqlite3, pandas) read while a writer writes,
            # and a committed transaction survives the process being killed.
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            script = _SCHEMA + f"PRAGMA application_id = {APPLICATION_ID};\n"
            if drop_old_mirror:
                script += f"DROP TABLE IF EXISTS {_OLD_MIRROR};\n"
            db.executescript(f"BEGIN IMMEDIATE;\n{script}COMMIT;\n")
            return
        except SinkError as exc:
            if db.in_transaction:
                with contextlib.suppress(SinkError):  # as in Transaction: keep the cause
                    db.execute("ROLLBACK")
            locked = isinstance(exc.__cause__, sqlite3.OperationalError) and "locked" in str(
                exc.__cause__
            )
            if not locked or attempt == 49:
                raise
            time.sleep(0.1)


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


_UPSERT = {t.name: sqlite_upsert(t) for t in RESOURCE_TABLES}


class Sink:
    """An open backfill database. Create, use and close it on one thread (interrupt it
    from any)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._closing = threading.Lock()  # interrupt() never touches a closed connection
        self._closed = False
        self._interrupted = False
        self._db = connect(self.path)
        # interrupt() holds for every statement after it: sqlite3_interrupt aborts only
        # the step running, and executemany's rows are steps of their own.
        self._db.set_progress_handler(lambda: self._interrupted, 1000)

    def close(self) -> None:
        """Close the connection (an unfinished transaction is rolled back)."""
        with self._closing:
            self._closed = True
            self._db.close()

    def interrupt(self) -> None:
        """Abort the statement running now, if any; callable from any thread.

        The statement fails, and every later one (its transaction rolls back: SinkError
        in the thread using the sink), so what is committed is exactly what was before.
        """
        with self._closing:
            if not self._closed:
                self._interrupted = True
                self._db.interrupt()

    def start(self, job: str, *, restart: bool = False) -> JobState:
        """Begin a run of ``job``: resume its unfinished run, else start it afresh.

        A fresh start (the job is new, its last run finished, or ``restart``) forgets the
        job's checkpoints; rows stay and are overwritten as the run writes them again.
        """
        row = self._db.execute("SELECT finished_at FROM jobs WHERE job = ?", (job,)).fetchone()
        if row is not None and row[0] is None and not restart:
            done = frozenset(
                r[0] for r in self._db.execute("SELECT unit FROM checkpoints WHERE job = ?", (job,))
            )
            fixtures = [
                (r[0], r[1], r[2], bool(r[3]))
                for r in self._db.execute(
                    "SELECT f.id, f.sport, f.status, f.deleted FROM job_fixtures j "
                    "JOIN fixtures f ON f.id = j.fixture_id WHERE j.job = ? ORDER BY j.rowid",
                    (job,),
                )
            ]
            return JobState(resumed=True, done=done, fixtures=fixtures)
        with self._transaction():
            self._db.execute("DELETE FROM checkpoints WHERE job = ?", (job,))
            self._db.execute("DELETE FROM job_fixtures WHERE job = ?", (job,))
            self._db.execute(
                "INSERT INTO jobs (job, started_at, finished_at) VALUES (?, ?, NULL) "
                "ON CONFLICT (job) DO UPDATE SET started_at = excluded.started_at, "
                "finished_at = NULL",
                (job, _now()),
            )
        return JobState(resumed=False)

    def write(self, job: str, units: Iterable[Unit]) -> int:
        """Write units and their checkpoints in one transaction; returns the rows written."""
        written = 0
        now = _now()
        with self._transaction():
            for unit in units:
                if unit.replace is not None:
                    self._db.execute(
                        f"DELETE FROM {unit.table} WHERE {KEYS[unit.table][0]} = ?",
                        (unit.replace,),
                    )
                if unit.rows:
                    self._db.executemany(_UPSERT[unit.table], unit.rows)
                    written += len(unit.rows)
                if unit.members:
                    self._db.executemany(
                        "INSERT OR IGNORE INTO job_fixtures (job, fixture_id) VALUES (?, ?)",
                        [(job, m) for m in unit.members],
                    )
                self._db.execute(
                    "INSERT INTO checkpoints (job, unit, rows, done_at) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (job, unit) DO UPDATE SET rows = excluded.rows, "
                    "done_at = excluded.done_at",
                    (job, unit.name, len(unit.rows), now),
                )
        return written

    def finish(self, job: str) -> None:
        """Mark the job's run finished: the next run of it starts afresh."""
        with self._transaction():
            self._db.execute("UPDATE jobs SET finished_at = ? WHERE job = ?", (_now(), job))

    def counts(self) -> dict[str, int]:
        """Rows per resource table."""
        return {t: self._db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}

    def _transaction(self) -> Transaction:
        return Transaction(self._db, self.path)


class Transaction:
    """BEGIN IMMEDIATE ... COMMIT, or ROLLBACK on any exception.

    SQLite's errors come out as SinkError naming the file (:func:`storage_error`): a
    locked database (another backfill writing it), a full disk or a read-only file are
    the user's to fix. SQLite rolls a transaction back itself on some errors (a full
    disk); the error then is the one raised, not the ROLLBACK's finding nothing to undo.
    """

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self._db = db
        self._path = path

    def __enter__(self) -> None:
        # IMMEDIATE takes the write lock now, so a second writer on the same file
        # waits (busy timeout) or fails here instead of halfway through.
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except SinkError as exc:
            raise self._again(exc) from exc.__cause__

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object
    ) -> None:
        if exc_type is None:
            try:
                self._db.execute("COMMIT")
                return
            except SinkError as error:
                exc = error
        if self._db.in_transaction:
            # A ROLLBACK that fails (the disk gone) must not hide why we got here; the
            # connection's close undoes what is left.
            with contextlib.suppress(SinkError):
                self._db.execute("ROLLBACK")
        if isinstance(exc, SinkError) and isinstance(exc.__cause__, sqlite3.Error):
            raise self._again(exc) from exc.__cause__
        if exc_type is None and exc is not None:
            raise exc

    def _again(self, exc: SinkError) -> SinkError:
        """``exc`` (SQLite's, from a statement) as an error writing the file."""
        assert isinstance(exc.__cause__, sqlite3.Error)
        return storage_error(self._path, exc.__cause__, "write")
