"""The backfill's PostgreSQL database (asyncpg): the tables, keys and semantics of SQLite.

The tables come from :mod:`asyncsports.store._schema`, as SQLite's do. A batch of units is one
transaction: each table's rows are COPYed (binary) into a session's staging table, then
moved by one ``INSERT ... SELECT ... ON CONFLICT`` (which also turns the values into
``json``, ``timestamptz`` and ``boolean``); the units' checkpoints go in the same
transaction, so after a crash a unit is wholly there and checkpointed, or not at all.

:class:`PgEngine` is the :class:`asyncsports.store._writer.Writer`'s engine for it, in the
event loop (asyncpg is asynchronous). A database that cannot be reached at the start fails
at once, within the connect timeout (:data:`CONNECT_TIMEOUT`), naming its host and port.
When it dies or restarts later, the writer backs off and tries the batch again on a new
connection (the batch is idempotent), for up to ``patience`` seconds; meanwhile the
fetchers wait on its back pressure, so nothing is lost (:class:`PgLink`).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import operator
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from asyncsports._optional import need
from asyncsports.errors import AsyncSportsError, SinkError
from asyncsports.store._schema import (
    ALL_TABLES,
    RESOURCE_TABLES,
    SCHEMA_VERSION,
    pg_ddl,
    pg_staging,
    pg_upsert,
)
from asyncsports.store._types import CONNECT_TIMEOUT, PATIENCE, JobState, Unit
from asyncsports.store._urls import address, is_postgres, redact_url

if TYPE_CHECKING:
    import asyncpg

__all__ = [
    "PgEngine",
    "PgLink",
    "PgSink",
    "address",
    "failed",
    "is_postgres",
    "ours",
    "redact_url",
    "unusable",
]

log = logging.getLogger("asyncsports.store")

_LOCK = 0x6173_7370_6F72_7473  # "asports": one schema creation at a time
_TABLES = {t.name: t for t in RESOURCE_TABLES}
_KEY = {t.name: operator.itemgetter(*(t.names.index(k) for k in t.key)) for t in RESOURCE_TABLES}
T = TypeVar("T")


def _asyncpg() -> Any:
    return need("asyncpg", "a postgresql:// database")


def _reason(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, TimeoutError):
        return f"no answer within {timeout:g} s"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    return " ".join(str(exc).split()) or type(exc).__name__


def unusable(
    url: str, exc: Exception, timeout: float = CONNECT_TIMEOUT, *, verb: str = "write"
) -> AsyncSportsError:
    """The error for ``exc``, raised connecting to ``url`` (within ``timeout``) or using
    it: a database that cannot be reached (see :func:`transient`) is named by its host
    and port; our own errors (SinkError, MissingDependencyError) are themselves."""
    if isinstance(exc, AsyncSportsError):
        return exc
    if transient(exc):
        return SinkError(
            f"cannot reach the database at {address(url)}: {_reason(exc, timeout)} "
            f"({redact_url(url)})"
        )
    return failed(url, exc, verb)


def failed(url: str, exc: Exception, verb: str = "write") -> SinkError:
    """The SinkError for the database's refusing what we asked (not its being away): a
    full disk says so and what to do, anything else gives PostgreSQL's words."""
    if isinstance(exc, _asyncpg().exceptions.DiskFullError):
        return SinkError(
            f"cannot {verb} {redact_url(url)}: the database's disk is full "
            f"({' '.join(str(exc).split())}); what was being written is rolled back: free "
            "space on the database's server and run the command again: it carries on "
            "from what is committed"
        )
    return SinkError(f"cannot {verb} {redact_url(url)}: {exc}")


# Every name our tables and indexes take in the schema, the job store's too
# (asyncsports.store._jobs, made after PgSink.open).
_NAMES = sorted(
    {t.name for t in ALL_TABLES}
    | {i for t in ALL_TABLES for i, _ in t.indexes}
    | {"asyncsports_schema", "shard_jobs", "shard_units", "shard_units_todo"}
)


async def ours(conn: asyncpg.Connection, url: str) -> int | None:
    """The schema version of the database (None: none of our tables is there yet).

    SinkError, before anything is created, when it is not ours: the schema that tables
    are created in (``current_schema()``) holds tables of our names but no
    ``asyncsports_schema`` (another application's), or its version is newer than ours.
    """
    found = [
        r[0]
        for r in await conn.fetch(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = current_schema() AND c.relname = ANY($1::text[]) ORDER BY 1",
            _NAMES,
        )
    ]
    if "asyncsports_schema" not in found:
        if found:
            raise SinkError(
                f"{redact_url(url)} is not an asyncsports database (it holds tables of its "
                f"own: {', '.join(found[:5])}; no asyncsports_schema): use another "
                "database, or another schema"
            )
        return None
    version: int | None = await conn.fetchval("SELECT max(version) FROM asyncsports_schema")
    if version is not None and version > SCHEMA_VERSION:
        raise SinkError(
            f"{redact_url(url)} has schema version {version}, written by a newer "
            f"asyncsports (this one reads {SCHEMA_VERSION} and older): upgrade "
            "asyncsports, or use another --db"
        )
    return version


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


