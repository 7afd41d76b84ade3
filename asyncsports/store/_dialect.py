"""What a job of the store asks of an engine: :class:`Dialect` and its :class:`Tx`. Pure.

A job (the mirror, its change log) is written once, as coroutines over a :class:`Tx`:
the statements of one transaction or read, with ``?`` placeholders. The engine module
(:mod:`~asyncsports.store._sqlite`, :mod:`~asyncsports.store._pg`) implements both:

- SQLite runs the whole coroutine on its connection's thread, at once: every await of
  its :class:`Tx` is a call that returns without waiting, so a transaction costs one
  hop to the thread, not one per statement.
- PostgreSQL runs it on the event loop, on a connection that outlives the database's
  restarts: a transaction lost with its connection is done again on the next one, so
  a body must be idempotent (the mirror's are: each row is compared before it is
  written).

The reader (:mod:`~asyncsports.store._reader`) reads a :class:`Snapshot` instead: one
read-only transaction, its rows a chunk at a time; the writer lease
(:mod:`~asyncsports.store._lease`) is taken on a :class:`Seat`: a connection of its own,
and the words its statements are written with.

Where the engines' SQL differs (a batch of rows compared and written in one statement,
a change logged with a NOTIFY, the fence's lock), :class:`Tx` has a method saying what
is done, and each engine writes its own statement.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

from asyncsports.store._schema import Table
from asyncsports.store._types import Lease, Row

__all__ = ["Dialect", "Line", "Seat", "Snapshot", "Tx"]

T = TypeVar("T")

Line = tuple[str, str, str, str]
"""A change to log: its op, table, key (JSON array) and row (JSON object)."""


class Tx(Protocol):
    """The statements of one transaction (:meth:`Dialect.write`) or read
    (:meth:`Dialect.read`) on one connection. ``?`` placeholders; values as written
    (time as ISO 8601 text, flags as 0/1)."""

    async def fetch(self, sql: str, *args: Any) -> list[Sequence[Any]]:
        """Every row ``sql`` selects."""
        ...

    async def fetchrow(self, sql: str, *args: Any) -> Sequence[Any] | None:
        """The first row ``sql`` selects (None: none)."""
        ...

    async def execute(self, sql: str, *args: Any) -> None:
        """Run ``sql`` once."""

    async def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run ``sql`` once for each of ``rows`` (none: nothing is run)."""

    def plain(self, table: Table, row: Sequence[Any]) -> Row:
        """A row of ``table`` read back as the values it was written from."""
        ...

    def text_time(self, value: Any) -> str:
        """A ``changes.committed_at`` read back, as ISO 8601 UTC text (microseconds)."""
        ...

    async def fence(self, lease: Lease) -> None:
        """First in a writer's transaction: raise
        :class:`~asyncsports.store._types.Deposed` unless ``lease`` is still ours, and
        hold a takeover up until the transaction ends."""

    async def put_changed(self, table: Table, rows: Sequence[Row]) -> list[tuple[Row, bool]]:
        """Write those of ``rows`` whose content differs from the stored row of their
        key; ``(row, inserted)`` of each written, in the order written (a key given
        twice is written twice, in order)."""
        ...

    async def delete_scope(
        self, table: Table, column: str, value: Any, kept: set[tuple[Any, ...]]
    ) -> list[Row]:
        """Delete the rows of ``table`` with ``column = value`` whose key is not in
        ``kept``; the rows deleted (as :meth:`plain` gives them)."""
        ...

    async def delete(self, table: Table, keys: Sequence[tuple[Any, ...]]) -> None:
        """Delete the rows of ``table`` with these keys."""

    async def log(self, lines: Sequence[Line]) -> None:
        """Append ``lines`` to ``changes`` (``seq`` in this order, committed now) and tell
        the followers (PostgreSQL's NOTIFY)."""

    # The backfill's (asyncsports.store._backfill): rows in bulk, no change log.
    position: str
    """The column of an ``ordered`` table that keeps its insertion order."""

    def now(self) -> Any:
        """This moment, as a ``?`` of a time column takes it."""
        ...

    async def put(self, table: Table, rows: Sequence[Row]) -> None:
        """Write ``rows``, replacing those of the same key (a key given twice: its last
        row is written); in bulk where the dialect has a way (PostgreSQL's COPY)."""

    async def clear(self, table: Table, column: str, values: Sequence[str]) -> None:
        """Delete the rows of ``table`` whose (text) ``column`` is one of ``values``."""


