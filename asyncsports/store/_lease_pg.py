"""The PostgreSQL part of the writer lease (:mod:`asyncsports.store._lease`): its SQL and locking.

The lease row keeps, besides the term and holder, the backend ``pid`` of the connection
that renews it, and when it ``expires`` by the database's own clock
(``clock_timestamp()``: the machines' clocks need not agree). A holder is gone when that
backend is (a process killed: its connection closes at once). :func:`fence` takes a share
lock on the row: a takeover's ``UPDATE`` waits for it, so a write that passed the fence
commits (or fails) before the new writer starts; ``SET LOCAL
idle_in_transaction_session_timeout`` frees the row when its transaction is stranded by a
cut network.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from asyncsports._optional import need
from asyncsports.store._pg import PgSink, transient, unusable
from asyncsports.store._schema import LEASE_DDL
from asyncsports.store._types import CONNECT_TIMEOUT, Lease, deposed

if TYPE_CHECKING:
    import asyncpg

__all__ = ["CALL_TIMEOUT", "ELECTION_SETTINGS", "STRANDED", "PgSeat", "fence"]

CALL_TIMEOUT = 3.0
"""Seconds the election waits for an answer before it takes the connection for lost."""

STRANDED = 5.0
"""Seconds a fenced transaction may sit idle (its network cut) before the server ends it."""

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
# One round trip: the row held (shared) and, for this transaction only, the server told
# to end it when it sits idle STRANDED seconds (its writer cut off).
_FENCE = (
    "SELECT set_config('idle_in_transaction_session_timeout', $3, true) FROM sync_lease "
    "WHERE name = $1 AND term = $2 AND expires > clock_timestamp() FOR SHARE"
)
_DDL_LOCK = 0x6173_7370_6C65_6173  # "aspleas": one CREATE TABLE at a time
_HOLDER = "SELECT term, holder, expires > clock_timestamp() FROM sync_lease WHERE name = $1"


class PgSeat:
    """The connection that takes, renews and gives up the lease ``name`` for ``who``
    (a :class:`~asyncsports.store._types.Seat`).

    The first connection checks the mirror's schema (:class:`~asyncsports.store._pg.PgSink`
    refuses a database that is not the mirror's before anything is written to it); a
    database never reached, or an error that is not the database being unreachable, is
    a :class:`~asyncsports.errors.SinkError`. Once reached, a call that finds it
    unreachable raises asyncpg's error (or OSError, TimeoutError) and the next call
    connects again.
    """

    def __init__(self, url: str, name: str, who: str) -> None:
        self.url, self.name, self.who = url, name, who
        self._conn: asyncpg.Connection | None = None
        self._reached = False

    async def _db(self) -> asyncpg.Connection:
        if self._conn is not None and not self._conn.is_closed():
            return self._conn
        try:
            if not self._reached:
                await (await PgSink.open(self.url)).close()
            apg = need("asyncpg", "a postgresql:// database")
            conn = await apg.connect(self.url, timeout=CONNECT_TIMEOUT,
                                     server_settings=ELECTION_SETTINGS)  # fmt: skip
            try:
                await conn.execute(f"SELECT pg_advisory_lock({_DDL_LOCK})")
                try:
                    await conn.execute(LEASE_DDL)
                finally:
                    await conn.execute(f"SELECT pg_advisory_unlock({_DDL_LOCK})")
            except BaseException:
                conn.terminate()
                raise
        except Exception as exc:
            if self._reached and transient(exc):
                raise
            raise unusable(self.url, exc) from exc
        self._conn, self._reached = conn, True
        return conn

    async def _call(self, how: str, query: str, *args: Any) -> Any:
        conn = await self._db()
        try:
            async with asyncio.timeout(CALL_TIMEOUT):
                return await getattr(conn, how)(query, *args)
        except BaseException as exc:
            if isinstance(exc, _lock_busy()):
                raise
            # An answer that did not come (or an error) leaves the session in doubt.
            self.abort()
            if isinstance(exc, Exception) and not transient(exc):
                raise unusable(self.url, exc) from exc
            raise

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
        if self._conn is not None:
            self._conn.terminate()
            self._conn = None

    async def close(self) -> None:
        """Close the connection."""
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                async with asyncio.timeout(5):
                    await conn.close()
            except Exception:
                conn.terminate()


def _lock_busy() -> type[BaseException]:
    exc: type[BaseException] = need("asyncpg", "").exceptions.LockNotAvailableError
    return exc


async def fence(conn: asyncpg.Connection, lease: Lease) -> None:
    """First in each of the writer's transactions: raise
    :class:`~asyncsports.store._types.Deposed` unless the
    lease is still ours; hold the row (shared) until the transaction ends."""
    if await conn.fetchval(_FENCE, lease.name, lease.term, str(int(STRANDED * 1000))) is None:
        raise deposed(lease)
