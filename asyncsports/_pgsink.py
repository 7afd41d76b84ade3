"""The backfill's PostgreSQL database (asyncpg): the tables, keys and semantics of SQLite.

The tables come from :mod:`asyncsports._schema`, as SQLite's do. A batch of units is one
transaction: each table's rows are COPYed (binary) into a session's staging table, then
moved by one ``INSERT ... SELECT ... ON CONFLICT`` (which also turns the values into
``jsonb``, ``timestamptz`` and ``boolean``); the units' checkpoints go in the same
transaction, so after a crash a unit is wholly there and checkpointed, or not at all.

:class:`PgWriter` runs in the event loop (asyncpg is asynchronous) and has the interface of
:class:`asyncsports._writer.Writer`. When the database dies or restarts, the writer backs off
and tries the batch again on a new connection (the batch is idempotent), for up to
``patience`` seconds; meanwhile the fetchers wait on its back pressure, so nothing is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import operator
import re
import time
import urllib.parse
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
from anyio.abc import TaskStatus

from asyncsports._optional import need
from asyncsports._schema import (
    RESOURCE_TABLES,
    SCHEMA_VERSION,
    pg_ddl,
    pg_staging,
    pg_upsert,
)
from asyncsports._sink import JobState, Unit
from asyncsports.errors import AsyncSportsError, SinkError

if TYPE_CHECKING:
    import asyncpg

__all__ = ["PATIENCE", "PgSink", "PgWriter", "is_postgres", "safe_url"]

log = logging.getLogger("asyncsports.backfill")

PATIENCE = 120.0
"""Seconds the writer keeps trying while the database is unreachable, before failing."""

LINGER = 0.05
"""Seconds the writer gathers units into one transaction after the first arrives."""

_LOCK = 0x6173_7370_6F72_7473  # "asports": one schema creation at a time
_TABLES = {t.name: t for t in RESOURCE_TABLES}
_KEY = {t.name: operator.itemgetter(*(t.names.index(k) for k in t.key)) for t in RESOURCE_TABLES}
T = TypeVar("T")


def is_postgres(db: object) -> bool:
    """Whether ``db`` names a PostgreSQL database (a ``postgresql://`` URL)."""
    return isinstance(db, str) and db.startswith(("postgresql://", "postgres://"))


_PASSWORD_RE = re.compile(r"((?:^|[?&])(?:password|sslpassword)=)[^&]*")


def safe_url(url: str) -> str:
    """``url`` without its password, in the address or the query (for messages, reports)."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is not None:
        host = parts.netloc.rsplit("@", 1)[1]
        parts = parts._replace(netloc=f"{parts.username or ''}:***@{host}")
    if parts.query:
        parts = parts._replace(query=_PASSWORD_RE.sub(r"\1***", parts.query))
    return urllib.parse.urlunsplit(parts)


def _asyncpg() -> Any:
    return need("asyncpg", "a postgresql:// database")


def transient(exc: BaseException) -> bool:
    """Whether ``exc`` says the database is (for now) unreachable, not that we erred."""
    apg = _asyncpg()
    return isinstance(
        exc,
        OSError
        | TimeoutError
        | apg.PostgresConnectionError
        | apg.exceptions.OperatorInterventionError  # shutting down, starting up
        | apg.InterfaceError  # the connection is closed
        | apg.exceptions.SerializationError
        | apg.exceptions.DeadlockDetectedError,
    )


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
            raise SinkError(f"cannot write {safe_url(self.url)}: {exc}") from exc

    @classmethod
    async def open(cls, url: str) -> PgSink:
        """Connect, create the tables if needed, and the session's staging tables."""
        apg = _asyncpg()
        conn = await apg.connect(url, timeout=10)
        try:
            async with conn.transaction():
                await conn.execute(f"SELECT pg_advisory_xact_lock({_LOCK})")
                for statement in pg_ddl():
                    await conn.execute(statement)
                await conn.execute(
                    "CREATE TABLE IF NOT EXISTS asyncsports_schema (version integer NOT NULL)"
                )
                version = await conn.fetchval("SELECT max(version) FROM asyncsports_schema")
                if version is None:
                    await conn.execute(f"INSERT INTO asyncsports_schema VALUES ({SCHEMA_VERSION})")
                elif version != SCHEMA_VERSION:
                    raise SinkError(
                        f"{safe_url(url)} has schema version {version}, this asyncsports "
                        f"writes {SCHEMA_VERSION}: use another --db"
                    )
            for table in RESOURCE_TABLES:
                await conn.execute(pg_staging(table))
        except BaseException:
            conn.terminate()
            raise
        return cls(url, conn)

    async def close(self) -> None:
        """Close the connection (an unfinished transaction is rolled back)."""
        with anyio.CancelScope(shield=True):
            try:
                with anyio.fail_after(5):
                    await self._conn.close()
            except Exception:
                self._conn.terminate()

    def abort(self) -> None:
        """Drop the connection at once: the server rolls back what was under way."""
        self._conn.terminate()

    async def start(self, job: str, *, restart: bool = False) -> JobState:
        """Begin a run of ``job``: as :meth:`asyncsports._sink.Sink.start`."""
        with self._errors():
            return await self._start(job, restart)

    async def _start(self, job: str, restart: bool) -> JobState:
        conn = self._conn
        row = await conn.fetchrow("SELECT finished_at FROM jobs WHERE job = $1", job)
        if row is not None and row[0] is None and not restart:
            done = frozenset(
                r[0] for r in await conn.fetch("SELECT unit FROM checkpoints WHERE job = $1", job)
            )
            rows = await conn.fetch(
                "SELECT f.id, f.sport, f.status, f.deleted FROM job_fixtures j "
                "JOIN fixtures f ON f.id = j.fixture_id WHERE j.job = $1 ORDER BY j.position",
                job,
            )
            fixtures = [(r[0], r[1], r[2], bool(r[3])) for r in rows]
            return JobState(resumed=True, done=done, fixtures=fixtures)
        async with conn.transaction():
            await conn.execute("DELETE FROM checkpoints WHERE job = $1", job)
            await conn.execute("DELETE FROM job_fixtures WHERE job = $1", job)
            await conn.execute(
                "INSERT INTO jobs (job, started_at, finished_at) VALUES ($1, now(), NULL) "
                "ON CONFLICT (job) DO UPDATE SET started_at = excluded.started_at, "
                "finished_at = NULL",
                job,
            )
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
                    await conn.execute(pg_upsert(table))
            if members:
                await conn.execute(
                    "INSERT INTO job_fixtures (job, fixture_id) SELECT $1, m "
                    "FROM unnest($2::text[]) WITH ORDINALITY AS t(m, i) ORDER BY i "
                    "ON CONFLICT DO NOTHING",
                    job,
                    list(members),
                )
            await conn.execute(
                "INSERT INTO checkpoints (job, unit, rows, done_at) "
                "SELECT $1, u, r, now() FROM unnest($2::text[], $3::bigint[]) AS t(u, r) "
                "ON CONFLICT (job, unit) DO UPDATE SET rows = excluded.rows, "
                "done_at = excluded.done_at",
                job,
                list(done),
                list(done.values()),
            )

    async def finish(self, job: str) -> None:
        """Mark the job's run finished: the next run of it starts afresh."""
        with self._errors():
            await self._conn.execute("UPDATE jobs SET finished_at = now() WHERE job = $1", job)

    async def counts(self) -> dict[str, int]:
        """Rows per resource table."""
        return {t: await self._conn.fetchval(f"SELECT count(*) FROM {t}") for t in _TABLES}


class PgWriter:
    """The backfill's writer for PostgreSQL: the interface of :class:`~asyncsports._writer.Writer`,
    as a task of the event loop. A database that goes away is waited for (backing off
    from 0.1 s to 2 s between attempts) for up to ``patience`` seconds."""

    def __init__(
        self, url: str, job: str, *, restart: bool, pending: int, patience: float = PATIENCE
    ) -> None:
        self.url = url
        self.job = job
        self.restart = restart
        self.pending = pending
        self.patience = patience
        self.written: Counter[str] = Counter()
        self.rows: dict[str, int] = {}
        self.reconnects = 0
        self._queue: asyncio.Queue[Unit | None] = asyncio.Queue()
        self._finished = False
        self._sink: PgSink | None = None
        self._slots: anyio.Semaphore | None = None

    async def run(self, *, task_status: TaskStatus[JobState]) -> None:
        """Open the database, report the job's state, write until :meth:`close`."""
        self._slots = anyio.Semaphore(self.pending)
        try:
            state = await self._retry(lambda s: s.start(self.job, restart=self.restart))
            task_status.started(state)
            closing = False
            while not closing:
                units, closing = await self._batch()
                if units:
                    await self._retry(functools.partial(PgSink.write, job=self.job, units=units))
                    for unit in units:
                        self.written[unit.table] += len(unit.rows)
                    for _ in units:
                        self._slots.release()
            if self._finished:
                await self._retry(lambda s: s.finish(self.job))
            self.rows = await self._retry(lambda s: s.counts())
        except BaseException:
            if self._sink is not None:
                self._sink.abort()  # whatever was under way is rolled back
                self._sink = None
            raise
        if self._sink is not None:
            await self._sink.close()
            self._sink = None

    async def put(self, unit: Unit) -> None:
        """Queue a unit for writing (waits while ``pending`` units wait already)."""
        assert self._slots is not None
        await self._slots.acquire()
        self._queue.put_nowait(unit)

    def close(self, *, finished: bool) -> None:
        """Write what is queued, mark the job finished if ``finished``, and stop."""
        self._finished = finished
        self._queue.put_nowait(None)

    async def _batch(self) -> tuple[list[Unit], bool]:
        units: list[Unit] = []
        item = await self._queue.get()
        deadline = time.monotonic() + LINGER
        while item is not None:
            units.append(item)
            wait = deadline - time.monotonic()
            if len(units) >= self.pending or wait <= 0:
                break
            got = False
            with anyio.move_on_after(wait):
                item = await self._queue.get()
                got = True
            if not got:
                break
        return units, item is None

    async def _retry(self, op: Callable[[PgSink], Awaitable[T]]) -> T:
        """``op`` on an open sink; on a lost database, reconnect and do it again."""
        delay, give_up = 0.1, time.monotonic() + self.patience
        while True:
            try:
                if self._sink is None:
                    self._sink = await PgSink.open(self.url)
                return await op(self._sink)
            except AsyncSportsError:  # SinkError, MissingDependencyError
                raise
            except Exception as exc:
                if self._sink is not None:
                    self._sink.abort()
                    self._sink = None
                where = safe_url(self.url)
                if not transient(exc):
                    raise SinkError(f"cannot write {where}: {exc}") from exc
                if time.monotonic() + delay > give_up:
                    raise SinkError(
                        f"cannot reach {where} for {self.patience:.0f} s: {exc}"
                    ) from exc
                log.warning("database %s: %s; trying again in %.1f s", where, exc, delay)
                self.reconnects += 1
                await anyio.sleep(delay)
                delay = min(2 * delay, 2.0)
