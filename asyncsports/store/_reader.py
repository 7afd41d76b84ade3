"""Reading a store, SQLite or PostgreSQL, without writing to it: :func:`open`."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from asyncsports.errors import SinkError
from asyncsports.store._pg import (
    _asyncpg,
    is_postgres,
    ours,
    redact_url,
    unusable,
)
from asyncsports.store._schema import ALL_TABLES, Table
from asyncsports.store._sqlite import connect
from asyncsports.store._types import CHUNK, CONNECT_TIMEOUT

__all__ = ["Reader", "open"]

TABLES: dict[str, Table] = {t.name: t for t in ALL_TABLES}
T = TypeVar("T")


class Reader:
    """An open store, read in one snapshot (one read-only transaction), even while
    another process writes it. Made by :func:`open`."""

    def __init__(self, name: str, version: int, tables: Sequence[str]) -> None:
        self.name = name
        """The SQLite file, or the PostgreSQL URL without its password."""
        self.version = version
        """The store's schema version (0: an empty database)."""
        self.tables = [t for t in TABLES if t in tables]
        """The store's tables (those this package describes), in creation order."""

    async def counts(self) -> dict[str, int]:
        """Rows per table."""
        return {t: await self._value(f"SELECT count(*) FROM {t}") for t in self.tables}

    def rows(self, table: str, *, chunk: int = CHUNK) -> AsyncIterator[list[tuple[Any, ...]]]:
        """The rows of ``table`` in key order, ``chunk`` at a time, as tuples in the
        order of its columns (as :mod:`asyncsports.store._schema` describes them)."""
        if table not in self.tables:
            raise SinkError(f"{self.name} has no table {table!r}")
        t = TABLES[table]
        sql = f"SELECT {', '.join(t.names)} FROM {table} ORDER BY {', '.join(t.key)}"
        return self._query(sql, chunk=chunk)

    def _query(self, sql: str, *, chunk: int = CHUNK) -> AsyncIterator[list[tuple[Any, ...]]]:
        """The rows ``sql`` selects, ``chunk`` at a time (for this package's export)."""
        raise NotImplementedError

    async def _value(self, sql: str) -> Any:
        async for rows in self._query(sql, chunk=1):
            return rows[0][0]
        return None


class _SqliteReader(Reader):
    def __init__(self, path: Path, conn: sqlite3.Connection, version: int, tables: Sequence[str]):
        super().__init__(str(path), version, tables)
        self._conn = conn

    async def _run(self, fn: Callable[[], T]) -> T:
        # The connection's errors are SinkErrors naming the file already (store._sqlite).
        return await anyio.to_thread.run_sync(fn)

    async def _query(self, sql: str, *, chunk: int = CHUNK) -> AsyncIterator[list[tuple[Any, ...]]]:
        cursor = await self._run(lambda: self._conn.execute(sql))
        try:
            while rows := await self._run(lambda: cursor.fetchmany(chunk)):
                yield rows
        finally:
            cursor.close()


class _PgReader(Reader):
    def __init__(self, url: str, conn: Any, version: int, tables: Sequence[str]) -> None:
        super().__init__(redact_url(url), version, tables)
        self._conn = conn

    async def _query(self, sql: str, *, chunk: int = CHUNK) -> AsyncIterator[list[tuple[Any, ...]]]:
        try:
            cursor = await self._conn.cursor(sql)  # in the snapshot's transaction
            while rows := await cursor.fetch(chunk):
                yield [tuple(r) for r in rows]
        except SinkError:
            raise
        except Exception as exc:
            raise SinkError(f"cannot read {self.name}: {exc}") from exc


@contextlib.asynccontextmanager
async def open(
    db: str | Path, *, connect_timeout: float = CONNECT_TIMEOUT
) -> AsyncIterator[Reader]:
    """Open the store ``db`` (a SQLite file, or a ``postgresql://`` URL) to read it::

        async with asyncsports.store.open("sports.sqlite") as store:
            print(store.version, await store.counts())
            async for rows in store.rows("fixtures"):
                ...

    Nothing is written to it. A file that does not exist, is not a store, or was
    written by a newer asyncsports is refused (SinkError); so is a database that cannot
    be reached within ``connect_timeout`` seconds.
    """
    if is_postgres(db):
        async with _open_pg(str(db), connect_timeout) as reader:
            yield reader
    else:
        async with _open_sqlite(Path(db)) as sqlite_reader:
            yield sqlite_reader


@contextlib.asynccontextmanager
async def _open_sqlite(path: Path) -> AsyncIterator[Reader]:
    def begin() -> tuple[sqlite3.Connection, int, list[str]]:
        # Checked as every opener checks, read-only, and no file made where there was none
        # (a mistyped path): the connection's errors are SinkErrors naming the file.
        conn = connect(path, readonly=True)
        try:
            conn.execute("BEGIN")  # one snapshot (WAL) from the first read to the last
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master")]
        except BaseException:
            conn.close()
            raise
        return conn, version, names

    conn, version, names = await anyio.to_thread.run_sync(begin)
    try:
        yield _SqliteReader(path, conn, version, names)
    finally:
        conn.close()


@contextlib.asynccontextmanager
async def _open_pg(url: str, connect_timeout: float) -> AsyncIterator[Reader]:
    try:
        conn = await _asyncpg().connect(url, timeout=connect_timeout)
    except Exception as exc:
        raise unusable(url, exc, connect_timeout, verb="read") from exc
    try:
        try:
            # One snapshot for every table, even while a backfill or a mirror writes.
            # asyncpg's own transaction: older asyncpg makes cursors only inside one.
            await conn.transaction(isolation="repeatable_read", readonly=True).start()
            names = [
                r[0]
                for r in await conn.fetch(
                    "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
                )
            ]
            # Another application's tables of our names, or a newer version: refused.
            version = await ours(conn, url) or 0
        except SinkError:
            raise
        except Exception as exc:
            raise SinkError(f"cannot read {redact_url(url)}: {exc}") from exc
        yield _PgReader(url, conn, version, names)
    finally:
        with anyio.CancelScope(shield=True):
            try:
                with anyio.fail_after(5):
                    await conn.close()  # the read-only transaction ends with it
            except Exception:
                conn.terminate()
