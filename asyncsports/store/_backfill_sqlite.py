"""The backfill's SQLite file: resource tables, job state and checkpoints. No network.

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
:class:`SqliteEngine` is the writer's engine on it.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

import asyncsports.store._sql as _sql
from asyncsports.store._schema import RESOURCE_TABLES
from asyncsports.store._sqlite import SqliteThread, Transaction, connect
from asyncsports.store._types import JobState, Unit

__all__ = ["KEYS", "TABLES", "Sink", "SqliteEngine"]

# Columns of each resource table (asyncsports.store._schema describes them for every engine);
# the first ones named in KEYS form the primary key.
TABLES: dict[str, tuple[str, ...]] = {t.name: t.names for t in RESOURCE_TABLES}
KEYS: dict[str, tuple[str, ...]] = {t.name: t.key for t in RESOURCE_TABLES}


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


_UPSERT = {t.name: _sql.upsert(t) for t in RESOURCE_TABLES}
_JOB_FIXTURES = _sql.JOB_FIXTURES.format(order="rowid")
_COUNTS = _sql.counts(TABLES)


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
        db = self._db
        row = db.execute(_sql.JOB_RUN, (job,)).fetchone()
        if row is not None and row[0] is None and not restart:
            done = frozenset(r[0] for r in db.execute(_sql.JOB_DONE, (job,)))
            fixtures = [(r[0], r[1], r[2], bool(r[3])) for r in db.execute(_JOB_FIXTURES, (job,))]
            return JobState(resumed=True, done=done, fixtures=fixtures)
        with self._transaction():
            for statement in _sql.JOB_FORGET:
                db.execute(statement, (job,))
            db.execute(_sql.JOB_BEGIN, (job, _now()))
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
                    self._db.executemany(_sql.JOB_MEMBER, [(job, m) for m in unit.members])
                self._db.execute(_sql.JOB_CHECKPOINT, (job, unit.name, len(unit.rows), now))
        return written

    def finish(self, job: str) -> None:
        """Mark the job's run finished: the next run of it starts afresh."""
        with self._transaction():
            self._db.execute(_sql.JOB_FINISH, (_now(), job))

    def counts(self) -> dict[str, int]:
        """Rows per resource table."""
        return dict(self._db.execute(_COUNTS).fetchall())

    def _transaction(self) -> Transaction:
        return Transaction(self._db, self.path)


class SqliteEngine:
    """The SQLite engine of the :class:`~asyncsports.store._writer.Writer`: a :class:`Sink`
    on a :class:`~asyncsports.store._sqlite.SqliteThread`, so the event loop never waits
    on SQLite. :meth:`abort` drops the calls queued and interrupts the statement running
    (its transaction rolls back); the thread closes the database itself, last."""

    def __init__(self, path: Path, job: str, *, restart: bool = False) -> None:
        self.path = Path(path)
        self.job = job
        self.restart = restart
        self._thread = SqliteThread(
            lambda: Sink(self.path), Sink.close, name="asyncsports-writer", interrupt=Sink.interrupt
        )

    async def open(self) -> JobState:
        return await self._thread.call(lambda sink: sink.start(self.job, restart=self.restart))

    async def write(self, batch: Sequence[Unit]) -> Sequence[Unit]:
        await self._thread.call(lambda sink: sink.write(self.job, batch))
        return batch

    async def finish(self) -> None:
        await self._thread.call(lambda sink: sink.finish(self.job))

    async def counts(self) -> dict[str, int]:
        return await self._thread.call(Sink.counts)

    async def close(self) -> None:
        await self._thread.close()

    def abort(self) -> None:
        self._thread.abort()
