"""The mirror's database, written once over a :class:`~asyncsports.store._dialect.Dialect`:
:class:`ChangeLog` (its change feed, read) and :class:`MirrorStore` (its writer).

The mirror's database keeps the resource tables (the backfill's ``fixtures``, ``actions``
and ``statistics``, and ``standings``, ``squads``, ``events``, ``snooker_tournaments`` and
``feed_health``), each row with the record's wire JSON in ``json``, and beside them the
change log, cursors, marks and positions.

A write is one transaction: each row is compared with the stored one and only a row whose
content changed is written, with one line in ``changes`` (``seq`` ascending in commit
order: insert, update or delete, the table, the key and the whole row). So a ``kill -9``
at any moment loses nothing committed, and the change log holds exactly the committed
changes. ``cursors`` keeps where each named consumer of the change feed stands; ``marks``
when each piece of once-in-a-while work was last done, and ``positions`` how many records
of each live feed are committed, so that a restart carries on.

Opened by :func:`asyncsports.store.open_mirror` (the writer, which creates a database
that is not there, and its tables) and :func:`asyncsports.store.open_changes` (a reader,
which never does: a database whose mirror has not made its tables yet reads as empty).
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

import asyncsports.store._sql as _sql
from asyncsports.store._dialect import Dialect, Line, Tx
from asyncsports.store._schema import Table
from asyncsports.store._types import TABLES as COLUMNS
from asyncsports.store._types import ChangeLine, Contents, Lease, NotYet, Row, RowChange, Write

__all__ = ["ChangeLog", "MirrorStore"]

_TABLES: dict[str, Table] = {name: _sql.TABLES[name] for name in COLUMNS}
_COUNTS = _sql.counts(_TABLES)
_DELETED = COLUMNS["fixtures"].index("deleted")
_ENCODE = msgspec.json.Encoder().encode


class ChangeLog:
    """A mirror database's change feed, read on a connection of its own, and its
    consumers' cursors. ``name`` is how messages name it (a URL without its password)."""

    def __init__(self, dialect: Dialect) -> None:
        self.dialect = dialect
        self.name = dialect.name

    async def close(self) -> None:
        """Close the connection (an unfinished transaction is rolled back)."""
        await self.dialect.close()

    def abort(self) -> None:
        """Close it at once, without waiting (a generator's finally may not wait: one left
        unfinished is closed by the garbage collector)."""
        self.dialect.abort()

    async def change_rows(self, after: int, limit: int = 500) -> list[ChangeLine]:
        """The committed changes with ``seq > after`` as stored (key and row as their
        JSON texts), in commit order."""

        async def read(tx: Tx) -> list[ChangeLine]:
            got = await tx.fetch(_sql.CHANGES, after, limit)
            return [ChangeLine(r[0], r[1], r[2], r[3], r[4], tx.text_time(r[5])) for r in got]

        self.dialect.seen()  # a commit from now on ends the next wait()
        try:
            return await self.dialect.read(read)
        except NotYet:
            return []  # the mirror has not made its tables yet: nothing committed

    async def changes(self, after: int, limit: int = 500) -> list[RowChange]:
        """:meth:`change_rows`, decoded."""
        return [line.decoded() for line in await self.change_rows(after, limit)]

    async def head(self) -> int:
        """The last committed change's seq (0: none yet)."""
        return await self._count(_sql.HEAD) or 0

    async def wait(self, at_most: float) -> None:
        """Return when changes may have been committed since the last :meth:`changes`
        (at the latest after ``at_most`` seconds)."""
        await self.dialect.wait(at_most)

    async def cursor(self, name: str) -> int:
        """Where consumer ``name`` stands (0: at the start)."""
        return await self._count(_sql.CURSOR, name) or 0

    async def save_cursor(self, name: str, seq: int) -> None:
        """Consumer ``name`` is done with every change up to ``seq`` (a cursor only moves
        forward: a late save of an older position changes nothing)."""
        await self.dialect.read(lambda tx: tx.execute(_sql.SAVE_CURSOR, name, seq))

    async def contents(self) -> Contents:
        """What the database holds: ``"mirror"`` once a mirror kept anything in it (a
        change logged, a consumer's cursor, a mark, a live feed's position);
        ``"records"`` when it holds records but none of that (a backfill's database: its
        change feed is empty and stays so); ``"nothing"`` when it holds neither."""
        try:
            row = await self._row(_sql.CONTENTS)
        except NotYet:  # no change log: a new database, or an old backfill's
            return "records" if await self._records() else "nothing"
        assert row is not None  # one row of two flags
        if row[0]:
            return "mirror"
        return "records" if row[1] else "nothing"

    async def _records(self) -> bool:
        """Whether any of the record tables that are there holds a row."""
        for table in _TABLES:
            with contextlib.suppress(NotYet):
                if await self._row(f"SELECT 1 FROM {table} LIMIT 1"):
                    return True
        return False

    async def _row(self, sql: str, *args: Any) -> Sequence[Any] | None:
        return await self.dialect.read(lambda tx: tx.fetchrow(sql, *args))

    async def _count(self, sql: str, *args: Any) -> int | None:
        try:
            row = await self._row(sql, *args)
        except NotYet:
            return None  # no tables yet: no change, no cursor
        return int(row[0]) if row is not None and row[0] is not None else None


