"""What the writer lease's tests share (beside tests/storage/conftest.py's ``db``, a new
mirror database of each engine): a fenced write transaction held open, an action row."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import asyncpg

from asyncsports.store import Lease, _pg, _sqlite, is_postgres
from asyncsports.store._sqlite import connect


def action(n: int) -> tuple[object, ...]:
    """An action row of fixture f1 numbered ``n`` (its id ``a<n>``)."""
    return (
        "f1",
        f"a{n}",
        "basketball",
        n,
        "Shot",
        "Confirmed",
        "2026-06-01T12:00:01.250000Z",
        f'{{"id": "a{n}"}}',
    )


@contextlib.asynccontextmanager
async def fenced(db: str, lease: Lease) -> AsyncIterator[Callable[[], Awaitable[None]]]:
    """A write transaction of the holder of ``lease``, fenced and open (a row written into
    table ``t``); yields its commit."""
    if is_postgres(db):
        conn = await asyncpg.connect(db)
        try:
            await conn.execute("CREATE TABLE IF NOT EXISTS t (x int)")
            tx = conn.transaction()
            await tx.start()
            await _pg.fence(conn, lease)  # the row is held until it ends
            await conn.execute("INSERT INTO t VALUES (1)")
            yield tx.commit
        finally:
            await conn.close()
        return
    file = connect(Path(db))
    try:
        file.execute("CREATE TABLE IF NOT EXISTS t (x int)")
        file.execute("BEGIN IMMEDIATE")  # the file's write lock, until it ends
        _sqlite.fence(file, lease)
        file.execute("INSERT INTO t VALUES (1)")

        async def commit() -> None:
            file.execute("COMMIT")

        yield commit
    finally:
        file.close()


class StandIn:
    """What a :class:`~asyncsports.sync.Standby` asks of the job it runs beside its work
    (``Held``): how the log names it (as a mirror) and the lease it is given, kept in
    ``fence``."""

    label = "mirror"
    does = "writes it"
    name = ""
    fence: Lease | None = None

    def held(self, lease: str) -> str:
        return self.name

    def doing(self, lease: str) -> str:
        return f"writing {self.name}"

    def hold(self, lease: Lease | None) -> None:
        self.fence = lease
