"""The mirror's writer lease (store/_lease.py) on both engines: one holder at a time, a
killed holder replaced before its lease lapses, a lapsed one by the clock, and the fence:
a deposed writer writes nothing, and a takeover waits for a fenced write under way."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import subprocess
import sys
from pathlib import Path

import asyncpg
import pytest
from support import clean_env, until
from support.lease import action, fenced
from support.servers import free_port

from asyncsports.errors import SinkError
from asyncsports.store import (
    Deposed,
    Election,
    Lease,
    Write,
    is_postgres,
    open_mirror,
)


async def _taken(election: Election, ttl: float, within: float) -> Lease:
    """The lease, once ``election`` can take it (within ``within`` seconds)."""
    got: list[Lease] = []

    async def taken() -> bool:
        lease = await election.take(ttl)
        got.extend([lease] if lease is not None else [])
        return bool(got)

    await until(taken, within=within, every=0.05)
    return got[0]


async def test_one_holder_at_a_time_and_a_release_hands_over_at_once(db: str) -> None:
    a, b = Election(db, "sync", "a"), Election(db, "sync", "b")
    try:
        first = await a.take(60)
        assert first is not None and first.term == 1
        assert await b.take(60) is None  # held, unexpired, its holder alive
        assert await b.holder() == (1, "a", True)
        assert await a.renew(first, 60)
        await a.release(first)
        second = await b.take(60)
        assert second is not None and second.term == 2
        assert not await a.renew(first, 60)  # the old term cannot be renewed
        assert await a.take(60) is None
    finally:
        await a.close()
        await b.close()


# A process that takes the lease, says its term, and holds it until it is killed.
HOLD = """
import asyncio, sys
from asyncsports.store import Election

async def main():
    election = Election(sys.argv[1], "sync", "killed")  # kept: its connection renews
    lease = await election.take(60)
    print(lease.term, flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


async def test_a_killed_holder_is_replaced_long_before_its_lease_lapses(db: str) -> None:
    holder = subprocess.Popen(  # noqa: ASYNC220
        [sys.executable, "-c", HOLD, db],
        stdout=subprocess.PIPE,
        text=True,
        env=clean_env(),
    )
    b = Election(db, "sync", "b")
    try:
        assert holder.stdout is not None
        line = await asyncio.to_thread(holder.stdout.readline)
        assert line.strip() == "1"
        assert await b.take(60) is None
        holder.kill()  # not reaped yet: a zombie is gone too
        second = await _taken(b, 60, within=5)  # long before the 60 s lapse
        assert second.term == 2
    finally:
        holder.kill()
        holder.wait()
        await b.close()


async def test_a_lapsed_lease_is_taken_over_by_the_clock(db: str) -> None:
    a, b = Election(db, "sync", "a"), Election(db, "sync", "b")
    try:
        first = await a.take(0.5)
        assert first is not None
        assert await b.take(60) is None
        # a lives on, but renews no more (cut off, or stuck): b takes over once it lapses.
        second = await _taken(b, 60, within=5)
        assert second.term == first.term + 1
    finally:
        await a.close()
        await b.close()


async def test_a_deposed_writer_writes_nothing(db: str) -> None:
    a, b = Election(db, "sync", "a"), Election(db, "sync", "b")
    lease = await a.take(0.5)
    assert lease is not None
    store = await open_mirror(db, fence=lease)
    try:
        changed = await store.write([Write("actions", [action(1)])], marks=["m1"], at=1.0)
        assert changed["actions"] == 1

        async def lapsed() -> bool:
            held = await b.holder()
            return held is not None and not held[2]

        await until(lapsed, within=5, every=0.05)
        with pytest.raises(Deposed, match="term 1"):  # lapsed: no longer ours, taken or not
            await store.write([Write("actions", [action(2)])], marks=["m2"], at=2.0)
        await _taken(b, 60, within=5)
        with pytest.raises(Deposed, match="term 1"):  # another's now
            await store.write([Write("actions", [action(3)])], positions={"live:f1": 3})
        assert [r[1] for r in await store.rows("actions")] == ["a1"]
        assert [c.seq for c in await store.changes(0)] == [1]
        assert await store.marks() == {"m1": 1.0}
        assert await store.position("live:f1") is None
    finally:
        await store.close()
        await a.close()
        await b.close()


async def _count_t(db: str) -> int:
    if is_postgres(db):
        conn = await asyncpg.connect(db)
        try:
            return int(await conn.fetchval("SELECT count(*) FROM t"))
        finally:
            await conn.close()
    with contextlib.closing(sqlite3.connect(db)) as file:
        return int(file.execute("SELECT count(*) FROM t").fetchone()[0])


async def test_a_takeover_waits_for_a_fenced_write_under_way(db: str) -> None:
    a, b = Election(db, "sync", "a"), Election(db, "sync", "b")
    try:
        lease = await a.take(0.3)
        assert lease is not None
        assert await b.holder() is not None  # b connected (opening a file takes its lock)
        async with fenced(db, lease) as commit:

            async def lapsed() -> bool:
                held = await b.holder()
                return held is not None and not held[2]

            await until(lapsed, within=5, every=0.05)  # meanwhile, the lease lapses
            taking = asyncio.create_task(b.take(60))
            await asyncio.sleep(0.3)  # a window in which it must not finish
            assert not taking.done()  # the takeover waits for the write under way
            await commit()
            second = await taking
            assert second is not None and second.term == lease.term + 1
        with pytest.raises(Deposed, match="term 1"):  # the old term: refused, rolled back
            async with fenced(db, lease):
                pass
        assert await _count_t(db) == 1
    finally:
        await a.close()
        await b.close()


async def test_a_database_never_reached_or_not_the_mirror_s_is_an_error_at_once(
    db: str, tmp_path: Path
) -> None:
    if is_postgres(db):
        gone = Election(f"postgresql://postgres@127.0.0.1:{free_port()}/x", "sync", "a")
        with pytest.raises(SinkError, match=r"cannot reach the database at 127\.0\.0\.1:\d+"):
            await gone.take(60)
        conn = await asyncpg.connect(db)
        await conn.execute("CREATE TABLE asyncsports_schema (version integer NOT NULL)")
        await conn.execute("INSERT INTO asyncsports_schema VALUES (99)")
        await conn.close()
        message = "schema version 99"
    else:
        with contextlib.closing(sqlite3.connect(db)) as other:
            other.execute("CREATE TABLE theirs (x)")
        message = "is not an asyncsports database"
    newer = Election(db, "sync", "a")
    with pytest.raises(SinkError, match=message):
        await newer.take(60)
    await newer.close()
