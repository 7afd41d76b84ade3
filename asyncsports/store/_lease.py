"""Who writes a PostgreSQL mirror: a lease row on the database's clock, with a fencing term.

Two or more ``asyncsports sync`` processes (on any machines) may follow one database; one
writes, the others stand by. The row ``sync_lease`` (one per lease ``name``) says which:
its ``term`` (raised at each takeover: the fencing token), its ``holder``, the backend
``pid`` of the connection that renews it, and when it ``expires`` by the database's own
clock (``clock_timestamp()``: the machines' clocks need not agree).

- :func:`take` makes the caller the holder when the row is free, lapsed, or its holder's
  renewing connection is gone (a process killed: its connection closes at once, so the
  takeover need not wait for the lapse); it returns the new term.
- :func:`renew` pushes ``expires`` on while the term is still the caller's.
- :func:`fence` runs first in each of the writer's transactions: it takes a share lock
  on the row and raises :class:`Deposed` unless the term is the caller's and unexpired.
  A takeover's ``UPDATE`` waits for that lock, so a write that passed the fence commits
  (or fails) before the new writer starts; a writer cut off and coming back finds the
  term moved on and writes nothing (``SET LOCAL idle_in_transaction_session_timeout``
  frees the row when its transaction is stranded by a cut network).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from asyncsports._optional import need
from asyncsports.errors import SinkError
from asyncsports.store._pg import CONNECT_TIMEOUT, PgSink, transient, unusable
from asyncsports.store._schema import LEASE_DDL

if TYPE_CHECKING:
    import asyncpg

__all__ = ["CALL_TIMEOUT", "ELECTION_SETTINGS", "STRANDED", "Deposed", "Election",
           "Lease", "fence"]  # fmt: skip

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


class Deposed(SinkError):
    """This process's lease is gone: another process writes the mirror now (a
    :class:`~asyncsports.errors.SinkError`: the mirror stops at once, as for any)."""


@dataclass(frozen=True, slots=True)
class Lease:
    """A lease held: its ``name``, this holding's ``term`` and the ``holder`` it names."""

    name: str
    term: int
    holder: str


class Election:
    """The connection that takes, renews and gives up the lease ``name`` for ``who``.

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

    async def take(self, ttl: float) -> Lease | None:
        """The lease for ``ttl`` seconds if it is free, lapsed or its holder's connection
        is gone; else None. A takeover blocked by a fenced write under way longer than
        ``lock_timeout`` is None too (the caller tries again)."""
        if not await self._call("fetchval", _FREE, self.name):
            return None
        try:
            term = await self._call("fetchval", _TAKE, self.name, self.who, ttl)
        except _lock_busy():
            return None
        return Lease(self.name, int(term), self.who) if term is not None else None

    async def renew(self, lease: Lease, ttl: float) -> bool:
        """Push the lease's expiry ``ttl`` seconds on; False: its term is over."""
        return await self._call("fetchval", _RENEW, lease.name, lease.term, ttl) is not None

    async def release(self, lease: Lease) -> None:
        """Give the lease up now (a clean stop: a standby need not wait for the lapse)."""
        await self._call("execute", _RELEASE, lease.name, lease.term)

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
    """First in each of the writer's transactions: raise :class:`Deposed` unless the
    lease is still ours; hold the row (shared) until the transaction ends."""
    if await conn.fetchval(_FENCE, lease.name, lease.term, str(int(STRANDED * 1000))) is None:
        raise Deposed(
            f"the mirror's lease {lease.name!r} (term {lease.term}) is over: "
            "another process writes it now"
        )
