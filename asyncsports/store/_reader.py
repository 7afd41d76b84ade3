"""Reading a store without writing to it, apart from either engine: :class:`Reader`.

Opened by :func:`asyncsports.store.open`; each engine's reader
(:mod:`~asyncsports.store._reader_sqlite`, :mod:`~asyncsports.store._reader_pg`) gives
the rows a query selects, a chunk at a time, in one snapshot.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from asyncsports.errors import SinkError
from asyncsports.store._schema import ALL_TABLES, Table
from asyncsports.store._types import CHUNK

__all__ = ["Reader"]

TABLES: dict[str, Table] = {t.name: t for t in ALL_TABLES}


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
        return {t: await self.value(f"SELECT count(*) FROM {t}") for t in self.tables}

    def rows(self, table: str, *, chunk: int = CHUNK) -> AsyncIterator[list[tuple[Any, ...]]]:
        """The rows of ``table`` in key order, ``chunk`` at a time, as tuples in the
        order of its columns (as :mod:`asyncsports.store._schema` describes them)."""
        if table not in self.tables:
            raise SinkError(f"{self.name} has no table {table!r}")
        t = TABLES[table]
        sql = f"SELECT {', '.join(t.names)} FROM {table} ORDER BY {', '.join(t.key)}"
        return self.query(sql, chunk=chunk)

    def query(self, sql: str, *, chunk: int = CHUNK) -> AsyncIterator[list[tuple[Any, ...]]]:
        """The rows a read-only ``sql`` selects in the snapshot, ``chunk`` at a time (the
        export's joins: :meth:`rows` reads one table)."""
        raise NotImplementedError

    async def close(self) -> None:
        """Close the connection (the snapshot ends with it)."""
        raise NotImplementedError

    async def value(self, sql: str) -> Any:
        """The first column of the first row ``sql`` selects (None: no row)."""
        async for rows in self.query(sql, chunk=1):
            return rows[0][0]
        return None
