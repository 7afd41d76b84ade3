"""A PostgreSQL database of the store (asyncpg): connecting, checking, creating the tables;
what its errors mean; and :class:`PgLink`, the one reconnect rule.

The tables come from :mod:`asyncsports.store._schema`, as SQLite's do. A database that
cannot be reached at the start fails at once, within the connect timeout
(:data:`~asyncsports.store._types.CONNECT_TIMEOUT`), naming its host and port. When it
dies or restarts later, a :class:`PgLink` backs off and does the operation again on a new
connection, for up to ``patience`` seconds.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from asyncsports._optional import need
from asyncsports.errors import AsyncSportsError, SinkError
from asyncsports.store._schema import (
    ALL_TABLES,
    RESOURCE_TABLES,
    SCHEMA_VERSION,
    pg_ddl,
)
from asyncsports.store._types import CONNECT_TIMEOUT, PATIENCE
from asyncsports.store._urls import address, redact_url

if TYPE_CHECKING:
    import asyncpg

__all__ = [
    "PgLink",
    "address",
    "close",
    "connect",
    "failed",
    "ours",
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
    url: str, *, connect_timeout: float = CONNECT_TIMEOUT, settings: dict[str, str] | None = None
) -> asyncpg.Connection:
    """A connection to ``url`` (within ``connect_timeout`` seconds; ``settings``: the
    session's), the tables created or migrated if needed.

    Tables at this version: no DDL. ``CREATE INDEX IF NOT EXISTS`` waits for a lock on its
    table even when the index is there, so a second connection (a feed's follower, a
    reader) would wait on a writer's open transaction, and forever when that writer is in
    the same process waiting on it.
    """
    conn = await _asyncpg().connect(url, timeout=connect_timeout, server_settings=settings)
    try:
        if await ours(conn, url) != SCHEMA_VERSION:
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
    ) -> None:
        self.url = url
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
                self.url, connect_timeout=self.connect_timeout, settings=self._settings
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