async def _migrate(conn: asyncpg.Connection, version: int) -> None:
    """Bring a database of an older schema version to this one (in the caller's
    transaction; the tables that version lacked are created already)."""
    if version < 2:  # version 1 kept the records as jsonb, which loses the bytes as sent
        for table in RESOURCE_TABLES:
            await conn.execute(
                f"ALTER TABLE {table.name} ALTER COLUMN json TYPE json USING json::text::json"
            )
    await conn.execute("UPDATE asyncsports_schema SET version = $1", SCHEMA_VERSION)


async def _create(conn: asyncpg.Connection, url: str) -> None:
    """Create the tables (or migrate them), one connection at a time."""
    async with conn.transaction():
        await conn.execute(f"SELECT pg_advisory_xact_lock({_LOCK})")
        version = await ours(conn, url)
        for statement in pg_ddl():
            await conn.execute(statement)
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS asyncsports_schema (version integer NOT NULL)"
        )
        if version is None:
            await conn.execute(f"INSERT INTO asyncsports_schema VALUES ({SCHEMA_VERSION})")
        elif version < SCHEMA_VERSION:
            await _migrate(conn, version)


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
        apg = _asyncpg()
        conn = await apg.connect(url, timeout=connect_timeout)
        try:
            # Tables at this version: no DDL. `CREATE INDEX IF NOT EXISTS` waits for a
            # lock on its table even when the index is there, so a second connection
            # (a feed's follower, a reader) would wait on a writer's open transaction,
            # and forever when that writer is in the same process waiting on it.
            if await ours(conn, url) != SCHEMA_VERSION:
                await _create(conn, url)
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
        """Begin a run of ``job``: as :meth:`asyncsports.store._sqlite.Sink.start`."""
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


class PgLink:
    """A connection to ``url`` that outlives the database's restarts.

    :meth:`do` runs an operation on an open :class:`PgSink`; when the database is lost
    (:func:`transient`), it reconnects, backing off from 0.1 s to 2 s, and does the
    operation again (it must be idempotent), for up to ``patience`` seconds. A database
    never reached is not waited for: the first connection fails within
    ``connect_timeout``. Everything else is a SinkError at once (:func:`unusable`).
    """

    def __init__(
        self, url: str, *, patience: float = PATIENCE, connect_timeout: float = CONNECT_TIMEOUT
    ) -> None:
        self.url = url
        self.patience = patience
        self.connect_timeout = connect_timeout
        self.sink: PgSink | None = None
        self.reconnects = 0
        """Attempts made again after the database was lost."""
        self.reached = False
        """Whether a connection was ever made."""
        self._lock = anyio.Lock()

    async def do(self, op: Callable[[PgSink], Awaitable[T]]) -> T:
        """``op`` on an open sink; on a lost database, reconnect and do it again.

        Tasks that share the link take turns (a connection does one thing at a time)."""
        async with self._lock:
            return await self._do(op)

    async def _do(self, op: Callable[[PgSink], Awaitable[T]]) -> T:
        delay, give_up = 0.1, time.monotonic() + self.patience
        while True:
            try:
                if self.sink is None:
                    self.sink = await PgSink.open(self.url, connect_timeout=self.connect_timeout)
                    self.reached = True
                return await op(self.sink)
            except Exception as exc:
                self.abort()
                if isinstance(exc, AsyncSportsError):  # SinkError, MissingDependencyError
                    raise
                if not self.reached or not transient(exc):
                    raise unusable(self.url, exc, self.connect_timeout) from exc
                if time.monotonic() + delay > give_up:
                    where = f"{address(self.url)} for {self.patience:g} s"
                    raise SinkError(
                        f"cannot reach the database at {where}: "
                        f"{_reason(exc, self.connect_timeout)} ({redact_url(self.url)})"
                    ) from exc
                log.warning("database %s: %s; trying again in %.1f s", redact_url(self.url),
                            exc, delay)  # fmt: skip
                self.reconnects += 1
                await anyio.sleep(delay)
                delay = min(2 * delay, 2.0)

    def abort(self) -> None:
        """Drop the connection at once: the server rolls back what was under way."""
        if self.sink is not None:
            self.sink.abort()
            self.sink = None

    async def close(self) -> None:
        """Close the connection, if open."""
        if self.sink is not None:
            sink, self.sink = self.sink, None
            await sink.close()


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
        self.job = job
        self.restart = restart
        self.link = PgLink(url, patience=patience, connect_timeout=connect_timeout)

    @property
    def reconnects(self) -> int:
        """Attempts made again after the database was lost."""
        return self.link.reconnects

    async def open(self) -> JobState:
        return await self.link.do(lambda s: s.start(self.job, restart=self.restart))

    async def write(self, batch: Sequence[Unit]) -> Sequence[Unit]:
        await self.link.do(functools.partial(PgSink.write, job=self.job, units=batch))
        return batch

    async def finish(self) -> None:
        await self.link.do(lambda s: s.finish(self.job))

    async def counts(self) -> dict[str, int]:
        return await self.link.do(lambda s: s.counts())

    async def close(self) -> None:
        await self.link.close()

    def abort(self) -> None:
        self.link.abort()