class Dialect(Protocol):
    """One database, on one connection: its jobs' transactions and reads take turns on
    it. ``name`` is how messages name it (a URL without its password)."""

    name: str
    text_order: str
    """The collation that sorts text by its bytes, as SQLite does ('' there)."""

    async def open(self) -> None:
        """Connect now: the database's errors (not there, not ours, unreachable) are the
        opener's."""

    async def write(self, body: Callable[[Tx], Awaitable[T]]) -> T:
        """``body`` in one transaction, one writer of the database at a time (SQLite's
        write lock, a PostgreSQL advisory lock): committed when it returns, rolled back
        when it raises. PostgreSQL: done again on a new connection when the first is lost
        (``body`` is idempotent)."""
        ...

    async def read(self, body: Callable[[Tx], Awaitable[T]]) -> T:
        """``body``'s statements, outside a transaction (each its own snapshot)."""
        ...

    def seen(self) -> None:
        """The changes committed so far are read: a commit from now on ends the next
        :meth:`wait`."""

    async def wait(self, at_most: float) -> None:
        """Until a commit may have been made since :meth:`seen` (PostgreSQL's NOTIFY, a
        SQLite file's next look), ``at_most`` seconds at most."""

    def abort(self) -> None:
        """Drop the connection at once, without waiting (an unfinished transaction is
        rolled back)."""

    async def close(self) -> None:
        """Close the connection."""


class Snapshot(Protocol):
    """One read-only transaction on a database of the store, for the reader: :meth:`open`
    refuses a database that is not there, not ours, newer or without our tables
    (SinkError), and never creates or writes one."""

    name: str
    text_order: str
    version: int
    """The schema version (set by :meth:`open`)."""
    tables: list[str]
    """The names of the database's tables (set by :meth:`open`)."""

    async def open(self) -> None:
        """Connect and start the snapshot."""

    def query(self, sql: str, chunk: int) -> AsyncIterator[list[tuple[Any, ...]]]:
        """The rows a read-only ``sql`` selects in the snapshot, ``chunk`` at a time."""
        ...

    def plain(self, table: Table, row: Sequence[Any]) -> Row:
        """A row of ``table`` read back as the values it was written from."""
        ...

    async def close(self) -> None:
        """Close the connection (the snapshot ends with it)."""


class Seat(Protocol):
    """The connection the writer lease is taken, renewed and given up on, apart from the
    writer's, and the words (SQL) the lease's statements are written with: the
    engine's clock, who holds the lease, and how a holder is told to be gone.

    A database that is not the mirror's, or refuses, is a
    :class:`~asyncsports.errors.SinkError`; one unreachable for now raises anything else.
    """

    now: str
    """This moment, by the lease's clock."""
    later: str
    """``?`` seconds from now."""
    me: dict[str, str]
    """The holder's columns beside ``holder`` (``pid``...), and their values for us."""
    alive: str
    """Whether the holder of lease row ``l`` still runs."""
    lapsed: str
    """An expiry long past."""

    async def one(self, sql: str, *args: Any) -> Sequence[Any] | None:
        """The first row ``sql`` gives (None: none), in a transaction of its own;
        TimeoutError when a fenced write holds it up past the engine's lock wait."""
        ...

    def abort(self) -> None:
        """Drop the connection at once (the next call connects again)."""

    async def close(self) -> None:
        """Close the connection."""
