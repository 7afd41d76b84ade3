"""Reading a PostgreSQL database of the store (:class:`~asyncsports.store._reader.Reader`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from asyncsports.errors import SinkError
from asyncsports.store._pg import _asyncpg, ours, plain, unusable
from asyncsports.store._pg import close as drop
from asyncsports.store._reader import Reader
from asyncsports.store._schema import Table
from asyncsports.store._types import CHUNK, Row
from asyncsports.store._urls import redact_url

__all__ = ["PgReader"]


class PgReader(Reader):
    """The database at ``url``, read in one snapshot (a repeatable-read transaction)."""

    def __init__(self, url: str, conn: Any, version: int, tables: Sequence[str]) -> None:
        super().__init__(redact_url(url), version, tables, 'COLLATE "C"')
        self._conn = conn

    @classmethod
    async def open(cls, url: str, connect_timeout: float) -> PgReader:
        """Connect (within ``connect_timeout``), start the snapshot, check the schema."""
        try:
            conn = await _asyncpg().connect(url, timeout=connect_timeout)
        except Exception as exc:
            raise unusable(url, exc, connect_timeout, verb="read") from exc
        try:
            version, names = await _begin(conn, url)
        except BaseException:
            await drop(conn)
            raise
        return cls(url, conn, version, names)

    async def query(self, sql: str, *, chunk: int = CHUNK) -> AsyncIterator[list[tuple[Any, ...]]]:
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
        await drop(self._conn)  # the read-only transaction ends with it


async def _begin(conn: Any, url: str) -> tuple[int, list[str]]:
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
        # Another application's tables of our names, or a newer version: refused; so is
        # a database with none of ours (as a SQLite file with none is).
        version = await ours(conn, url)
        if version is None:
            raise SinkError(f"cannot read {redact_url(url)}: it holds no asyncsports tables")
        return version, names
    except SinkError:
        raise
    except Exception as exc:
        raise SinkError(f"cannot read {redact_url(url)}: {exc}") from exc
