"""The mirror's store on both engines (a throwaway PostgreSQL, tests/support/servers.py): the same
rows and change feed from the same writes, a feed that rebuilds the tables, a follower on
another connection woken by NOTIFY, and a PostgreSQL restart in the middle of a run."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from support import ENGINES
from support.servers import PostgresServer

from asyncsports.store import MIRROR_COLUMNS, MirrorStore, RowChange, Write, open_mirror
from asyncsports.store import _changes as store_changes
from asyncsports.sync import feed


def action(fid: str, aid: str, seq: int, text: str = "x") -> tuple[Any, ...]:
    return (
        fid,
        aid,
        "basketball",
        seq,
        "Shot",
        "Confirmed",
        "2026-06-01T12:00:01.250000Z",
        f'{{"t": "{text}",  "n": 1.50}}',
    )


def fixture(fid: str, status: str, deleted: int = 0) -> tuple[Any, ...]:
    return (
        fid,
        "basketball",
        "s1",
        "2026-06-01T12:00:00Z",
        status,
        "A v B",
        deleted,
        f'{{"id": "{fid}", "status": "{status}"}}',
    )


def event(eid: int, live: int) -> tuple[Any, ...]:
    return (eid, "Open", "2026-06-01T10:00:00Z", None, live, f'{{"id": {eid}}}')


@pytest.fixture(params=ENGINES)
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new mirror database of each engine: a file, or a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "m.sqlite")
    return str(request.getfixturevalue("postgres_url"))


def other(db: str, postgres: PostgresServer | None, tmp_path: Path) -> str:
    """A second, empty database of the same engine."""
    if db.startswith("postgresql://"):
        assert postgres is not None
        return postgres.create_database()
    return str(tmp_path / "other.sqlite")


@pytest.fixture
async def store(db: str) -> AsyncIterator[MirrorStore]:
    s = await open_mirror(db)
    try:
        yield s
    finally:
        await s.close()


def ops(changes: list[RowChange]) -> list[tuple[Any, ...]]:
    return [(c.seq, c.op, c.table, c.key) for c in changes]


async def test_a_row_is_written_only_when_its_content_changed(store: MirrorStore) -> None:
    assert (await store.write([Write("fixtures", [fixture("f1", "Scheduled")])]))["fixtures"] == 1
    assert (await store.write([Write("fixtures", [fixture("f1", "Scheduled")])])).total() == 0
    assert (await store.write([Write("fixtures", [fixture("f1", "Live")])]))["fixtures"] == 1
    gone = await store.write([Write("fixtures", [fixture("f1", "Live", deleted=1)])])
    assert gone["fixtures"] == 1
    assert ops(await store.changes(0)) == [
        (1, "insert", "fixtures", ("f1",)),
        (2, "update", "fixtures", ("f1",)),
        (3, "delete", "fixtures", ("f1",)),  # fixtureDeleted: disregard it
    ]
    last = (await store.changes(2))[0]
    assert last.record == {"id": "f1", "status": "Live"} and last.row["deleted"] == 1
    assert last.committed_at.endswith("Z")
    # Values read back as they were written: time as text, flags as 0/1, JSON as sent.
    assert await store.rows("fixtures") == [fixture("f1", "Live", deleted=1)]
    await store.write([Write("events", [event(7, 1), event(3, 0)])])
    assert await store.rows("events") == [event(3, 0), event(7, 1)]
    assert await store.fixtures() == [("f1", "basketball", "s1", "Live", True)]
    assert await store.has("events", "id", 7) and not await store.has("events", "id", 8)


async def test_a_scoped_write_deletes_the_rows_no_longer_there(store: MirrorStore) -> None:
    both = [action("f1", "a", 1), action("f1", "b", 2)]
    await store.write([Write("actions", both, ("fixture_id", "f1"))])
    await store.write([Write("actions", [action("f2", "a", 1)], ("fixture_id", "f2"))])
    await store.write([Write("actions", [action("f1", "a", 1, "y")], ("fixture_id", "f1"))])
    assert [r[:2] for r in await store.rows("actions")] == [("f1", "a"), ("f2", "a")]
    tail = await store.changes(3)
    assert [(c.op, c.key) for c in tail] == [("update", ("f1", "a")), ("delete", ("f1", "b"))]
    assert tail[1].row["json"] is None and tail[1].row["seq"] == 2
    await store.write([Write("actions", [], ("fixture_id", "f2"))])  # all of them gone
    assert [r[:2] for r in await store.rows("actions")] == [("f1", "a")]
    assert await store.count_actions("f1") == 1


async def test_a_row_written_twice_in_one_write_is_logged_twice_in_order(
    store: MirrorStore,
) -> None:
    rows = [action("f1", "a", 1), action("f1", "b", 1), action("f1", "a", 2, "z")]
    assert (await store.write([Write("actions", rows)]))["actions"] == 3
    changes = await store.changes(0)
    a = [(c.op, c.row["seq"]) for c in changes if c.key == ("f1", "a")]
    assert a == [("insert", 1), ("update", 2)]
    assert [c.seq for c in changes] == [1, 2, 3]
    assert [r[3] for r in await store.rows("actions")] == [2, 1]


async def test_cursors_marks_and_positions_persist(db: str) -> None:
    s = await open_mirror(db)
    await s.write([], marks=["final:f1", "x"], at=12.5, positions={"live:f1": 40})
    await s.write([], unmarks=["x"], positions={"live:f1": 41, "stats:f1": 2})
    await s.save_cursor("app", 7)
    await s.save_cursor("app", 3)  # a late save of an older position
    await s.close()
    again = await open_mirror(db)
    try:
        assert await again.cursor("app") == 7 and await again.cursor("other") == 0
        assert await again.marks() == {"final:f1": 12.5}
        assert await again.position("live:f1") == 41 and await again.position("stats:f1") == 2
        assert await again.position("live:f2") is None
    finally:
        await again.close()


async def test_the_reads_agree_on_both_engines(store: MirrorStore) -> None:
    """Regression: ``has`` checked its column on PostgreSQL only (a name not a column
    reached SQLite's SQL); every read is now one statement for both engines."""
    await store.write([Write("fixtures", [fixture("f1", "Live", deleted=1)])])
    await store.write([Write("actions", [action("f1", "a", 1), action("f1", "b", 2)])])
    assert await store.has("fixtures", "status", "Live")
    assert not await store.has("actions", "fixture_id", "f2")
    with pytest.raises(ValueError, match="no column"):
        await store.has("fixtures", "1 = 1 OR id", "x")
    assert await store.fixtures() == [("f1", "basketball", "s1", "Live", True)]
    assert await store.count_actions("f1") == 2
    assert (await store.counts())["actions"] == 2


def steps(seed: int, n: int = 120) -> list[list[Write]]:
    """Random writes: fixtures changing status (some deleted), fixtures' actions
    replaced (some kept, some changed, some gone), events; many of them changing nothing."""
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        fid = rnd.choice(["f1", "f2", "f3"])
        writes = []
        if rnd.random() < 0.5:
            status = rnd.choice(["Scheduled", "Live", "Completed"])
            writes.append(Write("fixtures", [fixture(fid, status, int(rnd.random() < 0.1))]))
        if rnd.random() < 0.6:
            acts = {
                a: action(fid, a, i, str(rnd.randint(0, 2)))
                for i, a in enumerate(rnd.sample("abcdef", rnd.randint(0, 4)))
            }
            writes.append(Write("actions", list(acts.values()), ("fixture_id", fid)))
        if rnd.random() < 0.2:
            writes.append(Write("events", [event(rnd.randint(1, 3), rnd.randint(0, 1))]))
        out.append(writes)
    return out


async def tables(s: MirrorStore) -> dict[str, list[tuple[Any, ...]]]:
    return {t: await s.rows(t) for t in MIRROR_COLUMNS}


async def test_both_engines_log_the_same_changes_and_the_feed_rebuilds_the_tables(
    db: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    pg = request.getfixturevalue("postgres") if db.startswith("postgresql://") else None
    s, reference = await open_mirror(db), await open_mirror(tmp_path / "reference.sqlite")
    copy = await open_mirror(other(db, pg, tmp_path))
    try:
        for writes in steps(seed=5):
            assert await s.write(writes) == await reference.write(writes)
        feed_ = await s.changes(0, limit=100_000)
        assert [c.seq for c in feed_] == list(range(1, len(feed_) + 1))
        # The same changes, whichever engine logged them.
        same = await reference.changes(0, limit=100_000)
        assert [(c.op, c.table, c.key, c.row) for c in feed_] == [
            (c.op, c.table, c.key, c.row) for c in same
        ]
        assert await tables(s) == await tables(reference)
        # Replayed from the start, in pieces, the feed rebuilds the tables.
        for i in range(0, len(feed_), 37):
            await copy.apply(feed_[i : i + 37])
        assert await tables(copy) == await tables(s)
        assert await copy.counts() == await s.counts()
    finally:
        for x in (s, reference, copy):
            await x.close()


@pytest.mark.slow
async def test_a_follower_on_another_connection_sees_each_change_once_in_order(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if db.startswith("postgresql://"):
        # A follower that only looked again after RECHECK would not finish in time: the
        # NOTIFY of each commit wakes it.
        monkeypatch.setattr(store_changes, "RECHECK", 3600.0)
    writer = await open_mirror(db)
    todo = steps(seed=11, n=80)
    got: list[RowChange] = []
    done = asyncio.Event()

    moved = asyncio.Event()

    async def follow() -> None:
        async for change in feed(db, consumer="app", until=done):
            got.append(change)
            moved.set()

    follower = asyncio.create_task(follow())
    try:
        committed = 0
        for i, writes in enumerate(todo):
            committed += (await writer.write(writes)).total()
            # Every other write waits for the follower to see it: it is woken by the
            # commit, while it waits (not by the next write, nor by until=).
            while i % 2 and committed and (not got or got[-1].seq < committed):
                moved.clear()
                await asyncio.wait_for(moved.wait(), 5)
        total = len(await writer.changes(0, limit=100_000))
        done.set()  # the follower ends once it has given every change committed before
        await asyncio.wait_for(follower, 20)
        assert [c.seq for c in got] == list(range(1, total + 1))  # each once, in order
        assert await writer.cursor("app") == total
    finally:
        follower.cancel()
        await writer.close()


async def test_two_writers_at_once_keep_seq_in_commit_order(postgres_url: str) -> None:
    """One writer is the rule (a standby waits); two by mistake take turns on the feed's
    lock, so a follower reading seq > cursor never passes a change committed later."""
    writers = [await open_mirror(postgres_url) for _ in range(2)]
    got: list[int] = []
    done = asyncio.Event()

    async def follow() -> None:
        async for change in feed(postgres_url, until=done):
            got.append(change.seq)

    async def write(w: MirrorStore, name: str) -> None:
        for i in range(150):
            await w.write([Write("actions", [action(name, f"a{i}", i)])])

    follower = asyncio.create_task(follow())
    try:
        await asyncio.gather(write(writers[0], "f1"), write(writers[1], "f2"))
        done.set()
        await asyncio.wait_for(follower, 20)
        every = [c.seq for c in await writers[0].changes(0, limit=1000)]
        assert len(every) == 300 and got == every  # none passed, none twice
    finally:
        follower.cancel()
        for w in writers:
            await w.close()
