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

import datetime as dt
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from asyncsports.errors import SinkError
from asyncsports.store._schema import (
    ALL_TABLES,
    RESOURCE_TABLES,
    SCHEMA_VERSION,
    sqlite_ddl,
    sqlite_upsert,
)

__all__ = [
    "SCHEMA_VERSION",
    "TABLES",
    "JobState",
    "Sink",
    "SinkError",
    "Transaction",
    "Unit",
    "connect",
]

# Columns of each resource table (asyncsports.store._schema describes them for every engine);
# the first ones named in KEYS form the primary key.
TABLES: dict[str, tuple[str, ...]] = {t.name: t.names for t in RESOURCE_TABLES}
KEYS: dict[str, tuple[str, ...]] = {t.name: t.key for t in RESOURCE_TABLES}

_SCHEMA = sqlite_ddl()
_OURS = {t.name for t in ALL_TABLES} | {i for t in ALL_TABLES for i, _ in t.indexes}
_OLD_MIRROR = "mirror"  # a mirror's file before version 2 kept its version in this table


def connect(path: Path) -> sqlite3.Connection:
    """Open (or create) the store's database at ``path``: checked, migrated, ready.

    A file of another application, or one written by a newer asyncsports, is refused
    (SinkError) before anything is written to it. A file of an older version is brought
    to :data:`SCHEMA_VERSION` (its tables are kept; the missing ones are created). The
    connection is in autocommit mode (transactions are explicit) and may be handed from
    thread to thread, one at a time.
    """
    try:
        db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise SinkError(f"cannot open {path}: {exc}") from exc
    try:
        db.execute("PRAGMA busy_timeout = 5000")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
        names = {n for n in names if not n.startswith("sqlite_")}
        _check(path, version, names)
        # 16 KiB pages: a record's JSON (about 1.3 kB an action) packs several to a page;
        # set before the first table, a no-op on an existing file. A 64 MiB cache keeps the
        # primary-key indexes in memory as the tables grow. Together they halve the CPU
        # time of writing a backfill (benchmarks/README.md).
        if not names:
            db.execute("PRAGMA page_size = 16384")
        db.execute("PRAGMA cache_size = -65536")
        _setup(db, drop_old_mirror=_OLD_MIRROR in names)
    except sqlite3.Error as exc:
        db.close()
        raise SinkError(f"cannot use {path}: {exc}") from exc
    except BaseException:
        db.close()
        raise
    return db


def _check(path: Path, version: int, names: set[str]) -> None:
    if version > SCHEMA_VERSION:
        raise SinkError(
            f"{path} has schema version {version}, written by a newer asyncsports (this one "
            f"reads {SCHEMA_VERSION} and older): upgrade asyncsports, or use another --db"
        )
    if version == 0 and names and not (names <= _OURS | {_OLD_MIRROR} and _OLD_MIRROR in names):
        raise SinkError(
            f"{path} is not an asyncsports database (it holds tables of its own: "
            f"{', '.join(sorted(names)[:5])}): use another --db"
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
            script = _SCHEMA + (f"DROP TABLE IF EXISTS {_OLD_MIRROR};\n" if drop_old_mirror else "")
            db.executescript(f"BEGIN IMMEDIATE;\n{script}COMMIT;\n")
            return
        except sqlite3.OperationalError as exc:
            if db.in_transaction:
                db.execute("ROLLBACK")
            if "locked" not in str(exc) or attempt == 49:
                raise
            time.sleep(0.1)


@dataclass(frozen=True, slots=True)
class Unit:
    """One checkpointed piece of work.

    ``rows`` go into ``table`` (upserted by primary key); with ``replace`` set to a fixture
    id, that fixture's earlier rows in ``table`` are deleted first, so the unit leaves
    exactly what the service returned. ``members`` are fixture ids to add to the job.
    A unit with no rows still records its checkpoint (a fixture without statistics).
    """

    name: str
    table: str
    rows: Sequence[tuple[Any, ...]] = ()
    replace: str | None = None
    members: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class JobState:
    """Where a job stands when a run starts.

    ``resumed`` is True when the job's last run did not finish; ``done`` then names its
    checkpointed units and ``fixtures`` lists ``(id, sport, status, deleted)`` of the
    fixtures its listings have returned so far. A fresh run gets empty ones.
    """

    resumed: bool
    done: frozenset[str] = frozenset()
    fixtures: Sequence[tuple[str, str, str | None, bool]] = field(default=())


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

    SQLite's errors come out as SinkError naming the file: a locked database (another
    backfill writing it), a full disk or a read-only file are the user's to fix.
    """

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self._db = db
        self._path = path

    def __enter__(self) -> None:
        # IMMEDIATE takes the write lock now, so a second writer on the same file
        # waits (busy timeout) or fails here instead of halfway through.
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise SinkError(f"cannot write {self._path}: {exc}") from exc

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object
    ) -> None:
        if exc_type is None:
            try:
                self._db.execute("COMMIT")
                return
            except sqlite3.Error as error:
                exc = error
        self._db.execute("ROLLBACK")
        if isinstance(exc, sqlite3.Error):
            raise SinkError(f"cannot write {self._path}: {exc}") from exc
