"""The SQLite part of the writer lease (:mod:`asyncsports.store._lease`): its SQL and locking.

The lease row lives in the mirror's own file. Besides the term and holder it keeps the
holder's process id and where that id means it (:data:`HOST`: host name, pid namespace), and when it ``expires`` in epoch seconds by the
machine's clock: processes sharing one SQLite file share one machine, hence one clock.
(A file on a network share is not supported: SQLite's locks are not reliable there, and
the machines' clocks differ.) A holder on this host whose pid is gone (killed) is taken
over at once; one elsewhere, or whose pid is in use again, when its lease lapses.

The locking is SQLite's one write lock: a takeover is a ``BEGIN IMMEDIATE`` transaction,
and the writer's fence (:func:`asyncsports.store._sqlite.fence`) runs first in each of the writer's own ``BEGIN IMMEDIATE`` transactions.
A takeover therefore waits for a fenced write under way (up to :data:`BUSY` seconds, then
tries again), and a write that starts after a takeover finds the term moved on.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from asyncsports.errors import SinkError
from asyncsports.store._schema import SQLITE_LEASE_DDL
from asyncsports.store._sqlite import SqliteThread, Transaction, connect

__all__ = ["BUSY", "SqliteSeat", "gone"]

T = TypeVar("T")

BUSY = 2.0
"""Seconds the election waits for the file's write lock (a fenced write under way)."""


def _pid_space() -> str:
    """Where a pid names the same process as here: this host, and on Linux this pid
    namespace (containers sharing a file and a host name each have their own)."""
    name = socket.gethostname()
    with contextlib.suppress(OSError):
        name += f" pidns:{os.stat('/proc/self/ns/pid').st_ino}"
    return name


HOST = _pid_space()
"""What the lease row's ``host`` says of its holder: a holder's pid is looked up only
where this matches."""

_ROW = "SELECT term, pid, host, expires FROM sync_lease WHERE name = ?"
_PUT = (
    "INSERT INTO sync_lease (name, term, holder, pid, host, expires) VALUES (?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (name) DO UPDATE SET term = excluded.term, holder = excluded.holder, "
    "pid = excluded.pid, host = excluded.host, expires = excluded.expires"
)
_RENEW = "UPDATE sync_lease SET expires = ?, pid = ?, host = ? WHERE name = ? AND term = ?"
_RELEASE = "UPDATE sync_lease SET expires = 0 WHERE name = ? AND term = ?"
_HOLDER = "SELECT term, holder, expires > ? FROM sync_lease WHERE name = ?"


def alive(pid: int) -> bool:
    """Whether process ``pid`` of this host runs (a zombie does not; unsure: it does)."""
    if os.name == "nt":
        return True  # pragma: no cover  (Windows: os.kill ends a process; wait for the lapse)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # pragma: no cover  (EPERM, another user's process: the tests run as root)
        return True  # it runs
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # pragma: no cover  (no procfs, or the process reaped since os.kill: a race)
        return True  # not a zombie as far as we can tell
    return stat.rpartition(")")[2].split()[:1] != ["Z"]  # killed, not yet reaped


def gone(row: tuple[Any, ...] | None, now: float) -> bool:
    """Whether the lease row ``(term, pid, host, expires)`` may be taken at ``now``:
    there is none, it lapsed, or its holder on this host is no longer running."""
    if row is None:
        return True
    _, pid, host, expires = row
    return bool(expires <= now or (host == HOST and not alive(pid)))


def _busy(exc: BaseException) -> bool:
    """Whether ``exc`` is the file's write lock held longer than :data:`BUSY`."""
    cause = exc.__cause__
    return isinstance(cause, sqlite3.OperationalError) and (
        "locked" in str(cause) or "busy" in str(cause)
    )


class SqliteSeat:
    """The connection (on a thread of its own) that takes, renews and gives up the lease
    ``name`` of the file ``path`` for ``who`` (a :class:`~asyncsports.store._types.Seat`).

    The file is checked, and created if it is not there, by the first call. A write lock
    held past :data:`BUSY` is a takeover refused (None) or a ``TimeoutError`` (try again).
    """

    def __init__(self, path: Path, name: str, who: str) -> None:
        self.path = path
        self.name = name
        self.who = who
        self._thread: SqliteThread[sqlite3.Connection] | None = None

    def _open(self) -> sqlite3.Connection:
        db = connect(self.path)
        try:
            db.execute(f"PRAGMA busy_timeout = {int(BUSY * 1000)}")
            with Transaction(db, self.path):
                db.execute(SQLITE_LEASE_DDL)
        except BaseException:  # pragma: no cover  (connect() just wrote it: a lock since, a race)
            db.close()
            raise
        return db

    async def _call(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self._thread is None:
            self._thread = SqliteThread(self._open, sqlite3.Connection.close, name="mirror-lease")
        try:
            return await self._thread.call(fn)
        except SinkError as exc:
            if _busy(exc):
                raise TimeoutError(f"{self.path} is locked by another writer") from exc
            raise

    async def free(self) -> bool:
        """Whether there is no lease, it lapsed, or its holder on this host is gone."""
        return await self._call(
            lambda db: gone(db.execute(_ROW, (self.name,)).fetchone(), time.time())
        )

    async def take(self, ttl: float) -> int | None:
        """The new term; None: held (or the write lock held past :data:`BUSY`)."""

        def take(db: sqlite3.Connection) -> int | None:
            with Transaction(db, self.path):  # BEGIN IMMEDIATE: after any fenced write
                row = db.execute(_ROW, (self.name,)).fetchone()
                now = time.time()
                if not gone(row, now):
                    return None
                term = (int(row[0]) if row is not None else 0) + 1
                db.execute(_PUT, (self.name, term, self.who, os.getpid(), HOST, now + ttl))
            return term

        try:
            return await self._call(take)
        except TimeoutError:
            return None

    async def renew(self, term: int, ttl: float) -> bool:
        """Push the expiry ``ttl`` seconds on; False: ``term`` is over."""
        args = (time.time() + ttl, os.getpid(), HOST, self.name, term)
        return await self._call(lambda db: db.execute(_RENEW, args).rowcount == 1)

    async def release(self, term: int) -> None:
        """Let the lease lapse now, if ``term`` is still the holding."""
        await self._call(lambda db: db.execute(_RELEASE, (self.name, term)))

    async def holder(self) -> tuple[int, str, bool] | None:
        """``(term, holder, unexpired)`` of the lease, or None: never taken."""
        row = await self._call(lambda db: db.execute(_HOLDER, (time.time(), self.name)).fetchone())
        return (int(row[0]), str(row[1]), bool(row[2])) if row is not None else None

    def abort(self) -> None:
        """Close the connection on its thread, not waited for (the next call opens again)."""
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.abort()

    async def close(self) -> None:
        """Close the connection."""
        thread, self._thread = self._thread, None
        if thread is not None:
            await thread.close()
