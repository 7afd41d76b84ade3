"""The backfill's PostgreSQL database (asyncpg): the tables, keys and semantics of SQLite.

A batch of units is one transaction: each table's rows are COPYed (binary) into a
session's staging table, then moved by one ``INSERT ... SELECT ... ON CONFLICT`` (which
also turns the values into ``json``, ``timestamptz`` and ``boolean``); the units'
checkpoints go in the same transaction, so after a crash a unit is wholly there and
checkpointed, or not at all.

:class:`PgEngine` is the :class:`~asyncsports.store._writer.Writer`'s engine for it, in
the event loop (asyncpg is asynchronous), through a
:class:`~asyncsports.store._pg.PgLink`: when the database dies or restarts, the writer
backs off and tries the batch again on a new connection (the batch is idempotent), for
up to ``patience`` seconds; meanwhile the fetchers wait on its back pressure, so nothing
is lost.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import operator
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import asyncsports.store._sql as _sql
from asyncsports.errors import SinkError
from asyncsports.store._pg import PgLink, close, connect, failed, transient
from asyncsports.store._schema import RESOURCE_TABLES, pg_staging
from asyncsports.store._types import CONNECT_TIMEOUT, PATIENCE, JobState, Unit

if TYPE_CHECKING:
    import asyncpg

__all__ = ["PgEngine", "PgSink", "stage"]

_TABLES = {t.name: t for t in RESOURCE_TABLES}
_KEY = {t.name: operator.itemgetter(*(t.names.index(k) for k in t.key)) for t in RESOURCE_TABLES}
T = TypeVar("T")
_STAGED = {t.name: _sql.staged(t) for t in RESOURCE_TABLES}
_JOB_RUN, _JOB_DONE, _JOB_BEGIN, _JOB_FINISH = map(
    _sql.pg, (_sql.JOB_RUN, _sql.JOB_DONE, _sql.JOB_BEGIN, _sql.JOB_FINISH)
)
_JOB_FIXTURES = _sql.pg(_sql.JOB_FIXTURES.format(order="position"))
_JOB_FORGET = [_sql.pg(s) for s in _sql.JOB_FORGET]
_COUNTS = _sql.counts(_TABLES)
# A batch's members and checkpoints in one statement each: arrays, in order.
_MEMBERS = _sql.upsert(
    _sql.TABLES["job_fixtures"],
    "SELECT $1, m FROM unnest($2::text[]) WITH ORDINALITY AS t(m, i) ORDER BY i",
)
_CHECKPOINTS = _sql.upsert(
    _sql.TABLES["checkpoints"],
    "SELECT $1, u, r, now() FROM unnest($2::text[], $3::bigint[]) AS t(u, r)",
)


async def stage(conn: asyncpg.Connection) -> None:
    """Create the session's staging tables (rows are COPYed into them, then upserted)."""
    for table in RESOURCE_TABLES:
        await conn.execute(pg_staging(table))


