"""The PostgreSQL dialect of the store (asyncpg): connecting, checking, creating the
tables; what its errors mean; :class:`PgLink`, the one reconnect rule; and
:class:`PgDialect`, the :class:`~asyncsports.store._dialect.Dialect` the jobs are written
over, with the reader's :class:`PgSnapshot` and the lease's :class:`PgSeat`.

The tables come from :mod:`asyncsports.store._schema`, as SQLite's do. A database that
cannot be reached at the start fails at once, within the connect timeout
(:data:`~asyncsports.store._types.CONNECT_TIMEOUT`), naming its host and port. When it
dies or restarts later, a :class:`PgLink` backs off and does the operation again on a new
connection, for up to ``patience`` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from asyncsports._optional import need
from asyncsports.errors import AsyncSportsError, SinkError
from asyncsports.store._dialect import Line, Tx
from asyncsports.store._rows import utc_text
from asyncsports.store._schema import (
    ALL_TABLES,
    HEALTH_TABLES,
    JOB_TABLES,
    LEASE_DDL,
    MIRROR_TABLES,
    PG_CARRIER,
    RESOURCE_TABLES,
    SCHEMA_VERSION,
    Table,
    pg_convert,
    pg_ddl,
    pg_staging,
)
from asyncsports.store._sql import pg, staged, upsert
from asyncsports.store._types import (
    CONNECT_TIMEOUT,
    PATIENCE,
    Lease,
    NotYet,
    Row,
    deposed,
    time_text,
)
from asyncsports.store._urls import address, redact_url

if TYPE_CHECKING:
    import asyncpg

__all__ = [
    "CALL_TIMEOUT",
    "CHANNEL",
    "ELECTION_SETTINGS",
    "STRANDED",
    "WRITE_LOCK",
    "PgDialect",
    "PgLink",
    "PgSeat",
    "PgSnapshot",
    "address",
    "close",
    "connect",
    "failed",
    "fence",
    "ours",
    "plain",
    "transient",
    "unusable",
]

log = logging.getLogger("asyncsports.store")

_LOCK = 0x6173_7370_6F72_7473  # "asports": one schema creation at a time
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
# (asyncsports.store._jobs, made after connect()).
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
        # An operation begun on a connection still taking in the server's FATAL error (a
        # fast shutdown): the database going away; the connection is dropped (abort()).
        | apg.exceptions.InternalClientError
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


async def connect(
    url: str,
    *,
    connect_timeout: float = CONNECT_TIMEOUT,
    settings: dict[str, str] | None = None,
    create: bool = True,
) -> asyncpg.Connection:
    """A connection to ``url`` (within ``connect_timeout`` seconds; ``settings``: the
    session's), the tables created or migrated if needed (``create=False``: checked, and
    taken as it is: a reader's; its writer makes the tables).

    Tables at this version: no DDL. ``CREATE INDEX IF NOT EXISTS`` waits for a lock on its
    table even when the index is there, so a second connection (a feed's follower, a
    reader) would wait on a writer's open transaction, and forever when that writer is in
    the same process waiting on it.
    """
    conn = await _asyncpg().connect(url, timeout=connect_timeout, server_settings=settings)
    try:
        version = await ours(conn, url)
        if create and version != SCHEMA_VERSION:
            await _create(conn, url)
    except BaseException:
        conn.terminate()
        raise
    return conn


async def close(conn: asyncpg.Connection) -> None:
    """Close ``conn`` (an unfinished transaction is rolled back): within 5 s, else drop it."""
    with anyio.CancelScope(shield=True):
        try:
            with anyio.fail_after(5):
                await conn.close()
        except Exception:
            conn.terminate()


class PgLink:
    """A connection to ``url`` that outlives the database's restarts: the one reconnect
    rule of the package (the backfill, the workers, the mirror and the lease).

    :meth:`do` runs an operation on the connection, made by :func:`connect` (with the
    session's ``settings``) and then ``setup``. A database never reached is not waited
    for: the first connection fails within ``connect_timeout``. When a database once
    reached is lost (:func:`transient`), :meth:`do` reconnects, backing off from 0.1 s to
    2 s, and does the operation again (it must be idempotent), for up to ``patience``
    seconds; with ``patience=None`` it raises the database's error as it is (the caller
    tries again later), and the next call connects again. Everything else is a SinkError
    at once (:func:`unusable`). An operation cut short (cancelled) leaves the session in
    doubt: the connection is dropped.
    """

    def __init__(
        self,
        url: str,
        *,
        patience: float | None = PATIENCE,
        connect_timeout: float = CONNECT_TIMEOUT,
        settings: dict[str, str] | None = None,
        setup: Callable[[asyncpg.Connection], Awaitable[object]] | None = None,
        create: bool = True,
    ) -> None:
        self.url = url
        self.create = create
        self.patience = patience
        self.connect_timeout = connect_timeout
        self.conn: asyncpg.Connection | None = None
        self.reconnects = 0
        """Attempts made again after the database was lost."""
        self.reached = False
        """Whether a connection was ever made."""
        self._settings = settings
        self._setup = setup
        self._lock = anyio.Lock()

    async def do(self, op: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
        """``op`` on the connection; on a lost database, reconnect and do it again.

        Tasks that share the link take turns (a connection does one thing at a time)."""
        async with self._lock:
            return await self._do(op)

    async def _do(self, op: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
        delay, give_up = 0.1, time.monotonic() + (self.patience or 0.0)
        while True:
            try:
                return await op(await self._connection())
            except BaseException as exc:
                self.abort()
                if not isinstance(exc, Exception) or isinstance(exc, AsyncSportsError):
                    raise  # cancelled; SinkError, MissingDependencyError
                if not self.reached or not transient(exc):
                    raise unusable(self.url, exc, self.connect_timeout) from exc
                if self.patience is None:
                    raise
                if time.monotonic() + delay > give_up:
                    where = f"{address(self.url)} for {self.patience:g} s"
                    raise SinkError(
                        f"cannot reach the database at {where}: "
                        f"{_reason(exc, self.connect_timeout)} ({redact_url(self.url)})"
                    ) from exc
                log.warning(
                    "database %s: %s; trying again in %.1f s", redact_url(self.url), exc, delay
                )
                self.reconnects += 1
                await anyio.sleep(delay)
                delay = min(2 * delay, 2.0)

    async def _connection(self) -> asyncpg.Connection:
        if self.conn is None or self.conn.is_closed():
            conn = await connect(
                self.url,
                connect_timeout=self.connect_timeout,
                settings=self._settings,
                create=self.create,
            )
            self.conn = conn
            if self._setup is not None:
                await self._setup(conn)
            self.reached = True
        return self.conn

    def abort(self) -> None:
        """Drop the connection at once: the server rolls back what was under way."""
        if self.conn is not None:
            self.conn.terminate()
            self.conn = None

    async def close(self) -> None:
        """Close the connection, if open."""
        if self.conn is not None:
            conn, self.conn = self.conn, None
            await close(conn)


# ------------------------------------------------------------------------ the dialect

CHANNEL = "asyncsports_changes"
"""The channel each logged write NOTIFYs (payload: the last ``seq`` it logged)."""

WRITE_LOCK = 0x6173_7370_6F72_7466  # "asportf"
"""The advisory lock each write takes first: writers of one database take turns, so
``changes.seq`` is in commit order (a follower reading ``seq > cursor`` never passes a
change committed later with a smaller ``seq``)."""

STRANDED = 5.0
"""Seconds a fenced transaction may sit idle (its network cut) before the server ends it."""

# The tables whose rows a job writes in batches (the mirror's, the backfill's).
_TABLES: dict[str, Table] = {
    t.name: t for t in (*RESOURCE_TABLES, *MIRROR_TABLES, *HEALTH_TABLES, *JOB_TABLES)
}
_KEY_TYPE = {"text": "text", "int": "bigint"}
# One round trip: the lease row held (shared) and, for this transaction only, the server
# told to end it when it sits idle STRANDED seconds (its writer cut off).
_FENCE = (
    "SELECT set_config('idle_in_transaction_session_timeout', $3, true) FROM sync_lease "
    "WHERE name = $1 AND term = $2 AND expires > clock_timestamp() FOR SHARE"
)
_LOG = (
    "WITH c AS (INSERT INTO changes (committed_at, op, tbl, key, row) "
    "SELECT $1::timestamptz, o, t, k, r "
    "FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(o, t, k, r, i) "
    "ORDER BY i RETURNING seq) "
    f"SELECT pg_notify('{CHANNEL}', max(seq)::text) FROM c"
)


async def fence(conn: asyncpg.Connection, lease: Lease) -> None:
    """First in each of the writer's transactions: raise
    :class:`~asyncsports.store._types.Deposed` unless the lease is still ours; hold the
    row (shared) until the transaction ends: a takeover's ``UPDATE`` waits for it."""
    if await conn.fetchval(_FENCE, lease.name, lease.term, str(int(STRANDED * 1000))) is None:
        raise deposed(lease)


def _unnest(t: Table) -> str:
    """The rows as arrays, one per column (``$1``...), turned into the columns' types (an
    ``ordered`` table's in the arrays' order)."""
    arrays = ", ".join(f"${i}::{PG_CARRIER[c.kind]}[]" for i, c in enumerate(t.columns, 1))
    values = ", ".join(pg_convert(c) for c in t.columns)
    if t.ordered:
        return (
            f"SELECT {values} FROM unnest({arrays}) WITH ORDINALITY "
            f"AS v({', '.join(t.names)}, i) ORDER BY i"
        )
    return f"SELECT {values} FROM unnest({arrays}) AS v({', '.join(t.names)})"


def _key_arrays(t: Table, first: int) -> str:
    kinds = {c.name: c.kind for c in t.columns}
    types = [_KEY_TYPE[kinds[k]] for k in t.key]
    return ", ".join(f"${i}::{k}[]" for i, k in enumerate(types, first))


def _scope_delete(t: Table, column: str) -> str:
    return (
        f"DELETE FROM {t.name} WHERE {column} = $1 "
        f"AND ({', '.join(t.key)}) NOT IN (SELECT * FROM unnest({_key_arrays(t, 2)})) "
        f"RETURNING {', '.join(t.names)}"
    )


_UPSERT = {
    name: upsert(
        t, _unnest(t), changed=True, returning=f"{', '.join(t.key)}, (xmax = 0) AS inserted"
    )
    for name, t in _TABLES.items()
}
_REPLACE = {name: upsert(t, _unnest(t)) for name, t in _TABLES.items()}
_DELETE = {
    name: f"DELETE FROM {name} WHERE ({', '.join(t.key)}) IN "
    f"(SELECT * FROM unnest({_key_arrays(t, 1)}))"
    for name, t in _TABLES.items()
}


_STAGED = {t.name: staged(t) for t in RESOURCE_TABLES}


@functools.lru_cache(maxsize=256)
def _numbered(sql: str) -> str:
    return pg(sql)


async def _stage(conn: asyncpg.Connection) -> None:
    """Create the session's staging tables (rows are COPYed into them, then upserted)."""
    for table in RESOURCE_TABLES:
        await conn.execute(pg_staging(table))


def plain(table: Table, row: Sequence[Any]) -> Row:
    """A row of ``table`` read back as the values it was written from (time as ISO 8601
    text, flags as 0/1), as SQLite keeps them."""
    out = []
    for c, v in zip(table.columns, row, strict=True):
        if v is not None and c.kind == "time":
            v = utc_text(v)
        elif v is not None and c.kind == "flag":
            v = int(v)
        out.append(v)
    return tuple(out)


def _columns(t: Table, rows: Sequence[Row]) -> list[list[Any]]:
    """The rows as one array per column (flags as integers)."""
    cols = [list(c) for c in zip(*rows, strict=True)] if rows else [[] for _ in t.columns]
    for i, c in enumerate(t.columns):
        if c.kind == "flag":
            cols[i] = [None if v is None else int(v) for v in cols[i]]
    return cols


def _layers(rows: Sequence[Row], nkeys: int) -> list[list[Row]]:
    """The rows in turns where no key comes twice (one statement cannot change a row
    twice): almost always one; a row written twice in a write is written twice, in
    order, as SQLite writes it."""
    layers: list[list[Row]] = []
    depth: dict[tuple[Any, ...], int] = {}
    for row in rows:
        key = tuple(row[:nkeys])
        n = depth.get(key, -1) + 1
        depth[key] = n
        if n == len(layers):
            layers.append([])
        layers[n].append(row)
    return layers


class PgTx:
    """:class:`~asyncsports.store._dialect.Tx` on an asyncpg connection: a batch of rows
    goes in one statement (arrays, ``unnest``); placeholders are numbered once per
    statement text."""

    __slots__ = ("bulk", "conn")

    def __init__(self, conn: asyncpg.Connection, bulk: bool = False) -> None:
        self.conn = conn
        self.bulk = bulk
        """Whether the connection has the staging tables :meth:`put` COPYs into."""

    async def fetch(self, sql: str, *args: Any) -> list[Sequence[Any]]:
        return list(await self.conn.fetch(_numbered(sql), *args))

    async def fetchrow(self, sql: str, *args: Any) -> Sequence[Any] | None:
        row: Sequence[Any] | None = await self.conn.fetchrow(_numbered(sql), *args)
        return row

    async def execute(self, sql: str, *args: Any) -> None:
        await self.conn.execute(_numbered(sql), *args)

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:  # older asyncpg refuses an empty executemany
            await self.conn.executemany(_numbered(sql), rows)

    def plain(self, table: Table, row: Sequence[Any]) -> Row:
        return plain(table, row)

    def text_time(self, value: Any) -> str:
        return time_text(value)

    async def fence(self, lease: Lease) -> None:
        await fence(self.conn, lease)

    async def put_changed(self, table: Table, rows: Sequence[Row]) -> list[tuple[Row, bool]]:
        # The database compares each row with the stored one and returns those it wrote.
        nkeys = len(table.key)
        written: list[tuple[Row, bool]] = []
        for layer in _layers(rows, nkeys):
            got = await self.conn.fetch(_UPSERT[table.name], *_columns(table, layer))
            done = {tuple(r[:nkeys]): bool(r["inserted"]) for r in got}
            for row in layer:
                key = tuple(row[:nkeys])
                if key in done:
                    written.append((row, done[key]))
        return written

    async def delete_scope(
        self, table: Table, column: str, value: Any, kept: set[tuple[Any, ...]]
    ) -> list[Row]:
        keys = [list(k) for k in zip(*kept, strict=True)] or [[]] * len(table.key)
        gone = await self.conn.fetch(_scope_delete(table, column), value, *keys)
        return [self.plain(table, r) for r in gone]

    async def delete(self, table: Table, keys: Sequence[tuple[Any, ...]]) -> None:
        if keys:
            await self.conn.execute(
                _DELETE[table.name], *(list(k) for k in zip(*keys, strict=True))
            )

    async def log(self, lines: Sequence[Line]) -> None:
        if lines:
            ops, tables, keys, rows = (list(x) for x in zip(*lines, strict=True))
            await self.conn.execute(_LOG, dt.datetime.now(dt.UTC), ops, tables, keys, rows)

    # The backfill's: rows are COPYed (binary) into the session's staging table (see
    # PgDialect's bulk), then moved by one INSERT ... SELECT ... ON CONFLICT.
    position = "position"

    def now(self) -> Any:
        return dt.datetime.now(dt.UTC)

    async def put(self, table: Table, rows: Sequence[Row]) -> None:
        if not rows:
            return
        nkeys = len(table.key)
        last = list({row[:nkeys]: row for row in rows}.values())  # a statement changes a row once
        if self.bulk and table.name in _STAGED:  # a backfill's batch: COPY, then upsert
            await self.conn.copy_records_to_table(
                f"stage_{table.name}", records=last, columns=table.names
            )
            await self.conn.execute(_STAGED[table.name])
        else:
            await self.conn.execute(_REPLACE[table.name], *_columns(table, last))

    async def clear(self, table: Table, column: str, values: Sequence[str]) -> None:
        if values:
            sql = f"DELETE FROM {table.name} WHERE {column} = ANY($1::text[])"
            await self.conn.execute(sql, list(values))


class PgDialect:
    """The database at ``url`` as a :class:`~asyncsports.store._dialect.Dialect`: one
    :class:`PgLink` (reconnected when the database restarts, the call done again), one
    call at a time: callers from several tasks queue, as they do on SQLite's thread.
    ``LISTEN/NOTIFY`` wakes a follower. ``create``: a database without our tables gets
    them (else it is taken as it is: a reader's). ``bulk`` (the backfill's): each connection gets the
    staging tables of :meth:`PgTx.put`, and a write takes no write lock (it logs no
    changes: backfills and workers write side by side)."""

    def __init__(
        self,
        url: str,
        *,
        patience: float = PATIENCE,
        connect_timeout: float = CONNECT_TIMEOUT,
        create: bool = True,
        bulk: bool = False,
    ) -> None:
        self.url = url
        self.name = redact_url(url)
        self.text_order = 'COLLATE "C"'
        self.bulk = bulk
        self.link = PgLink(
            url,
            patience=patience,
            connect_timeout=connect_timeout,
            create=create,
            setup=_stage if bulk else None,
        )
        self._listening: asyncpg.Connection | None = None
        self._woken = asyncio.Event()
        self._turn = asyncio.Lock()

    async def open(self) -> None:
        """Connect now (creating or checking the tables: the opener's errors)."""
        await self._do(lambda conn: conn.fetchval("SELECT 1"))

    async def _do(self, op: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
        async with self._turn:
            return await self.link.do(op)

    async def write(self, body: Callable[[Tx], Awaitable[T]]) -> T:
        async def op(conn: asyncpg.Connection) -> T:
            async with conn.transaction():
                if not self.bulk:
                    await conn.execute("SELECT pg_advisory_xact_lock($1)", WRITE_LOCK)
                return await body(PgTx(conn, self.bulk))

        return await self._do(op)

    async def read(self, body: Callable[[Tx], Awaitable[T]]) -> T:
        async def op(conn: asyncpg.Connection) -> T | NotYet:
            try:
                return await body(PgTx(conn, self.bulk))
            except _asyncpg().exceptions.UndefinedTableError as exc:
                # Returned, not raised: the link would drop a connection that is sound
                # (and the LISTEN on it).
                missing = NotYet(f"{self.name} holds no asyncsports tables yet")
                missing.__cause__ = exc
                return missing

        got = await self._do(op)
        if isinstance(got, NotYet):
            raise got
        return got

    def seen(self) -> None:
        self._woken.clear()

    async def wait(self, at_most: float) -> None:
        """The first call on a connection LISTENs and returns at once: what was
        committed before the LISTEN is read next."""
        if await self._do(self._listen):
            return
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(at_most):
                await self._woken.wait()

    async def _listen(self, conn: asyncpg.Connection) -> bool:
        if self._listening is conn and not conn.is_closed():  # type: ignore[union-attr]
            return False
        self._listening = None
        await conn.add_listener(CHANNEL, self._notified)
        conn.add_termination_listener(self._ended)
        self._listening = conn
        return True

    def _notified(self, *_: Any) -> None:
        self._woken.set()

    def _ended(self, *_: Any) -> None:
        self._listening = None
        self._woken.set()  # the next read reconnects, the next wait() LISTENs again

    def abort(self) -> None:
        self._listening = None
        self.link.abort()

    async def close(self) -> None:
        self._listening = None
        async with self._turn:
            await self.link.close()


# ---------------------------------------------------------------- the reader's snapshot


class PgSnapshot:
    """The database at ``url`` read in one snapshot (a repeatable-read, read-only
    transaction), as a :class:`~asyncsports.store._dialect.Snapshot`: a connection of its
    own (within ``connect_timeout``), no tables created, rows read by a server-side
    cursor."""

    def __init__(self, url: str, connect_timeout: float = CONNECT_TIMEOUT) -> None:
        self.url = url
        self.name = redact_url(url)
        self.text_order = 'COLLATE "C"'
        self.version = 0
        self.tables: list[str] = []
        self.connect_timeout = connect_timeout
        self._conn: asyncpg.Connection | None = None

    async def open(self) -> None:
        try:
            conn = await _asyncpg().connect(self.url, timeout=self.connect_timeout)
        except Exception as exc:
            raise unusable(self.url, exc, self.connect_timeout, verb="read") from exc
        try:
            self.version, self.tables = await self._begin(conn)
        except BaseException:
            await close(conn)
            raise
        self._conn = conn

    async def _begin(self, conn: asyncpg.Connection) -> tuple[int, list[str]]:
        try:
            # One snapshot for every table, even while a backfill or a mirror writes.
            # asyncpg's own transaction: older asyncpg makes cursors only inside one.
            await conn.transaction(isolation="repeatable_read", readonly=True).start()
            names = await conn.fetch(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
            )
            # Another application's tables of our names, or a newer version: refused; so
            # is a database with none of ours (as a SQLite file with none is).
            version = await ours(conn, self.url)
        except SinkError:
            raise
        except Exception as exc:
            raise SinkError(f"cannot read {self.name}: {exc}") from exc
        if version is None:
            raise SinkError(f"cannot read {self.name}: it holds no asyncsports tables")
        return version, [r[0] for r in names]

    async def query(self, sql: str, chunk: int) -> AsyncIterator[list[tuple[Any, ...]]]:
        assert self._conn is not None, "query() before open()"
        try:
            cursor = await self._conn.cursor(sql)  # in the snapshot's transaction
            while rows := await cursor.fetch(chunk):
                yield [tuple(r) for r in rows]
        except SinkError:
            raise
        except Exception as exc:
            raise SinkError(f"cannot read {self.name}: {exc}") from exc

    def plain(self, table: Table, row: Sequence[Any]) -> Row:
        return plain(table, row)

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await close(conn)  # the read-only transaction ends with it


# --------------------------------------------------------------------- the lease's seat

CALL_TIMEOUT = 3.0
"""Seconds the election waits for an answer before it takes the connection for lost."""

ELECTION_SETTINGS: dict[str, str] = {
    # A takeover waits for a fenced transaction under way, not for ever: it tries again.
    "lock_timeout": "2s",
    # A cut network is noticed by the server (the renewing connection's pid is then gone).
    "tcp_keepalives_idle": "5",
    "tcp_keepalives_interval": "2",
    "tcp_keepalives_count": "3",
    "tcp_user_timeout": "10000",
    "application_name": "asyncsports sync (election)",
}
"""Session settings of the connection that takes and renews the lease."""

_LEASE_DDL_LOCK = 0x6173_7370_6C65_6173  # "aspleas": one CREATE TABLE at a time


class PgSeat:
    """The writer lease's :class:`~asyncsports.store._dialect.Seat` in the database at
    ``url``: a :class:`PgLink` of its own that does not wait (``patience=None``), with
    :data:`ELECTION_SETTINGS`.

    The lease row keeps the backend ``pid`` of the connection that renews it, and its
    expiry by the database's own clock (``clock_timestamp()``: the machines' clocks need
    not agree). A holder is gone when that backend is (a process killed: its connection
    closes at once). The writer's :func:`fence` takes a share lock on the row: a
    takeover's ``UPDATE`` waits for it (up to ``lock_timeout``: then a TimeoutError, the
    session kept), so a write that passed the fence commits (or fails) before the new
    writer starts; ``SET LOCAL idle_in_transaction_session_timeout`` frees the row when
    its transaction is stranded by a cut network.

    Each connection checks the mirror's schema (a database that is not the mirror's is
    refused before anything is written to it); a database never reached, or an error
    that is not the database being unreachable, is a SinkError. Once reached, a call
    that finds it unreachable (or no answer within :data:`CALL_TIMEOUT`) raises asyncpg's
    error (or OSError, TimeoutError) and the next call connects again.
    """

    now = "clock_timestamp()"
    later = "clock_timestamp() + ? * interval '1 second'"
    me = {"pid": "pg_backend_pid()"}
    alive = "EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = l.pid)"
    lapsed = "'-infinity'"

    def __init__(self, url: str, connect_timeout: float = CONNECT_TIMEOUT) -> None:
        self.link = PgLink(
            url,
            patience=None,
            settings=ELECTION_SETTINGS,
            setup=_create_lease,
            connect_timeout=connect_timeout,
        )

    async def one(self, sql: str, *args: Any) -> Sequence[Any] | None:
        busy = _asyncpg().exceptions.LockNotAvailableError

        async def op(conn: asyncpg.Connection) -> Any:
            try:
                async with asyncio.timeout(CALL_TIMEOUT):
                    return await conn.fetchrow(_numbered(sql), *args)
            except busy as exc:
                return exc  # a takeover held up: the session is sound

        got = await self.link.do(op)
        if isinstance(got, busy):
            raise TimeoutError(f"{redact_url(self.link.url)}: the lease is held up: {got}") from got
        row: Sequence[Any] | None = got
        return row

    def abort(self) -> None:
        self.link.abort()

    async def close(self) -> None:
        await self.link.close()


async def _create_lease(conn: asyncpg.Connection) -> None:
    """Create the lease's table, one connection at a time."""
    await conn.execute(f"SELECT pg_advisory_lock({_LEASE_DDL_LOCK})")
    try:
        await conn.execute(LEASE_DDL)
    finally:
        await conn.execute(f"SELECT pg_advisory_unlock({_LEASE_DDL_LOCK})")
