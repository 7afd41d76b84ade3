"""Who writes a mirror: a lease row in its own database, with a fencing term; either engine.

Two or more ``asyncsports sync`` processes may follow one database; one writes, the
others stand by. The row ``sync_lease`` (one per lease ``name``) says which: its ``term``
(raised at each takeover: the fencing token), its ``holder``, how to tell that the holder
is gone before the lease lapses, and when it ``expires``.

The protocol is this module's, the same on both engines:

- :meth:`Election.take` makes the caller the holder when the row is free, lapsed, or its
  holder is gone (a process killed: the takeover need not wait for the lapse); it reads
  first, so a standby polling while the writer holds the lease takes no lock.
- :meth:`Election.renew` pushes the expiry on while the term is still the caller's;
  :meth:`Election.release` gives the lease up (a clean stop).
- The writer's every transaction is fenced: it first checks, inside the transaction and
  under the lock a takeover must wait for, that the term is the caller's and unexpired,
  and raises :class:`~asyncsports.store._types.Deposed` else. So a write that passed the fence commits before a new
  writer starts, and a deposed writer writes nothing.

What differs is only the SQL and the locking, in a :class:`~asyncsports.store._types.Seat`:
:mod:`~asyncsports.store._lease_pg` (the database's clock, a holder gone when its
renewing connection is, ``FOR SHARE``) and :mod:`~asyncsports.store._lease_sqlite` (the
machine's clock, a holder gone when its pid is, ``BEGIN IMMEDIATE``).
"""

from __future__ import annotations

from pathlib import Path

from asyncsports.store._lease_pg import PgSeat
from asyncsports.store._lease_sqlite import SqliteSeat
from asyncsports.store._types import CONNECT_TIMEOUT, Lease, Seat
from asyncsports.store._urls import is_postgres

__all__ = ["Election"]


class Election:
    """Takes, renews and gives up the lease ``name`` of the mirror database ``db`` (a
    SQLite path or a ``postgresql://`` URL) for ``who``.

    The first call checks the database is the mirror's (a SQLite file is created if it
    is not there); one never reached, or not the mirror's, is a
    :class:`~asyncsports.errors.SinkError`. Once reached, a call that finds it unreachable
    raises the engine's error (or OSError, TimeoutError); the next call tries again.
    """

    def __init__(
        self, db: str | Path, name: str, who: str, connect_timeout: float = CONNECT_TIMEOUT
    ) -> None:
        self.name = name
        self.who = who
        self.seat: Seat
        if is_postgres(db):
            self.seat = PgSeat(str(db), name, who, connect_timeout)
        else:
            self.seat = SqliteSeat(Path(db), name, who)

    async def take(self, ttl: float) -> Lease | None:
        """The lease for ``ttl`` seconds if it is free, lapsed or its holder gone; else
        None (also when a fenced write under way holds the takeover up: try again)."""
        if not await self.seat.free():
            return None
        term = await self.seat.take(ttl)
        return Lease(self.name, term, self.who) if term is not None else None

    async def renew(self, lease: Lease, ttl: float) -> bool:
        """Push the lease's expiry ``ttl`` seconds on; False: its term is over."""
        return await self.seat.renew(lease.term, ttl)

    async def release(self, lease: Lease) -> None:
        """Give the lease up now (a clean stop: a standby need not wait for the lapse)."""
        await self.seat.release(lease.term)

    async def holder(self) -> tuple[int, str, bool] | None:
        """``(term, holder, unexpired)`` of the lease, or None: never taken."""
        return await self.seat.holder()

    def abort(self) -> None:
        """Drop the connection at once (the next call connects again)."""
        self.seat.abort()

    async def close(self) -> None:
        """Close the connection."""
        await self.seat.close()
