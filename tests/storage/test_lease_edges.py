"""The writer lease's edges on both engines (store/_lease.py, over each dialect's seat): a
takeover held up past the lock wait by a fenced write is refused and taken once the write
commits, a dropped connection is made again by the next call, a lease never taken has no
holder, and a holder's process is alive while it runs, gone once it exits, gone as a
zombie."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import until
from support.lease import fenced

from asyncsports.store import Election, _pg, _sqlite, is_postgres
from asyncsports.store._sqlite import alive

WAIT = 0.2  # the lock wait, lowered from seconds: a held-up takeover gives up quickly


async def test_a_takeover_held_up_past_the_lock_wait_is_refused_then_taken(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(_pg.ELECTION_SETTINGS, "lock_timeout", f"{int(WAIT * 1000)}ms")
    monkeypatch.setattr(_sqlite, "BUSY", WAIT)
    a, b = Election(db, "sync", "a"), Election(db, "sync", "b")
    try:
        lease = await a.take(0.3)
        assert lease is not None
        assert await b.holder() == (1, "a", True)  # b connected before the write lock

        async def lapsed() -> bool:
            held = await b.holder()
            return held is not None and not held[2]

        async with fenced(db, lease) as commit:
            # Even a renewal waits for it (SQLite's one write lock; PostgreSQL's row lock)
            # and gives up, with one error on both engines.
            busy = "held up" if is_postgres(db) else "locked by another writer"
            with pytest.raises(TimeoutError, match=busy):
                await b.renew(lease, 60)
            await until(lapsed, within=5, every=0.05)
            assert await b.take(60) is None  # the write under way outlasts the lock wait
            await commit()
        second = await b.take(60)
        assert second is not None and second.term == lease.term + 1
    finally:
        await a.close()
        await b.close()


async def test_an_aborted_connection_is_made_again_by_the_next_call(db: str) -> None:
    a = Election(db, "sync", "a")
    try:
        assert await a.holder() is None  # never taken
        lease = await a.take(60)
        assert lease is not None
        a.abort()
        a.abort()  # nothing left to drop: no error
        assert await a.renew(lease, 60)  # on a new connection
        assert await a.holder() == (lease.term, "a", True)
    finally:
        await a.close()
        await a.close()  # closed already: nothing to do


async def test_a_seat_closed_before_any_call_has_nothing_to_close(tmp_path: Path) -> None:
    election = Election(tmp_path / "m.sqlite", "sync", "a")
    await election.close()
    election.abort()
    assert not (tmp_path / "m.sqlite").exists()  # nothing opened it


def test_a_running_process_is_alive_an_exited_or_zombie_one_is_not() -> None:
    assert alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert alive(child.pid)
        child.send_signal(signal.SIGKILL)
        deadline = time.monotonic() + 10
        while not _zombie(child.pid):  # killed, not yet reaped
            assert time.monotonic() < deadline, "the killed child never became a zombie"
            time.sleep(0.01)
        assert not alive(child.pid)  # a zombie holds no lease
    finally:
        child.kill()
        child.wait()
    assert not alive(child.pid)  # reaped: no such process


def _zombie(pid: int) -> bool:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[:1] == ["Z"]
    return False


async def test_a_takeover_that_finds_the_lease_taken_under_the_lock_gets_none(db: str) -> None:
    # Two standbys may both find the lease free; the takeover checks again under the lock,
    # and the one that comes second finds the other's term.
    a, b = Election(db, "sync", "a"), Election(db, "sync", "b")
    try:
        assert await b.free()  # b finds it free ...
        lease = await a.take(60)  # ... a takes it meanwhile ...
        assert lease is not None
        assert await b.take_over(60) is None  # ... and b's takeover is refused
        assert await b.holder() == (lease.term, "a", True)
    finally:
        await a.close()
        await b.close()


async def test_the_sqlite_election_sends_no_returning_which_sqlite_before_3_35_lacks(
    tmp_path: Path,
) -> None:
    """Python 3.11 is built against older SQLite in places (Debian 11: 3.34): a statement
    ``... RETURNING`` fails there, and the mirror could not take its lease (exit 13)."""
    db = tmp_path / "m.sqlite"
    election, other = Election(db, "mirror", "a"), Election(db, "mirror", "b")
    sent: list[str] = []
    try:
        await election.holder()  # the seat's connection is open from here
        seat = election.seat
        assert isinstance(seat, _sqlite.SqliteSeat)
        await seat._thread.call(lambda conn: conn.set_trace_callback(sent.append))  # type: ignore[union-attr]
        lease = await election.take(30)
        assert lease is not None and lease.term == 1
        assert await other.take(30) is None
        assert await election.renew(lease, 30)
        await election.release(lease)
        taken = await other.take(30)
        assert taken is not None and taken.term == 2
        assert not await election.renew(lease, 30)  # its term is over
    finally:
        await election.close()
        await other.close()
    assert sent and not [s for s in sent if "RETURNING" in s.upper()], sent
