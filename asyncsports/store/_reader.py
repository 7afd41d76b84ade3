"""Reading a store without writing to it, written once over either engine's
:class:`~asyncsports.store._dialect.Snapshot`: :class:`Reader`.

Opened by :func:`asyncsports.store.open`: the rows a query selects, a chunk at a time,
in one snapshot (:class:`~asyncsports.store._sqlite.SqliteSnapshot`,
:class:`~asyncsports.store._pg.PgSnapshot`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import asyncsports.store._sql as _sql
from asyncsports.errors import SinkError
from asyncsports.store._dialect import Snapshot
from asyncsports.store._schema import ALL_TABLES, Table
from asyncsports.store._types import CHUNK, Row

__all__ = ["Reader"]

TABLES: dict[str, Table] = {t.name: t for t in ALL_TABLES}


class Reader:
    """An open store, read in one snapshot (one read-only transaction), even while
    another process writes it. Made by :func:`open`, on an opened ``snapshot``."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.name = snapshot.name
        """The SQLite file, or the PostgreSQL URL without its password."""
        self.version = snapshot.version
        """The store's schema version (0: an empty database)."""
        self.tables = [t for t in TABLES if t in snapshot.tables]
        """The store's tables (those this package describes), in creation order."""

    async def counts(self) -> dict[str, int]:
        """Rows per table."""
        return {t: await self.value(f"SELECT count(*) FROM {t}") for t in self.tables}

    async def rows(self, table: str, *, chunk: int = CHUNK) -> AsyncIterator[list[Row]]:
        """The rows of ``table`` in key order (text by its bytes), ``chunk`` at a time, as
        tuples in the order of its columns (as :mod:`asyncsports.store._schema` describes
        them), with the values as written (time as ISO 8601 text, flags as 0/1), as the
        mirror's ``rows()`` reads them."""
        if table not in self.tables:
            raise SinkError(f"{self.name} has no table {table!r}")
        t = TABLES[table]
        async for rows in self.query(_sql.rows(t, self.snapshot.text_order), chunk=chunk):
            yield [self.snapshot.plain(t, r) for r in rows]

    def query(self, sql: str, *, chunk: int = CHUNK) -> AsyncIterator[list[tuple[Any, ...]]]:
        """The rows a read-only ``sql`` selects in the snapshot, ``chunk`` at a time (the
        export's joins: :meth:`rows` reads one table)."""
        return self.snapshot.query(sql, chunk)

    async def close(self) -> None:
        """Close the connection (the snapshot ends with it)."""
        await self.snapshot.close()

    async def value(self, sql: str) -> Any:
        """The first column of the first row ``sql`` selects (None: no row)."""
        async for rows in self.query(sql, chunk=1):
            return rows[0][0]
        return None
