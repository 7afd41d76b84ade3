"""Who writes a mirror: a lease row in its own database, with a fencing term, written once
over either engine's :class:`~asyncsports.store._dialect.Seat`.

Two or more ``asyncsports sync`` processes may follow one database; one writes, the
others stand by. The row ``sync_lease`` (one per lease ``name``) says which: its ``term``
(raised at each takeover: the fencing token), its ``holder``, how to tell that the holder
is gone before the lease lapses, and when it ``expires``.

- :meth:`Election.take` makes the caller the holder when the row is free, lapsed, or its
  holder is gone (a process killed: the takeover need not wait for the lapse); it reads
  first, so a standby polling while the writer holds the lease takes no lock.
- :meth:`Election.renew` pushes the expiry on while the term is still the caller's;
  :meth:`Election.release` gives the lease up (a clean stop).
- The writer's every transaction is fenced (each engine's ``fence``): it first checks,
  inside the transaction and under the lock a takeover must wait for, that the term is
  the caller's and unexpired, and raises :class:`~asyncsports.store._types.Deposed`
  else. So a write that passed the fence commits before a new writer starts, and a
  deposed writer writes nothing.

Each statement is written here once, in the seat's words: its clock, who holds the lease
and how a holder is told to be gone (:class:`~asyncsports.store._pg.PgSeat`: the
database's clock, its renewing connection's backend;
:class:`~asyncsports.store._sqlite.SqliteSeat`: the machine's clock, its pid).
"""

from __future__ import annotations

from pathlib import Path

from asyncsports.store._dialect import Seat
from asyncsports.store._pg import PgSeat
from asyncsports.store._sqlite import SqliteSeat
from asyncsports.store._types import CONNECT_TIMEOUT, Lease
from asyncsports.store._urls import is_postgres

__all__ = ["Election"]


class Election:
    """Takes, renews and gives up the lease ``name`` of the mirror database ``db`` (a
    SQLite path or a ``postgresql://`` URL) for ``who``.

    The first call checks the database is the mirror's (a SQLite file is created if it
    is not there); one never reached, or not the mirror's, is a
    :class:`~asyncsports.errors.SinkError`. Once reached, a call that finds it unreachable
    raises the engine's error (or OSError, TimeoutError: also a fenced write holding it
    up past the engine's lock wait); the next call tries again.
    """

    def __init__(
        self, db: str | Path, name: str, who: str, connect_timeout: float = CONNECT_TIMEOUT
    ) -> None:
        self.name = name
        self.who = who
        seat: Seat = (
            PgSeat(str(db), connect_timeout) if is_postgres(db) else SqliteSeat(Path(db), name)
        )
        self.seat = seat
        now, alive, mine = seat.now, seat.alive, ", ".join(seat.me)
        self._free = (
            "SELECT NOT EXISTS (SELECT 1 FROM sync_lease l WHERE l.name = ? "
            f"AND l.expires > {now} AND {alive})"
        )
        self._take = (
            f"INSERT INTO sync_lease AS l (name, term, holder, {mine}, expires) "
            f"VALUES (?, 1, ?, {', '.join(seat.me.values())}, {seat.later}) "
            "ON CONFLICT (name) DO UPDATE SET term = l.term + 1, holder = excluded.holder, "
            f"{''.join(f'{c} = excluded.{c}, ' for c in seat.me)}expires = excluded.expires "
            f"WHERE l.expires <= {now} OR NOT {alive} RETURNING term"
        )
        self._renew = (
            f"UPDATE sync_lease SET expires = {seat.later}, "
            f"{', '.join(f'{c} = {v}' for c, v in seat.me.items())} "
            "WHERE name = ? AND term = ? RETURNING term"
        )
        self._release = f"UPDATE sync_lease SET expires = {seat.lapsed} WHERE name = ? AND term = ?"
        self._holder = f"SELECT term, holder, expires > {now} FROM sync_lease WHERE name = ?"

    async def free(self) -> bool:
        """Whether the lease is free, lapsed or its holder gone (a read: it locks nothing,
        as a standby polling while the writer holds the lease should not)."""
        row = await self.seat.one(self._free, self.name)
        return bool(row is not None and row[0])

    async def take(self, ttl: float) -> Lease | None:
        """The lease for ``ttl`` seconds if it is free, lapsed or its holder gone; else
        None (also when a fenced write under way holds the takeover up: try again)."""
        return await self.take_over(ttl) if await self.free() else None

    async def take_over(self, ttl: float) -> Lease | None:
        """:meth:`take` without its first look: the row checked again under the lock a
        fenced write holds (None: another took it first, or the write held it up)."""
        try:
            row = await self.seat.one(self._take, self.name, self.who, ttl)
        except TimeoutError:
            return None
        return Lease(self.name, int(row[0]), self.who) if row is not None else None

    async def renew(self, lease: Lease, ttl: float) -> bool:
        """Push the lease's expiry ``ttl`` seconds on; False: its term is over."""
        return await self.seat.one(self._renew, ttl, self.name, lease.term) is not None

    async def release(self, lease: Lease) -> None:
        """Give the lease up now (a clean stop: a standby need not wait for the lapse)."""
        await self.seat.one(self._release, self.name, lease.term)

    async def holder(self) -> tuple[int, str, bool] | None:
        """``(term, holder, unexpired)`` of the lease, or None: never taken."""
        row = await self.seat.one(self._holder, self.name)
        return (int(row[0]), str(row[1]), bool(row[2])) if row is not None else None

    def abort(self) -> None:
        """Drop the connection at once (the next call connects again)."""
        self.seat.abort()

    async def close(self) -> None:
        """Close the connection."""
        await self.seat.close()
