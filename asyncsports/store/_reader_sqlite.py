"""Reading a SQLite file of the store (:class:`~asyncsports.store._reader.Reader`), on a
:class:`~asyncsports.store._sqlite.SqliteThread`."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

from asyncsports.store._reader import Reader
from asyncsports.store._sqlite import SqliteThread, connect
from asyncsports.store._types import CHUNK

__all__ = ["SqliteReader"]


class SqliteReader(Reader):
    """The file at ``path``, read in one snapshot (a WAL read transaction)."""

    def __init__(
        self,
        path: Path,
        thread: SqliteThread[sqlite3.Connection],
        version: int,
        tables: Sequence[str],
    ) -> None:
        super().__init__(str(path), version, tables)
        self._thread = thread

    @classmethod
    async def open(cls, path: Path) -> SqliteReader:
        """Open the file read-only: checked as every opener checks it, and no file made
        where there was none (a mistyped path)."""
        thread = SqliteThread(
            lambda: connect(path, readonly=True),
            sqlite3.Connection.close,
            name="asyncsports-reader",
        )
        try:
            version, names = await thread.call(_begin)
        except BaseException:
            await thread.close()
            raise
        return cls(path, thread, version, names)

    async def query(self, sql: str, *, chunk: int = CHUNK) -> AsyncIterator[list[tuple[Any, ...]]]:
        # The connection's errors are SinkErrors naming the file already (store._sqlite).
        cursor = await self._thread.call(lambda db: db.execute(sql))
        try:
            while rows := await self._thread.call(lambda _: cursor.fetchmany(chunk)):
                yield rows
        finally:
            cursor.close()

    async def close(self) -> None:
        await self._thread.close()


def _begin(db: sqlite3.Connection) -> tuple[int, list[str]]:
    db.execute("BEGIN")  # one snapshot (WAL) from the first read to the last
    version = db.execute("PRAGMA user_version").fetchone()[0]
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master")]
    return version, names
