"""The mirror's PostgreSQL database: the interface and guarantees of the SQLite one.

A write is one transaction. Each table's rows go in by one ``INSERT ... SELECT FROM
unnest(...) ON CONFLICT DO UPDATE ... WHERE (old) IS DISTINCT FROM (new) RETURNING``: the
database compares each row with the stored one and writes (and returns) only those whose
content changed; their lines go into ``changes`` in the same transaction, which ends with a
``NOTIFY`` (:data:`CHANNEL`) carrying the last ``seq``. A transaction that is lost, or
whose commit is not known, is done again on a new connection (:class:`~asyncsports.store._pg.PgLink`): the rows
it did commit compare equal the second time, so nothing is logged twice.

``seq`` is in commit order because each write first takes a transaction-scoped advisory
lock (:data:`FEED_LOCK`): writers to one database take turns, and a follower reading
``seq > cursor`` never passes a change committed later with a smaller ``seq``.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from asyncsports.store._lease_pg import fence
from asyncsports.store._mirror import (
    as_contents,
    as_count,
    as_fixture,
    bookkeeping,
    change_op,
    last_states,
    time_text,
)
from asyncsports.store._pg import PgLink
from asyncsports.store._rows import utc_text
from asyncsports.store._schema import (
    HEALTH_TABLES,
    MIRROR_TABLES,
    PG_CARRIER,
    RESOURCE_TABLES,
    Table,
    pg_convert,
)
from asyncsports.store._sql import (
    CHANGES,
    CONTENTS,
    COUNT_ACTIONS,
    CURSOR,
    HEAD,
    MARKS,
    MIRROR_FIXTURES,
    POSITION,
    SAVE_CURSOR,
    counts,
    has,
    pg,
    rows,
    upsert,
)
from asyncsports.store._types import (
    CONNECT_TIMEOUT,
    PATIENCE,
    ChangeLine,
    Contents,
    Lease,
    Row,
    RowChange,
    Write,
)
from asyncsports.store._urls import redact_url

if TYPE_CHECKING:
    import asyncpg

__all__ = ["CHANNEL", "FEED_LOCK", "PgMirror"]

CHANNEL = "asyncsports_changes"
"""The channel each write NOTIFYs (payload: the last ``seq`` it logged)."""

FEED_LOCK = 0x6173_7370_6F72_7466  # "asportf": one writer of the change feed at a time
T = TypeVar("T")

_TABLES: dict[str, Table] = {t.name: t for t in (*RESOURCE_TABLES, *MIRROR_TABLES, *HEALTH_TABLES)}
_KEY_TYPE = {"text": "text", "int": "bigint"}


def _unnest(t: Table) -> str:
    """The rows as arrays, one per column (``$1``...), turned into the columns' types."""
    arrays = ", ".join(f"${i}::{PG_CARRIER[c.kind]}[]" for i, c in enumerate(t.columns, 1))
    return f"SELECT {', '.join(pg_convert(c) for c in t.columns)} FROM unnest({arrays}) AS v({', '.join(t.names)})"


def _key_types(t: Table) -> list[str]:
    kinds = {c.name: c.kind for c in t.columns}
    return [_KEY_TYPE[kinds[k]] for k in t.key]


def _scope_delete(t: Table, column: str) -> str:
    keys = ", ".join(t.key)
    arrays = ", ".join(f"${i}::{k}[]" for i, k in enumerate(_key_types(t), 2))
    return (
        f"DELETE FROM {t.name} WHERE {column} = $1 "
        f"AND ({keys}) NOT IN (SELECT * FROM unnest({arrays})) "
        f"RETURNING {', '.join(t.names)}"
    )


def _delete(t: Table) -> str:
    keys = ", ".join(t.key)
    arrays = ", ".join(f"${i}::{k}[]" for i, k in enumerate(_key_types(t), 1))
    return f"DELETE FROM {t.name} WHERE ({keys}) IN (SELECT * FROM unnest({arrays}))"


_UPSERT = {
    name: upsert(
        t, _unnest(t), changed=True, returning=f"{', '.join(t.key)}, (xmax = 0) AS inserted"
    )
    for name, t in _TABLES.items()
}
_REPLACE = {name: upsert(t, _unnest(t)) for name, t in _TABLES.items()}
_DELETE = {name: _delete(t) for name, t in _TABLES.items()}
# Keys in byte order, as SQLite sorts them (not the database's collation).
_ROWS = {name: pg(rows(t, 'COLLATE "C"')) for name, t in _TABLES.items()}
_COUNTS = counts(_TABLES)
_CHANGES, _HEAD, _CURSOR, _SAVE_CURSOR, _MARKS, _POSITION, _COUNT_ACTIONS = map(
    pg, (CHANGES, HEAD, CURSOR, SAVE_CURSOR, MARKS, POSITION, COUNT_ACTIONS)
)
_LOG = (
    "WITH c AS (INSERT INTO changes (committed_at, op, tbl, key, row) "
    "SELECT $1::timestamptz, o, t, k, r "
    "FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS u(o, t, k, r, i) "
    "ORDER BY i RETURNING seq) "
    f"SELECT pg_notify('{CHANNEL}', max(seq)::text) FROM c"
)