class PgSink:
    """One connection to a backfill's PostgreSQL database; :meth:`open` makes one.

    Its methods raise SinkError for what the user has to fix, and asyncpg's own errors
    (or OSError) when the database is unreachable (see :func:`transient`).
    """

    def __init__(self, url: str, conn: asyncpg.Connection) -> None:
        self.url = url
        self._conn = conn

    @property
    def connection(self) -> asyncpg.Connection:
        """The connection (a caller's transaction around :meth:`write` holds it too)."""
        return self._conn

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        try:
            yield
        except SinkError:
            raise
        except Exception as exc:
            if transient(exc):
                raise
            raise failed(self.url, exc) from exc

    @classmethod
    async def open(cls, url: str, *, connect_timeout: float = CONNECT_TIMEOUT) -> PgSink:
        """Connect (within ``connect_timeout`` seconds), create the tables if needed, and
        the session's staging tables."""
        conn = await connect(url, connect_timeout=connect_timeout)
        try:
            await stage(conn)
        except BaseException:
            conn.terminate()
            raise
        return cls(url, conn)

    async def close(self) -> None:
        """Close the connection (an unfinished transaction is rolled back)."""
        await close(self._conn)

    def abort(self) -> None:
        """Drop the connection at once: the server rolls back what was under way."""
        self._conn.terminate()

    async def start(self, job: str, *, restart: bool = False) -> JobState:
        """Begin a run of ``job``: as :meth:`asyncsports.store._backfill_sqlite.Sink.start`."""
        with self._errors():
            return await self._start(job, restart)

    async def _start(self, job: str, restart: bool) -> JobState:
        conn = self._conn
        row = await conn.fetchrow(_JOB_RUN, job)
        if row is not None and row[0] is None and not restart:
            done = frozenset(r[0] for r in await conn.fetch(_JOB_DONE, job))
            fixtures = [
                (r[0], r[1], r[2], bool(r[3])) for r in await conn.fetch(_JOB_FIXTURES, job)
            ]
            return JobState(resumed=True, done=done, fixtures=fixtures)
        async with conn.transaction():
            for statement in _JOB_FORGET:
                await conn.execute(statement, job)
            await conn.execute(_JOB_BEGIN, job, dt.datetime.now(dt.UTC))
        return JobState(resumed=False)

    async def write(self, job: str, units: Iterable[Unit]) -> int:
        """Write units and their checkpoints in one transaction; returns the rows written.

        The same as writing them one by one in order (SQLite's way): a unit that
        replaces a fixture drops what earlier units of the batch staged for it.
        """
        staged: dict[str, dict[Any, tuple[Any, ...]]] = {t: {} for t in _TABLES}
        replaced: dict[str, list[str]] = {t: [] for t in _TABLES}
        members: dict[str, None] = {}
        done: dict[str, int] = {}
        written = 0
        fixtures: dict[str, set[str]] = {t: set() for t in _TABLES}  # first keys staged
        for unit in units:
            rows, key = staged[unit.table], _KEY[unit.table]
            if unit.replace is not None:
                replaced[unit.table].append(unit.replace)
                if unit.replace in fixtures[unit.table]:  # rare: an earlier unit staged it
                    for k in [k for k, r in rows.items() if r[0] == unit.replace]:
                        del rows[k]
                if unit.rows:
                    fixtures[unit.table].add(unit.replace)
            elif unit.rows:
                fixtures[unit.table].update(row[0] for row in unit.rows)
            for row in unit.rows:
                rows[key(row)] = row
            members.update(dict.fromkeys(unit.members))
            done[unit.name] = len(unit.rows)
            written += len(unit.rows)
        with self._errors():
            await self._send(job, staged, replaced, members, done)
        return written

    async def _send(
        self,
        job: str,
        staged: dict[str, dict[Any, tuple[Any, ...]]],
        replaced: dict[str, list[str]],
        members: dict[str, None],
        done: dict[str, int],
    ) -> None:
        conn = self._conn
        async with conn.transaction():
            for name, table in _TABLES.items():
                if replaced[name]:
                    await conn.execute(
                        f"DELETE FROM {name} WHERE {table.key[0]} = ANY($1::text[])",
                        replaced[name],
                    )
                if staged[name]:
                    await conn.copy_records_to_table(
                        f"stage_{name}", records=list(staged[name].values()), columns=table.names
                    )
                    await conn.execute(_STAGED[name])
            if members:
                await conn.execute(_MEMBERS, job, list(members))
            await conn.execute(_CHECKPOINTS, job, list(done), list(done.values()))

    async def finish(self, job: str) -> None:
        """Mark the job's run finished: the next run of it starts afresh."""
        with self._errors():
            await self._conn.execute(_JOB_FINISH, dt.datetime.now(dt.UTC), job)

    async def counts(self) -> dict[str, int]:
        """Rows per resource table."""
        return {r[0]: r[1] for r in await self._conn.fetch(_COUNTS)}


class PgEngine:
    """The PostgreSQL engine of :class:`~asyncsports.store._writer.Writer`: job ``job`` of the
    database at ``url``, through a :class:`PgLink` (a database never reached fails within
    ``connect_timeout``; one that goes away is waited for up to ``patience`` seconds)."""

    def __init__(
        self,
        url: str,
        job: str,
        *,
        restart: bool = False,
        patience: float = PATIENCE,
        connect_timeout: float = CONNECT_TIMEOUT,
    ) -> None:
        self.url = url
        self.job = job
        self.restart = restart
        self.link = PgLink(url, patience=patience, connect_timeout=connect_timeout, setup=stage)

    @property
    def reconnects(self) -> int:
        """Attempts made again after the database was lost."""
        return self.link.reconnects

    async def open(self) -> JobState:
        return await self._do(lambda s: s.start(self.job, restart=self.restart))

    async def write(self, batch: Sequence[Unit]) -> Sequence[Unit]:
        await self._do(lambda s: s.write(self.job, batch))
        return batch

    async def finish(self) -> None:
        await self._do(lambda s: s.finish(self.job))

    async def counts(self) -> dict[str, int]:
        return await self._do(PgSink.counts)

    async def _do(self, op: Callable[[PgSink], Awaitable[T]]) -> T:
        return await self.link.do(lambda conn: op(PgSink(self.url, conn)))

    async def close(self) -> None:
        await self.link.close()

    def abort(self) -> None:
        self.link.abort()
