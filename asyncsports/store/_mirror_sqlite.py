"""The mirror's SQLite file: :class:`Store` (one connection, blocking) and
:class:`SqliteMirror`, the same behind the async :class:`~asyncsports.store._types.MirrorStore`
(see :mod:`asyncsports.store._mirror`). A follower of the change feed polls (:data:`POLL`).
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable, Coroutine, Iterable, Mapping
from pathlib import Path
from typing import Any, Concatenate, Generic, ParamSpec, TypeVar

import asyncsports.store._sql as _sql
from asyncsports.store._lease_sqlite import fence as sqlite_fence
from asyncsports.store._mirror import (
    as_contents,
    as_count,
    as_fixture,
    bookkeeping,
    change_op,
    last_states,
    now_text,
)
from asyncsports.store._sqlite import SqliteThread, Transaction, connect
from asyncsports.store._types import (
    KEYS,
    POLL,
    TABLES,
    ChangeLine,
    Contents,
    Lease,
    Row,
    RowChange,
    Write,
)

__all__ = ["SqliteMirror", "Store"]

T = TypeVar("T")
P = ParamSpec("P")

_BY_KEY = {t: _sql.by_key(_sql.TABLES[t]) for t in TABLES}
_PUT = {t: _sql.upsert(_sql.TABLES[t]) for t in TABLES}
_DELETE = {t: _sql.delete_key(_sql.TABLES[t]) for t in TABLES}
_ROWS = {t: _sql.rows(_sql.TABLES[t]) for t in TABLES}
_COUNTS = _sql.counts(TABLES)
# One line at a time: PostgreSQL's one statement a write (arrays, NOTIFY) has no match here.
_LOG = "INSERT INTO changes (committed_at, op, tbl, key, row) VALUES (?, ?, ?, ?, ?)"


class Store:
    """An open mirror database; with a standby's ``fence`` (its lease), each write first
    checks the lease is ours."""

    def __init__(self, path: str | Path, fence: Lease | None = None) -> None:
        self.path = Path(path)
        self.fence = fence
        self._db = connect(self.path)

    def close(self) -> None:
        """Close the connection (an unfinished transaction is rolled back)."""
        self._db.close()

    def write(
        self,
        writes: Iterable[Write],
        marks: Iterable[str] = (),
        at: float = 0.0,
        unmarks: Iterable[str] = (),
        positions: Mapping[str, int] | None = None,
    ) -> Counter[str]:
        """Apply ``writes``, set ``marks`` to ``at``, remove ``unmarks`` and set the live
        feeds' ``positions``, in one transaction; returns the changes made per table."""
        changed: Counter[str] = Counter()
        with Transaction(self._db, self.path):
            if self.fence is not None:
                sqlite_fence(self._db, self.fence)
            now = now_text()
            for w in writes:
                changed[w.table] += self._apply(w, now)
            for statement, args in bookkeeping(marks, at, unmarks, positions):
                self._db.executemany(statement, args)
        return changed

    def _apply(self, w: Write, now: str) -> int:
        table, cols = w.table, TABLES[w.table]
        nkeys = len(KEYS[table])
        changed = 0
        seen: set[tuple[Any, ...]] = set()
        for row in w.rows:
            key = tuple(row[:nkeys])
            seen.add(key)
            old = self._db.execute(_BY_KEY[table], key).fetchone()
            if old is not None and tuple(old) == tuple(row):
                continue  # the same content: no write, no change
            self._db.execute(_PUT[table], row)
            op = change_op(table, row, inserted=old is None)
            self._log(now, op, table, key, dict(zip(cols, row, strict=True)))
            changed += 1
        if w.scope is not None:
            column, value = w.scope
            for old in self._db.execute(f"SELECT * FROM {table} WHERE {column} = ?", (value,)):
                key = tuple(old[:nkeys])
                if key not in seen:
                    self._db.execute(_DELETE[table], key)
                    gone = dict(zip(cols, old, strict=True)) | {"json": None}
                    self._log(now, "delete", table, key, gone)
                    changed += 1
        return changed

    def _log(self, now: str, op: str, table: str, key: Row, row: dict[str, Any]) -> None:
        self._db.execute(_LOG, (now, op, table, json.dumps(list(key)), json.dumps(row)))

    def apply(self, changes: Iterable[RowChange]) -> None:
        """Replay changes from a feed, in one transaction (a consumer rebuilding tables):
        a row with its JSON is written as it is, one without (a row gone) is deleted."""
        with Transaction(self._db, self.path):
            for c in last_states(changes).values():
                if c.row.get("json") is None:
                    self._db.execute(_DELETE[c.table], c.key)
                else:
                    self._db.execute(_PUT[c.table], [c.row[k] for k in TABLES[c.table]])

    def changes(self, after: int, limit: int = 500) -> list[RowChange]:
        """Committed changes with ``seq > after``, in commit order."""
        return [line.decoded() for line in self.change_rows(after, limit)]

    def change_rows(self, after: int, limit: int = 500) -> list[ChangeLine]:
        """:meth:`changes` as stored: key and row as their JSON texts."""
        return [ChangeLine(*r) for r in self._db.execute(_sql.CHANGES, (after, limit))]

    def head(self) -> int:
        """The last change's seq (0: none yet)."""
        return as_count(self._db.execute(_sql.HEAD).fetchone()) or 0

    def cursor(self, name: str) -> int:
        """Where consumer ``name`` stands (0: at the start)."""
        return as_count(self._db.execute(_sql.CURSOR, (name,)).fetchone()) or 0

    def save_cursor(self, name: str, seq: int) -> None:
        """Remember that consumer ``name`` is done with every change up to ``seq`` (a
        cursor only moves forward: a late save of an older position changes nothing)."""
        self._db.execute(_sql.SAVE_CURSOR, (name, seq))

    def marks(self) -> dict[str, float]:
        """Every mark and when it was set."""
        return dict(self._db.execute(_sql.MARKS).fetchall())

    def rows(self, table: str) -> list[Row]:
        """Every row of ``table``, ordered by key."""
        return [tuple(r) for r in self._db.execute(_ROWS[table])]

    def counts(self) -> dict[str, int]:
        """Rows per table."""
        return dict(self._db.execute(_COUNTS).fetchall())

    def fixtures(self) -> list[tuple[str, str, str | None, str | None, bool]]:
        """``(id, sport, season_id, status, deleted)`` of every stored fixture."""
        return [as_fixture(r) for r in self._db.execute(_sql.MIRROR_FIXTURES)]

    def count_actions(self, fixture_id: str) -> int:
        """How many actions of a fixture are stored."""
        return as_count(self._db.execute(_sql.COUNT_ACTIONS, (fixture_id,)).fetchone()) or 0

    def position(self, name: str) -> int | None:
        """Records of the live feed ``name`` committed (None: it never ran)."""
        return as_count(self._db.execute(_sql.POSITION, (name,)).fetchone())

    def has(self, table: str, column: str, value: Any) -> bool:
        """Whether ``table`` holds a row with ``column = value`` (ValueError: no such
        column)."""
        return bool(self._db.execute(_sql.has(table, column), (value,)).fetchone()[0])

    def contents(self) -> Contents:
        """What the database holds (see :meth:`~asyncsports.store._types.MirrorStore.contents`)."""
        return as_contents(self._db.execute(_sql.CONTENTS).fetchone())


