"""The backfill's database, written once over a :class:`~asyncsports.store._dialect.Dialect`:
resource tables, job state and checkpoints.

A table per resource (``fixtures``, ``actions``, ``statistics``) keeps a few key columns and
the record's wire JSON (``json``), with a primary key so that writing a record again
replaces it. Work is written in *units* (a page of fixtures, the actions of one fixture,
its statistics): a batch of units, their rows and their checkpoints go in one
transaction, so after a crash a unit is either wholly there and checkpointed, or not
there at all.

A *job* is one backfill scope (``Scope.key`` in :mod:`asyncsports.backfill`). ``jobs`` says
whether its last run finished; ``checkpoints`` lists the units done by the current run;
``job_fixtures`` lists the fixtures the job's listings returned, so that a resumed run
knows which fixtures' actions and statistics it still owes without listing them again.

:class:`BackfillEngine` is the :class:`~asyncsports.store._writer.Writer`'s engine.
SQLite (:class:`~asyncsports.store.SqliteEngine`): on the connection's thread, so the event loop never
waits on SQLite; an abort interrupts the statement running (its transaction rolls back).
PostgreSQL (:class:`~asyncsports.store.PgEngine`): rows are COPYed into staging tables, then upserted; when
the database dies or restarts, the batch is written again on a new connection (it is
idempotent), for up to ``patience`` seconds, while the fetchers wait on the writer's
back pressure.
"""

from __future__ import annotations

from collections.abc import Sequence

import asyncsports.store._sql as _sql
from asyncsports.store._dialect import Dialect, Tx
from asyncsports.store._schema import RESOURCE_TABLES
from asyncsports.store._types import JobState, Row, Unit, now_text

__all__ = ["TABLES", "BackfillEngine", "finish", "start", "write"]

TABLES: dict[str, tuple[str, ...]] = {t.name: t.names for t in RESOURCE_TABLES}
"""The resource tables and their columns, in order."""

_TABLES = {t.name: t for t in RESOURCE_TABLES}
_MEMBERS, _CHECKPOINTS = _sql.TABLES["job_fixtures"], _sql.TABLES["checkpoints"]
_COUNTS = _sql.counts(_TABLES)


async def start(tx: Tx, job: str, restart: bool = False) -> JobState:
    """Begin a run of ``job``: resume its unfinished run, else start it afresh.

    A fresh start (the job is new, its last run finished, or ``restart``) forgets the
    job's checkpoints; rows stay and are overwritten as the run writes them again.
    """
    row = await tx.fetchrow(_sql.JOB_RUN, job)
    if row is not None and row[0] is None and not restart:
        done = frozenset(r[0] for r in await tx.fetch(_sql.JOB_DONE, job))
        listed = await tx.fetch(_sql.JOB_FIXTURES.format(order=tx.position), job)
        fixtures = [(r[0], r[1], r[2], bool(r[3])) for r in listed]
        return JobState(resumed=True, done=done, fixtures=fixtures)
    for statement in _sql.JOB_FORGET:
        await tx.execute(statement, job)
    await tx.execute(_sql.JOB_BEGIN, job, tx.now())
    return JobState(resumed=False)


async def write(tx: Tx, job: str, units: Sequence[Unit]) -> int:
    """Write ``units`` and their checkpoints; the rows written.

    The same as writing them one by one in order: the fixtures they replace are
    cleared first, and a unit that replaces a fixture drops what earlier units gave for
    it; then each table's rows go in bulk.
    """
    rows: dict[str, list[Row]] = {t: [] for t in _TABLES}
    replaced: dict[str, list[str]] = {t: [] for t in _TABLES}
    given: dict[str, set[str]] = {t: set() for t in _TABLES}  # first keys of the rows
    members: dict[str, None] = {}
    done: dict[str, int] = {}
    for unit in units:
        if unit.replace is not None:
            replaced[unit.table].append(unit.replace)
            if unit.replace in given[unit.table]:  # rare: an earlier unit gave rows of it
                rows[unit.table] = [r for r in rows[unit.table] if r[0] != unit.replace]
            given[unit.table].add(unit.replace)
        elif unit.rows:
            given[unit.table].update(row[0] for row in unit.rows)
        rows[unit.table] += unit.rows
        members.update(dict.fromkeys(unit.members))
        done[unit.name] = len(unit.rows)
    for name, table in _TABLES.items():
        await tx.clear(table, table.key[0], replaced[name])
        await tx.put(table, rows[name])
    await tx.put(_MEMBERS, [(job, m) for m in members])
    now = now_text()  # a row's value as written, as put() takes it (tx.now() is a ?'s)
    await tx.put(_CHECKPOINTS, [(job, unit, n, now) for unit, n in done.items()])
    return sum(len(unit.rows) for unit in units)


async def finish(tx: Tx, job: str) -> None:
    """Mark the job's run finished: the next run of it starts afresh."""
    await tx.execute(_sql.JOB_FINISH, tx.now(), job)


class BackfillEngine:
    """The :class:`~asyncsports.store._writer.Writer`'s engine for job ``job`` of a
    database: each call one transaction (or read) of ``dialect``."""

    def __init__(self, dialect: Dialect, job: str, *, restart: bool = False) -> None:
        self.dialect = dialect
        self.job = job
        self.restart = restart

    async def open(self) -> JobState:
        return await self.dialect.write(lambda tx: start(tx, self.job, self.restart))

    async def write(self, batch: Sequence[Unit]) -> Sequence[Unit]:
        await self.dialect.write(lambda tx: write(tx, self.job, batch))
        return batch

    async def finish(self) -> None:
        await self.dialect.write(lambda tx: finish(tx, self.job))

    async def counts(self) -> dict[str, int]:
        return {r[0]: r[1] for r in await self.dialect.read(lambda tx: tx.fetch(_COUNTS))}

    async def close(self) -> None:
        await self.dialect.close()

    def abort(self) -> None:
        self.dialect.abort()