def _plain(t: Table, record: Sequence[Any]) -> Row:
    """A row read back as the values it was written from (time as text, flags 0/1)."""
    out = []
    for c, v in zip(t.columns, record, strict=True):
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
    twice): almost always one; a row written twice in a write is logged twice, in order,
    as SQLite logs it."""
    layers: list[list[Row]] = []
    seen: list[set[tuple[Any, ...]]] = []
    depth: dict[tuple[Any, ...], int] = {}
    for row in rows:
        key = tuple(row[:nkeys])
        n = depth.get(key, -1) + 1
        depth[key] = n
        if n == len(layers):
            layers.append([])
            seen.append(set())
        layers[n].append(row)
    return layers


class PgMirror:
    """An open mirror database on PostgreSQL: see :class:`~asyncsports.store._types.MirrorStore`.

    Every call goes through one :class:`~asyncsports.store._pg.PgLink` (one connection, reconnected when the
    database restarts, the call done again), one call at a time: callers from several
    tasks queue, as they do on SQLite's one thread.
    """

    def __init__(
        self,
        url: str,
        *,
        patience: float = PATIENCE,
        connect_timeout: float = CONNECT_TIMEOUT,
        fence: Lease | None = None,
    ) -> None:
        self.url = url
        self.name = redact_url(url)
        self.fence = fence  # a standby's lease: each write first checks it is still ours
        self.link = PgLink(url, patience=patience, connect_timeout=connect_timeout)
        self._listening: asyncpg.Connection | None = None
        self._woken = asyncio.Event()
        self._turn = asyncio.Lock()

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        patience: float = PATIENCE,
        connect_timeout: float = CONNECT_TIMEOUT,
        fence: Lease | None = None,
    ) -> PgMirror:
        """Connect, create the tables if needed (checking the schema's version)."""
        mirror = cls(url, patience=patience, connect_timeout=connect_timeout, fence=fence)
        await mirror._do(lambda conn: conn.fetchval("SELECT 1"))
        return mirror

    async def _do(self, op: Callable[[asyncpg.Connection], Awaitable[T]]) -> T:
        async with self._turn:
            return await self.link.do(op)

    async def close(self) -> None:
        """Close the connection."""
        self._listening = None
        async with self._turn:
            await self.link.close()

    def abort(self) -> None:
        """Drop the connection at once (the server rolls back what was under way)."""
        self._listening = None
        self.link.abort()

    # ------------------------------------------------------------------ writes

    async def write(
        self,
        writes: Iterable[Write],
        marks: Iterable[str] = (),
        at: float = 0.0,
        unmarks: Iterable[str] = (),
        positions: Mapping[str, int] | None = None,
    ) -> Counter[str]:
        """As :meth:`~asyncsports.store._types.MirrorStore.write`."""
        todo = list(writes)
        kept = bookkeeping(marks, at, unmarks, positions)

        async def op(conn: asyncpg.Connection) -> Counter[str]:
            changed: Counter[str] = Counter()
            lines: list[tuple[str, str, str, str]] = []
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock($1)", FEED_LOCK)
                if self.fence is not None:
                    await fence(conn, self.fence)
                for w in todo:
                    changed[w.table] += await self._write(conn, w, lines)
                if lines:
                    ops, tables, keys, rows = (list(x) for x in zip(*lines, strict=True))
                    now = dt.datetime.now(dt.UTC)
                    await conn.execute(_LOG, now, ops, tables, keys, rows)
                for statement, args in kept:
                    if args:  # older asyncpg refuses an empty executemany
                        await conn.executemany(pg(statement), args)
            return changed

        return await self._do(op)

    async def _write(
        self, conn: asyncpg.Connection, w: Write, lines: list[tuple[str, str, str, str]]
    ) -> int:
        t = _TABLES[w.table]
        nkeys = len(t.key)
        changed = 0
        for layer in _layers(w.rows, nkeys):
            got = await conn.fetch(_UPSERT[t.name], *_columns(t, layer))
            done = {tuple(r[:nkeys]): r["inserted"] for r in got}
            for row in layer:
                key = tuple(row[:nkeys])
                if key in done:
                    op = change_op(t.name, row, inserted=done[key])
                    lines.append(_line(op, t, key, row))
                    changed += 1
        if w.scope is not None:
            column, value = w.scope
            kept = [list(k) for k in zip(*{tuple(r[:nkeys]) for r in w.rows}, strict=True)]
            gone = await conn.fetch(_scope_delete(t, column), value, *(kept or [[]] * nkeys))
            for r in sorted((_plain(t, r) for r in gone), key=lambda r: r[:nkeys]):
                lines.append(_line("delete", t, r[:nkeys], (*r[:-1], None)))
                changed += 1
        return changed

    async def apply(self, changes: Iterable[RowChange]) -> None:
        """As :meth:`~asyncsports.store._types.MirrorStore.apply`."""
        last = list(last_states(changes).values())

        async def op(conn: asyncpg.Connection) -> None:
            async with conn.transaction():
                for name, t in _TABLES.items():
                    mine = [c for c in last if c.table == name]
                    gone = [c.key for c in mine if c.row.get("json") is None]
                    kept = [tuple(c.row[k] for k in t.names) for c in mine if c.row.get("json")]
                    if gone:
                        await conn.execute(
                            _DELETE[name], *(list(k) for k in zip(*gone, strict=True))
                        )
                    if kept:
                        await conn.execute(_REPLACE[name], *_columns(t, kept))

        await self._do(op)

    async def save_cursor(self, name: str, seq: int) -> None:
        """As :meth:`~asyncsports.store._types.MirrorStore.save_cursor`."""
        await self._do(lambda conn: conn.execute(_SAVE_CURSOR, name, seq))

    # ------------------------------------------------------------------ the feed

    async def changes(self, after: int, limit: int = 500) -> list[RowChange]:
        """As :meth:`~asyncsports.store._types.MirrorStore.changes`."""
        return [line.decoded() for line in await self.change_rows(after, limit)]

    async def change_rows(self, after: int, limit: int = 500) -> list[ChangeLine]:
        """As :meth:`~asyncsports.store._types.MirrorStore.change_rows`."""

        async def op(conn: asyncpg.Connection) -> list[ChangeLine]:
            self._woken.clear()  # a NOTIFY from now on wakes the next wait()
            got = await conn.fetch(_CHANGES, after, limit)
            return [ChangeLine(r[0], r[1], r[2], r[3], r[4], time_text(r[5])) for r in got]

        return await self._do(op)

    async def head(self) -> int:
        """As :meth:`~asyncsports.store._types.MirrorStore.head`."""
        return as_count(await self._do(lambda conn: conn.fetchrow(_HEAD))) or 0

    async def wait(self, at_most: float) -> None:
        """Until a write's NOTIFY (or the connection's end, or ``at_most`` seconds). The first
        call on a connection LISTENs and returns at once: what was committed before
        the LISTEN is read by the next :meth:`changes`."""
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
        self._woken.set()  # the next changes() reconnects, the next wait() LISTENs again

    # ------------------------------------------------------------------ reads

    async def cursor(self, name: str) -> int:
        """As :meth:`~asyncsports.store._types.MirrorStore.cursor`."""
        return as_count(await self._do(lambda c: c.fetchrow(_CURSOR, name))) or 0

    async def marks(self) -> dict[str, float]:
        """As :meth:`~asyncsports.store._types.MirrorStore.marks`."""
        return {r[0]: r[1] for r in await self._do(lambda c: c.fetch(_MARKS))}

    async def rows(self, table: str) -> list[Row]:
        """As :meth:`~asyncsports.store._types.MirrorStore.rows`."""
        t = _TABLES[table]
        return [_plain(t, r) for r in await self._do(lambda c: c.fetch(_ROWS[table]))]

    async def counts(self) -> dict[str, int]:
        """As :meth:`~asyncsports.store._types.MirrorStore.counts`."""
        return {r[0]: r[1] for r in await self._do(lambda c: c.fetch(_COUNTS))}

    async def fixtures(self) -> list[tuple[str, str, str | None, str | None, bool]]:
        """As :meth:`~asyncsports.store._types.MirrorStore.fixtures`."""
        return [as_fixture(r) for r in await self._do(lambda c: c.fetch(MIRROR_FIXTURES))]

    async def count_actions(self, fixture_id: str) -> int:
        """As :meth:`~asyncsports.store._types.MirrorStore.count_actions`."""
        return as_count(await self._do(lambda c: c.fetchrow(_COUNT_ACTIONS, fixture_id))) or 0

    async def position(self, name: str) -> int | None:
        """As :meth:`~asyncsports.store._types.MirrorStore.position`."""
        return as_count(await self._do(lambda c: c.fetchrow(_POSITION, name)))

    async def has(self, table: str, column: str, value: Any) -> bool:
        """As :meth:`~asyncsports.store._types.MirrorStore.has`."""
        q = pg(has(table, column))
        return bool(await self._do(lambda c: c.fetchval(q, value)))

    async def contents(self) -> Contents:
        """As :meth:`~asyncsports.store._types.MirrorStore.contents`."""
        return as_contents(await self._do(lambda c: c.fetchrow(CONTENTS)))


def _line(op: str, t: Table, key: Sequence[Any], row: Sequence[Any]) -> tuple[str, str, str, str]:
    whole = dict(zip(t.names, row, strict=True))
    return op, t.name, json.dumps(list(key)), json.dumps(whole)