class MirrorStore(ChangeLog):
    """An open mirror database, written: see the module. With a standby's ``fence`` (its
    lease), each write first checks the lease is ours
    (:class:`~asyncsports.store._types.Deposed` else) and writes nothing else."""

    def __init__(self, dialect: Dialect, fence: Lease | None = None) -> None:
        super().__init__(dialect)
        self.fence = fence

    async def write(
        self,
        writes: Iterable[Write],
        marks: Iterable[str] = (),
        at: float = 0.0,
        unmarks: Iterable[str] = (),
        positions: Mapping[str, int] | None = None,
    ) -> Counter[str]:
        """Apply ``writes``, set ``marks`` to ``at``, remove ``unmarks`` and set the live
        feeds' ``positions``, in one transaction; returns the changes made per table.
        Only rows whose content changed are written, each with one line in ``changes``."""
        todo = list(writes)
        kept: list[tuple[str, list[tuple[Any, ...]]]] = [
            (_sql.UNMARK, [(name,) for name in unmarks]),
            (_sql.MARK, [(name, at) for name in marks]),
            (_sql.SET_POSITION, list((positions or {}).items())),
        ]

        async def write(tx: Tx) -> Counter[str]:
            if self.fence is not None:
                await tx.fence(self.fence)
            changed: Counter[str] = Counter()
            lines: list[Line] = []
            for w in todo:
                changed[w.table] += await _write(tx, w, lines)
            await tx.log(lines)
            for statement, args in kept:
                await tx.executemany(statement, args)
            return changed

        return await self.dialect.write(write)

    async def apply(self, changes: Iterable[RowChange]) -> None:
        """Replay changes from a feed in one transaction (a consumer rebuilding tables): a
        row with its JSON is written as it is, one without (a row gone) is deleted. Only
        each row's last change counts."""
        last = list({(c.table, tuple(c.key)): c for c in changes}.values())

        async def apply(tx: Tx) -> None:
            for name, t in _TABLES.items():
                mine = [c for c in last if c.table == name]
                await tx.delete(t, [tuple(c.key) for c in mine if c.row.get("json") is None])
                kept = [c for c in mine if c.row.get("json") is not None]
                await tx.put(t, [tuple(c.row[k] for k in t.names) for c in kept])

        await self.dialect.write(apply)

    async def marks(self) -> dict[str, float]:
        """Every mark and when it was set."""
        return {r[0]: r[1] for r in await self._fetch(_sql.MARKS)}

    async def rows(self, table: str) -> list[Row]:
        """Every row of ``table`` (values as written: time as text, flags as 0/1), by key
        (text in byte order)."""
        t = _TABLES[table]
        sql = _sql.rows(t, self.dialect.text_order)
        return await self.dialect.read(lambda tx: _plain_rows(tx, t, sql))

    async def counts(self) -> dict[str, int]:
        """Rows per table."""
        return {r[0]: r[1] for r in await self._fetch(_COUNTS)}

    async def fixtures(self) -> list[tuple[str, str, str | None, str | None, bool]]:
        """``(id, sport, season_id, status, deleted)`` of every stored fixture."""
        # In key order, as rows(): the order the mirror plans in is the same on both.
        got = await self._fetch(f"{_sql.MIRROR_FIXTURES} ORDER BY id {self.dialect.text_order}")
        return [(r[0], r[1], r[2], r[3], bool(r[4])) for r in got]

    async def count_actions(self, fixture_id: str) -> int:
        """How many actions of a fixture are stored."""
        return await self._count(_sql.COUNT_ACTIONS, fixture_id) or 0

    async def position(self, name: str) -> int | None:
        """Records of the live feed ``name`` committed (None: it never ran)."""
        return await self._count(_sql.POSITION, name)

    async def has(self, table: str, column: str, value: Any) -> bool:
        """Whether ``table`` holds a row with ``column = value`` (ValueError: no such
        column)."""
        row = await self._row(_sql.has(table, column), value)
        return bool(row is not None and row[0])

    async def _fetch(self, sql: str, *args: Any) -> list[Sequence[Any]]:
        return await self.dialect.read(lambda tx: tx.fetch(sql, *args))


async def _plain_rows(tx: Tx, table: Table, sql: str) -> list[Row]:
    return [tx.plain(table, r) for r in await tx.fetch(sql)]


async def _write(tx: Tx, w: Write, lines: list[Line]) -> int:
    """Write ``w``'s rows that changed and delete its scope's others, adding a line to
    ``lines`` for each; the number of changes."""
    t = _TABLES[w.table]
    nkeys = len(t.key)
    written = await tx.put_changed(t, w.rows)
    for row, inserted in written:
        op = "insert" if inserted else "update"
        if t.name == "fixtures" and row[_DELETED]:
            op = "delete"  # fixtureDeleted: the service says to disregard it
        lines.append(_line(op, t, row))
    gone: list[Row] = []
    if w.scope is not None:
        column, value = w.scope
        kept = {tuple(r[:nkeys]) for r in w.rows}
        gone = sorted(await tx.delete_scope(t, column, value, kept), key=lambda r: r[:nkeys])
        lines += [_line("delete", t, r, gone=True) for r in gone]
    return len(written) + len(gone)


def _line(op: str, t: Table, row: Sequence[Any], *, gone: bool = False) -> Line:
    """The line logging ``row``'s change (``gone``: deleted, its record ``None``). Key and
    row are encoded once, by msgspec, as the bus carries them (a key as ``["a","b"]``)."""
    whole = dict(zip(t.names, row, strict=True))
    if gone:
        whole["json"] = None
    key = _ENCODE(row[: len(t.key)]).decode()
    return op, t.name, key, _ENCODE(whole).decode()
