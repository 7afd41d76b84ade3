"""A standby that takes over: the lease (store/_lease.py) on a throwaway PostgreSQL, then two
``asyncsports sync --db postgresql://`` processes, the writer SIGKILLed or cut off."""

from __future__ import annotations

import asyncio
import time

import asyncpg
import pytest

from asyncsports.store._lease import Deposed, Election, fence


async def test_one_holder_at_a_time_and_a_killed_holder_is_replaced_at_once(
    postgres_url: str,
) -> None:
    a, b = Election(postgres_url, "sync", "a"), Election(postgres_url, "sync", "b")
    try:
        first = await a.take(60)
        assert first is not None and first.term == 1
        assert await b.take(60) is None  # held, unexpired, its connection alive
        assert await b.holder() == (1, "a", True)
        assert await a.renew(first, 60)
        a.abort()  # a killed process: its connection closes at once
        t0 = time.monotonic()
        second = None
        while second is None and time.monotonic() - t0 < 5:
            second = await b.take(60)
            await asyncio.sleep(0.05)
        assert second is not None and second.term == 2  # long before the 60 s lapse
        assert not await a.renew(first, 60)  # the old term cannot be renewed
    finally:
        await a.close()
        await b.close()


async def test_a_lapsed_lease_is_taken_over_by_the_database_clock(postgres_url: str) -> None:
    a, b = Election(postgres_url, "sync", "a"), Election(postgres_url, "sync", "b")
    try:
        first = await a.take(0.5)
        assert first is not None
        assert await b.take(60) is None
        await asyncio.sleep(0.6)  # a lives on, but renews no more (its network cut)
        second = await b.take(60)
        assert second is not None and second.term == first.term + 1
    finally:
        await a.close()
        await b.close()


async def test_the_fence_refuses_an_old_term_and_a_takeover_waits_for_a_fenced_write(
    postgres_url: str,
) -> None:
    a, b = Election(postgres_url, "sync", "a"), Election(postgres_url, "sync", "b")
    conn = await asyncpg.connect(postgres_url)
    try:
        lease = await a.take(0.3)
        assert lease is not None
        await conn.execute("CREATE TABLE t (x int)")
        tx = conn.transaction()
        await tx.start()
        await fence(conn, lease)  # the row is held until this transaction ends
        await asyncio.sleep(0.4)  # the lease lapses meanwhile
        taking = asyncio.create_task(b.take(60))
        await asyncio.sleep(0.3)
        assert not taking.done()  # the takeover waits for the write under way
        await conn.execute("INSERT INTO t VALUES (1)")
        await tx.commit()
        second = await taking
        assert second is not None and second.term == lease.term + 1
        async with conn.transaction():
            with pytest.raises(Deposed, match="term 1"):
                await fence(conn, lease)
        assert await conn.fetchval("SELECT count(*) FROM t") == 1
    finally:
        await conn.close()
        await a.close()
        await b.close()
