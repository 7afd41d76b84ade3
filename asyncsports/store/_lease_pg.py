"""The PostgreSQL part of the writer lease (:mod:`asyncsports.store._lease`): its SQL and locking.

The lease row keeps, besides the term and holder, the backend ``pid`` of the connection
that renews it, and when it ``expires`` by the database's own clock
(``clock_timestamp()``: the machines' clocks need not agree). A holder is gone when that
backend is (a process killed: its connection closes at once). The writer's fence
(:func:`asyncsports.store._pg.fence`) takes a share
lock on the row: a takeover's ``UPDATE`` waits for it, so a write that passed the fence
commits (or fails) before the new writer starts; ``SET LOCAL
idle_in_transaction_session_timeout`` frees the row when its transaction is stranded by a
cut network.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from asyncsports._optional import need
from asyncsports.store._pg import PgLink
from asyncsports.store._schema import LEASE_DDL
from asyncsports.store._types import CONNECT_TIMEOUT

if TYPE_CHECKING:
    import asyncpg

__all__ = ["CALL_TIMEOUT", "ELECTION_SETTINGS", "PgSeat"]

CALL_TIMEOUT = 3.0
"""Seconds the election waits for an answer before it takes the connection for lost."""

ELECTION_SETTINGS: dict[str, str] = {
    # A takeover waits for a fenced transaction under way, not for ever: it tries again.
    "lock_timeout": "2s",
    # A cut network is noticed by the server (the renewing connection's pid is then gone).
    "tcp_keepalives_idle": "5",
    "tcp_keepalives_interval": "2",
    "tcp_keepalives_count": "3",
    "tcp_user_timeout": "10000",
    "application_name": "asyncsports sync (election)",
}
"""Session settings of the connection that takes and renews the lease."""

_TAKE = """
INSERT INTO sync_lease AS l (name, term, holder, pid, expires)
VALUES ($1, 1, $2, pg_backend_pid(), clock_timestamp() + $3 * interval '1 second')
ON CONFLICT (name) DO UPDATE
   SET term = l.term + 1, holder = excluded.holder, pid = excluded.pid,
       expires = excluded.expires
 WHERE l.expires <= clock_timestamp()
    OR NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = l.pid)
RETURNING term
"""
# Read first: the takeover's UPDATE locks the row, which a standby polling every second
# should not do while the writer holds it.
_FREE = """
SELECT NOT EXISTS (
  SELECT 1 FROM sync_lease l WHERE l.name = $1 AND l.expires > clock_timestamp()
     AND EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = l.pid))
"""
_RENEW = """
UPDATE sync_lease SET expires = clock_timestamp() + $3 * interval '1 second',
                      pid = pg_backend_pid()
 WHERE name = $1 AND term = $2
RETURNING term
"""
_RELEASE = "UPDATE sync_lease SET expires = '-infinity' WHERE name = $1 AND term = $2"
_DDL_LOCK = 0x6173_7370_6C65_6173  # "aspleas": one CREATE TABLE at a time
_HOLDER = "SELECT term, holder, expires > clock_timestamp() FROM sync_lease WHERE name = $1"


class PgSeat:
    """The connection that takes, renews and gives up the lease ``name`` for ``who``
    (a :class:`~asyncsports.store._types.Seat`).

    Its connection is a :class:`~asyncsports.store._pg.PgLink` that does not wait
    (``patience=None``): each connection checks the mirror's schema (a database that is
    not the mirror's is refused before anything is written to it); a database never
    reached, or an error that is not the database being unreachable, is a
    :class:`~asyncsports.errors.SinkError`. Once reached, a call that finds it
    unreachable (or no answer within :data:`CALL_TIMEOUT`) raises asyncpg's error (or
    OSError, TimeoutError) and the next call connects again.
    """

    def __init__(
        self, url: str, name: str, who: str, connect_timeout: float = CONNECT_TIMEOUT
    ) -> None:
        self.url = url
        self.name = name
        self.who = who
        self.link = PgLink(
            url,
            patience=None,
            settings=ELECTION_SETTINGS,
            setup=_create,
            connect_timeout=connect_timeout,
        )

    async def _call(self, how: str, query: str, *args: Any) -> Any:
        async def op(conn: asyncpg.Connection) -> Any:
            try:
                async with asyncio.timeout(CALL_TIMEOUT):
                    return await getattr(conn, how)(query, *args)
            except _lock_busy() as exc:
                return exc  # a takeover held up: the session is sound

        got = await self.link.do(op)
        if isinstance(got, _lock_busy()):
            raise got
        return got

    async def free(self) -> bool:
        """Whether the lease is free, lapsed or its holder's connection gone."""
        return bool(await self._call("fetchval", _FREE, self.name))

    async def take(self, ttl: float) -> int | None:
        """The new term; None: held (or a fenced write under way past ``lock_timeout``)."""
        try:
            term = await self._call("fetchval", _TAKE, self.name, self.who, ttl)
        except _lock_busy():
            return None
        return int(term) if term is not None else None

    async def renew(self, term: int, ttl: float) -> bool:
        """Push the expiry ``ttl`` seconds on; False: ``term`` is over."""
        return await self._call("fetchval", _RENEW, self.name, term, ttl) is not None

    async def release(self, term: int) -> None:
        """Let the lease lapse now, if ``term`` is still the holding."""
        await self._call("execute", _RELEASE, self.name, term)

    async def holder(self) -> tuple[int, str, bool] | None:
        """``(term, holder, unexpired)`` of the lease, or None: never taken."""
        row = await self._call("fetchrow", _HOLDER, self.name)
        return (int(row[0]), str(row[1]), bool(row[2])) if row is not None else None

    def abort(self) -> None:
        """Drop the connection at once (the next call connects again)."""
        self.link.abort()

    async def close(self) -> None:
        """Close the connection."""
        await self.link.close()


async def _create(conn: asyncpg.Connection) -> None:
    """Create the lease's table, one connection at a time."""
    await conn.execute(f"SELECT pg_advisory_lock({_DDL_LOCK})")
    try:
        await conn.execute(LEASE_DDL)
    finally:
        await conn.execute(f"SELECT pg_advisory_unlock({_DDL_LOCK})")


def _lock_busy() -> type[BaseException]:
    exc: type[BaseException] = need("asyncpg", "").exceptions.LockNotAvailableError
    return exc
