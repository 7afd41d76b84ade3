"""The one thread that owns a SQLite connection (store._sqlite.SqliteThread): the writer's,
the mirror's, the reader's and the lease's."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from asyncsports.errors import SinkError
from asyncsports.store._sqlite import SqliteThread, connect


def thread_of(path: Path, name: str = "test-sqlite") -> SqliteThread[sqlite3.Connection]:
    return SqliteThread(lambda: connect(path), sqlite3.Connection.close, name=name)


async def test_calls_run_in_order_on_one_thread_and_close_leaves_none(tmp_path: Path) -> None:
    thread = thread_of(tmp_path / "a.sqlite")
    names = await asyncio.gather(
        *(thread.call(lambda _: threading.current_thread().name) for _ in range(5))
    )
    assert set(names) == {"test-sqlite"}
    assert await thread.call(lambda db: db.execute("SELECT 41 + 1").fetchone()[0]) == 42
    await thread.close()
    assert not [t for t in threading.enumerate() if t.name == "test-sqlite"]
    with pytest.raises(SinkError, match="closed"):
        await thread.call(lambda db: None)


async def test_a_failed_open_fails_that_call_and_the_next_tries_again(tmp_path: Path) -> None:
    path = tmp_path / "not-yet" / "a.sqlite"
    thread = thread_of(path)
    with pytest.raises(SinkError, match="cannot open"):
        await thread.call(lambda db: None)
    path.parent.mkdir()
    assert await thread.call(lambda db: db.execute("SELECT 1").fetchone()[0]) == 1
    await thread.close()


async def test_abort_fails_the_queued_calls_rather_than_leave_them_waiting(tmp_path: Path) -> None:
    thread = thread_of(tmp_path / "a.sqlite")
    started, release = threading.Event(), threading.Event()

    def slow(db: sqlite3.Connection) -> str:
        started.set()
        release.wait(5)
        return "done"

    running = asyncio.ensure_future(thread.call(slow))
    queued = asyncio.ensure_future(thread.call(lambda db: "never"))
    await asyncio.to_thread(started.wait, 5)
    thread.abort()
    release.set()
    assert await asyncio.wait_for(running, 5) == "done"  # no interrupt given: it finishes
    with pytest.raises(SinkError, match="closed"):
        await asyncio.wait_for(queued, 5)
    await asyncio.wait_for(thread.close(), 5)


@pytest.mark.slow
def test_opening_a_file_whose_write_lock_is_held_fails_within_its_bound(tmp_path: Path) -> None:
    """Another process holding the write lock: opening waits the lock wait (5 s, with the
    busy timeout of the attempt under way), then fails naming the file and the lock; it
    tried 50 times, 5 s each: over four minutes."""
    path = tmp_path / "held.sqlite"
    connect(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    failed: list[BaseException] = []
    opener = threading.Thread(target=lambda: _open_into(path, failed), daemon=True)
    try:
        opener.start()
        opener.join(timeout=30)
        assert not opener.is_alive(), "opening a locked file still waited after 30 s"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert len(failed) == 1 and isinstance(failed[0], SinkError)
    assert str(path) in str(failed[0]) and "locked" in str(failed[0])


def _open_into(path: Path, failed: list[BaseException]) -> None:
    try:
        connect(path).close()
    except BaseException as exc:
        failed.append(exc)