class _OnThread(Generic[P, T]):
    """A :class:`Store` method as a coroutine method of :class:`SqliteMirror`: run on its
    thread, with the same arguments."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[Concatenate[Store, P], T]) -> None:
        self.fn = fn

    def __get__(self, mirror: SqliteMirror, owner: object) -> Callable[P, Coroutine[Any, Any, T]]:
        fn = self.fn

        async def call(*args: P.args, **kwargs: P.kwargs) -> T:
            return await mirror.thread.call(lambda store: fn(store, *args, **kwargs))

        return call


class SqliteMirror:
    """A :class:`Store` behind the async interface of
    :class:`~asyncsports.store._types.MirrorStore`: every call runs on its
    :class:`~asyncsports.store._sqlite.SqliteThread` (a call and the close never overlap)."""

    def __init__(self, path: Path, thread: SqliteThread[Store]) -> None:
        self.name = str(path)
        self.thread = thread

    @classmethod
    async def open(cls, path: Path, fence: Lease | None = None) -> SqliteMirror:
        """Open (or create) the file at ``path`` (``fence``: see :class:`Store`)."""
        thread = SqliteThread(lambda: Store(path, fence), Store.close, name="mirror-db")
        try:
            await thread.call(lambda store: None)
        except BaseException:
            thread.abort()
            raise
        return cls(path, thread)

    async def close(self) -> None:
        """Close the connection (an unfinished transaction is rolled back)."""
        await self.thread.close()

    def abort(self) -> None:
        """As :meth:`~asyncsports.store._types.MirrorStore.abort`: closed on its thread,
        not waited for."""
        self.thread.abort()

    async def apply(self, changes: Iterable[RowChange]) -> None:
        """As :meth:`~asyncsports.store._types.MirrorStore.apply`."""
        todo = list(changes)
        await self.thread.call(lambda store: store.apply(todo))

    async def wait(self, at_most: float) -> None:
        """A SQLite file tells no one of its commits: look again after :data:`POLL`."""
        await asyncio.sleep(min(at_most, POLL))

    # The rest of MirrorStore: Store's method of the same name, run on the thread.
    write = _OnThread(Store.write)
    changes = _OnThread(Store.changes)
    change_rows = _OnThread(Store.change_rows)
    head = _OnThread(Store.head)
    cursor = _OnThread(Store.cursor)
    save_cursor = _OnThread(Store.save_cursor)
    marks = _OnThread(Store.marks)
    rows = _OnThread(Store.rows)
    counts = _OnThread(Store.counts)
    fixtures = _OnThread(Store.fixtures)
    count_actions = _OnThread(Store.count_actions)
    position = _OnThread(Store.position)
    has = _OnThread(Store.has)
    contents = _OnThread(Store.contents)
