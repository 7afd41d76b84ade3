"""Every storage job on both engines, through asyncsports.store's public names only: the
mirror's store, its change log, the writer lease, the reader and the backfill's engine.

Each test runs on SQLite and on PostgreSQL (tests/storage/conftest.py's ``db`` and
``new_db``) and expects the same values on both: the safety net of the store's rewrite
into one dialect per URL (issue 42, point 2), whose private modules may move at will.
What the neighbouring tests check on both engines already is not repeated here:
test_sync_postgres.py (content compared, deleted fixtures, cursors and marks persisted,
the random writes' feed replayed), test_lease.py (the lease's first handover, lapse,
killed holder, fence) and test_mirror_contents.py (what a database holds)."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import gc
import json
import re
import sqlite3
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import asyncpg
import msgspec
import pytest
from support import until
from support.samples import action as action_record
from support.samples import fixture as fixture_record

from asyncsports.errors import SinkError
from asyncsports.models import Action, Fixture, decode
from asyncsports.store import (
    MIRROR_COLUMNS,
    ChangeLine,
    Deposed,
    Election,
    EventRow,
    FixtureRow,
    JobState,
    Lease,
    MirrorStore,
    Row,
    Unit,
    Write,
    action_row,
    change_batches,
    engine,
    fixture_row,
    open_changes,
    open_mirror,
)
from asyncsports.store import open as open_store

SPORT = "basketball"
# committed_at as both engines write it: ISO 8601 UTC, microseconds, a Z.
UTC_TEXT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


# ------------------------------------------------------------------------------- helpers


def fixture(n: int, status: str = "Scheduled", deleted: bool = False) -> FixtureRow:
    """The ``fixtures`` row of sample fixture ``n``, as the mirror and backfill build it."""
    raw = msgspec.json.encode(fixture_record(n, status=status, fixtureDeleted=deleted))
    return fixture_row(SPORT, decode(Fixture, raw), raw)


def action(fixture_id: str, seq: int, kind: str = "Start Clock") -> Row:
    """The ``actions`` row of sample action ``seq`` of fixture ``fixture_id``."""
    raw = msgspec.json.encode(action_record(seq, type_name=kind))
    return action_row(SPORT, fixture_id, decode(Action, raw), raw)


def whole(table: str, row: Row) -> dict[str, Any]:
    """A row as a change logs it: every column by name."""
    return dict(zip(MIRROR_COLUMNS[table], row, strict=True))


def is_pg(db: Path | str) -> bool:
    return str(db).startswith("postgresql://")


@contextlib.asynccontextmanager
async def mirror(db: Path | str, fence: Lease | None = None) -> AsyncIterator[MirrorStore]:
    store = await open_mirror(db, fence=fence)
    try:
        yield store
    finally:
        await store.close()


async def read_all(db: Path | str, table: str, chunk: int = 1000) -> list[list[tuple[Any, ...]]]:
    """The chunks a new reader of ``db`` reads ``table`` in."""
    async with open_store(db) as reader:
        return [chunk_ async for chunk_ in reader.rows(table, chunk=chunk)]


# Local files, looked at in an instant: plain functions, out of the coroutines (ASYNC240).
def files(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def size(path: Path) -> int:
    return path.stat().st_size


def empty_file(path: Path) -> None:
    path.touch()


def beside(url: str, name: str) -> str:
    """The URL of database ``name`` on the PostgreSQL server of ``url``."""
    return url.rsplit("/", 1)[0] + "/" + name


async def pg_databases(url: str) -> set[str]:
    """The databases of the PostgreSQL server of ``url``."""
    conn = await asyncpg.connect(beside(url, "postgres"))
    try:
        return {r[0] for r in await conn.fetch("SELECT datname FROM pg_database")}
    finally:
        await conn.close()


async def pg_tables(url: str) -> list[str]:
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1"
        )
        return [r[0] for r in rows]
    finally:
        await conn.close()


# -------------------------------------------------------------------------- the mirror


async def test_new_rows_are_logged_as_inserts_and_the_same_rows_again_change_nothing(
    db: Path | str,
) -> None:
    f1, f2 = fixture(1), fixture(2)
    acts = [action(f1.id, 1), action(f1.id, 2)]
    writes = [Write("fixtures", [f2, f1]), Write("actions", acts)]
    async with mirror(db) as store:
        assert await store.head() == 0 and await store.changes(0) == []
        assert await store.write(writes) == {"fixtures": 2, "actions": 2}
        changes = await store.changes(0)
        # One line per row, in the write's order, each with the whole row.
        assert [(c.seq, c.op, c.table, c.key) for c in changes] == [
            (1, "insert", "fixtures", (f2.id,)),
            (2, "insert", "fixtures", (f1.id,)),
            (3, "insert", "actions", (f1.id, acts[0][1])),
            (4, "insert", "actions", (f1.id, acts[1][1])),
        ]
        expected = [("fixtures", f2), ("fixtures", f1), ("actions", acts[0]), ("actions", acts[1])]
        assert [c.row for c in changes] == [whole(t, r) for t, r in expected]
        assert changes[1].record == json.loads(f1.json)
        assert await store.head() == 4

        again = await store.write(writes)
        assert again.total() == 0 and not +again  # nothing changed, nothing logged
        assert await store.head() == 4 and await store.changes(4) == []

        live = fixture(1, "Live")
        assert await store.write([Write("fixtures", [live, f2])]) == {"fixtures": 1}
        (update,) = await store.changes(4)
        assert (update.seq, update.op, update.key) == (5, "update", (f1.id,))
        assert update.row == whole("fixtures", live) and update.record["status"] == "Live"
        assert await store.rows("fixtures") == sorted([live, f2])


async def test_a_scoped_write_deletes_the_scope_s_other_rows_and_logs_them_by_key(
    db: Path | str,
) -> None:
    f, g = fixture(1).id, fixture(2).id
    a3, a1, a2 = action(f, 3), action(f, 1), action(f, 2)  # written out of key order
    b1 = action(g, 1)
    async with mirror(db) as store:
        await store.write(
            [
                Write("actions", [a3, a1, a2], ("fixture_id", f)),
                Write("actions", [b1], ("fixture_id", g)),
            ]
        )
        assert await store.write([Write("actions", [a2], ("fixture_id", f))]) == {"actions": 2}
        gone = await store.changes(4)
        assert [(c.seq, c.op, c.key) for c in gone] == [
            (5, "delete", (f, a1[1])),
            (6, "delete", (f, a3[1])),
        ]
        # A delete logs the row as it was, without its record.
        assert [c.row for c in gone] == [whole("actions", r) | {"json": None} for r in (a1, a3)]
        assert [c.record for c in gone] == [None, None]
        assert await store.rows("actions") == [a2, b1]  # the other scope untouched
        assert await store.count_actions(f) == 1 and await store.count_actions(g) == 1

        assert await store.write([Write("actions", [], ("fixture_id", g))]) == {"actions": 1}
        assert await store.rows("actions") == [a2]
        assert await store.count_actions(g) == 0


async def test_a_row_twice_in_one_write_ends_as_the_last_each_change_logged_in_order(
    db: Path | str,
) -> None:
    scheduled, live, done = fixture(1), fixture(1, "Live"), fixture(1, "Completed")
    async with mirror(db) as store:
        # The third is the second again: no change, no line.
        assert await store.write([Write("fixtures", [scheduled, live, live])]) == {"fixtures": 2}
        assert [(c.op, c.row["status"]) for c in await store.changes(0)] == [
            ("insert", "Scheduled"),
            ("update", "Live"),
        ]
        # Away and back to what is stored, in one write: two changes all the same.
        assert await store.write([Write("fixtures", [done, live])]) == {"fixtures": 2}
        assert [(c.seq, c.op, c.row["status"]) for c in await store.changes(2)] == [
            (3, "update", "Completed"),
            (4, "update", "Live"),
        ]
        assert await store.rows("fixtures") == [live]


async def test_marks_unmarks_and_positions_commit_with_the_write_or_not_at_all(
    db: Path | str,
) -> None:
    f1, f2 = fixture(1), fixture(2)
    async with mirror(db) as store:
        await store.write(
            [Write("fixtures", [f1])], marks=["a", "b"], at=1.5, positions={"live:x": 3}
        )
        assert await store.marks() == {"a": 1.5, "b": 1.5}
        assert await store.position("live:x") == 3 and await store.position("stats:x") is None
        await store.write(
            [], marks=["c"], at=2.25, unmarks=["a"], positions={"live:x": 5, "stats:x": 1}
        )
        assert await store.marks() == {"b": 1.5, "c": 2.25}
        assert await store.position("live:x") == 5 and await store.position("stats:x") == 1
        assert await store.head() == 1  # bookkeeping alone logs no change

        bad = (f2.id, None, *f2[2:])  # sport is NOT NULL: the write fails as a whole
        with pytest.raises(SinkError):
            await store.write(
                [Write("fixtures", [f2]), Write("fixtures", [bad])],
                marks=["d"],
                at=3.0,
                unmarks=["b"],
                positions={"live:x": 9},
            )
        assert await store.rows("fixtures") == [f1]
        assert await store.marks() == {"b": 1.5, "c": 2.25}
        assert await store.position("live:x") == 5
        assert await store.head() == 1
        # The store is usable after the failed write, and the log carries on at 2.
        assert await store.write([Write("fixtures", [f2])]) == {"fixtures": 1}
        assert [c.seq for c in await store.changes(0)] == [1, 2]


async def test_the_change_log_pages_in_commit_order_as_stored_with_utc_times(
    db: Path | str,
) -> None:
    rows = [fixture(n) for n in range(1, 8)]
    async with mirror(db) as store:
        before = dt.datetime.now(dt.UTC)
        for part in (rows[:2], rows[2:5], rows[5:]):
            await store.write([Write("fixtures", part)])
        after = dt.datetime.now(dt.UTC)
        assert await store.head() == 7

        pages, seq = [], 0
        while page := await store.changes(seq, limit=3):
            pages.append([c.seq for c in page])
            seq = page[-1].seq
        assert pages == [[1, 2, 3], [4, 5, 6], [7]]
        assert [c.seq for c in await store.changes(2, limit=1)] == [3]

        lines = await store.change_rows(0, limit=100)
        assert all(isinstance(line, ChangeLine) for line in lines)
        assert [line.decoded() for line in lines] == await store.changes(0, limit=100)
        assert [line.seq for line in await store.change_rows(4, limit=2)] == [5, 6]
        assert await store.change_rows(7) == []
        # As stored: key and row as the JSON texts a publisher passes on.
        first = lines[0]
        # Encoded once, by msgspec, as the bus carries them: no spaces to take out.
        assert first.key == msgspec.json.encode([rows[0].id]).decode()
        assert first.row == msgspec.json.encode(whole("fixtures", rows[0])).decode()
        times = [line.committed_at for line in lines]
        assert all(UTC_TEXT.fullmatch(t) for t in times), times
        assert times[0] == times[1] and times[2] == times[3] == times[4] and times[5] == times[6]
        assert times == sorted(times)
        at = [dt.datetime.fromisoformat(t) for t in times]
        slack = dt.timedelta(seconds=1)  # in case a dialect reads the database server's clock
        assert before - slack <= at[0] and at[-1] <= after + slack

        await store.save_cursor("app", 5)
        await store.save_cursor("app", 2)  # late, older: ignored
        assert await store.cursor("app") == 5 and await store.cursor("other") == 0
        await store.save_cursor("app", 7)
        assert await store.cursor("app") == 7


async def test_rows_read_back_as_written_in_key_order_and_the_other_reads_agree(
    db: Path | str,
) -> None:
    # Text keys in byte order (not numeric, not a locale's), int keys as numbers.
    ids = ["b", "B", "a", "\u00e9", "Z", "10", "9"]
    fixtures = [
        FixtureRow(
            i,
            SPORT,
            "s1" if i != "a" else None,
            "2024-03-01T18:30:00Z" if i != "b" else None,
            "Live" if i in ("a", "Z") else "Scheduled",
            f"fixture {i}",
            int(i == "9"),
            json.dumps({"id": i}),
        )
        for i in ids
    ]
    events = [
        EventRow(10, "ten", "2024-03-01T18:30:00.250000Z", None, 1, '{"id": 10}'),
        EventRow(9, None, None, "2024-03-02T00:00:00Z", 0, '{"id":  9}'),
    ]
    async with mirror(db) as store:
        await store.write([Write("fixtures", fixtures), Write("events", events)])
        await store.write([Write("actions", [action("a", 1), action("a", 2), action("Z", 1)])])
        stored = await store.rows("fixtures")
        assert [r[0] for r in stored] == ["10", "9", "B", "Z", "a", "b", "\u00e9"]
        assert stored == sorted(fixtures, key=lambda r: r.id.encode())  # values as written
        assert await store.rows("events") == [events[1], events[0]]
        assert await store.counts() == {t: 0 for t in MIRROR_COLUMNS} | {
            "fixtures": 7,
            "events": 2,
            "actions": 3,
        }
        assert sorted(await store.fixtures()) == sorted(
            (r.id, r.sport, r.season_id, r.status, bool(r.deleted)) for r in fixtures
        )
        assert await store.count_actions("a") == 2 and await store.count_actions("b") == 0
        assert await store.has("fixtures", "status", "Live")
        assert not await store.has("fixtures", "status", "Completed")
        assert await store.has("events", "id", 9) and not await store.has("events", "id", 8)
        with pytest.raises(ValueError, match="no column"):
            await store.has("fixtures", "nope", "x")
        with pytest.raises(ValueError, match="no column"):
            await store.has("nope", "id", "x")


async def test_the_stored_fixtures_come_in_one_order_whatever_the_engine(db: Path | str) -> None:
    written = [FixtureRow(i, SPORT, None, None, "Scheduled", None, 0, "{}") for i in "cab"]
    async with mirror(db) as store:
        await store.write([Write("fixtures", written)])
        await store.write([Write("fixtures", [written[1]._replace(status="Live")])])
        assert [f[0] for f in await store.fixtures()] == ["a", "b", "c"]


async def test_a_copy_replaying_the_change_log_holds_the_same_rows_and_logs_nothing(
    new_db: Callable[[str], str], tmp_path: Path
) -> None:
    f1, f2 = fixture(1).id, fixture(2).id
    steps = [
        [Write("fixtures", [fixture(1), fixture(2)])],
        [Write("actions", [action(f1, 1), action(f1, 2), action(f1, 3)], ("fixture_id", f1))],
        [Write("fixtures", [fixture(1, "Live")]), Write("actions", [action(f2, 1)])],
        [Write("actions", [action(f1, 2, "Stop Clock")], ("fixture_id", f1))],
        [Write("fixtures", [fixture(2, "Live", deleted=True)])],
        [Write("events", [EventRow(3, "e", None, None, 1, "{}")])],
        [Write("events", [EventRow(3, "e", None, None, 0, "{}")])],
    ]
    source = new_db("source")
    # A replica of the same engine, and a SQLite file (a consumer's own, whatever the source).
    replicas = [new_db("replica"), str(tmp_path / "file-replica.sqlite")]
    async with mirror(source) as store:
        for writes in steps:
            await store.write(writes)
        feed = await store.changes(0, limit=1000)
        assert [c.op for c in feed].count("delete") == 3  # two actions gone, a fixture deleted
        want = {t: await store.rows(t) for t in MIRROR_COLUMNS}
    for replica in replicas:
        async with mirror(replica) as copy:
            for i in range(0, len(feed), 3):  # in pieces, a row's changes split between them
                await copy.apply(feed[i : i + 3])
            assert {t: await copy.rows(t) for t in MIRROR_COLUMNS} == want, replica
            assert await copy.head() == 0  # a replay is not a change of its own
            assert await copy.contents() == "records"
            await copy.apply(feed)  # all of it again: the same rows
            assert await copy.rows("actions") == want["actions"]


async def test_a_released_lease_fences_its_writer_off_and_the_next_holder_writes(
    db: Path | str,
) -> None:
    a, b = Election(db, "sync", "a"), Election(db, "sync", "b")
    try:
        first = await a.take(60)
        assert first == Lease("sync", 1, "a")
        async with mirror(db, fence=first) as old:
            changed = await old.write([Write("fixtures", [fixture(1)])], marks=["m"], at=1.0)
            assert changed == {"fixtures": 1}
            await a.release(first)  # a clean stop: no need to wait for the lapse
            with pytest.raises(Deposed, match="term 1"):
                await old.write([Write("fixtures", [fixture(2)])], marks=["n"], at=2.0)
            second = await b.take(60)
            assert second == Lease("sync", 2, "b")
            async with mirror(db, fence=second) as new:
                assert await new.write([Write("fixtures", [fixture(3)])]) == {"fixtures": 1}
                with pytest.raises(Deposed, match="term 1"):
                    await old.write([], positions={"live:x": 1})
                assert await new.rows("fixtures") == [fixture(1), fixture(3)]
                assert [(c.seq, c.key) for c in await new.changes(0)] == [
                    (1, (fixture(1).id,)),
                    (2, (fixture(3).id,)),
                ]
                assert await new.marks() == {"m": 1.0}
                assert await new.position("live:x") is None
    finally:
        await a.close()
        await b.close()


# ---------------------------------------------------------------------- the change log


async def test_the_change_log_is_walked_in_commit_order_in_batches_of_at_most_limit(
    db: Path | str,
) -> None:
    async with mirror(db) as store:
        for n in range(1, 8):
            await store.write([Write("fixtures", [fixture(n)])])
        every = await store.change_rows(0, limit=100)
        batches = [b async for b in change_batches(store, 0, follow=False, limit=3)]
        assert [[line.seq for line in b] for b in batches] == [[1, 2, 3], [4, 5, 6], [7]]
        assert [line for b in batches for line in b] == every
        tail = [b async for b in change_batches(store, 5, follow=False)]
        assert [[line.seq for line in b] for b in tail] == [[6, 7]]
        assert [b async for b in change_batches(store, 7, follow=False)] == []


async def test_a_follower_gets_each_write_made_while_it_follows_and_ends_once_told(
    db: Path | str,
) -> None:
    async with mirror(db) as writer:
        log = await open_changes(db)  # the reader's own connection, as the feed's
        await writer.write([Write("fixtures", [fixture(1)])])
        got: list[int] = []
        waited, done = asyncio.Event(), asyncio.Event()

        async def idle() -> None:
            waited.set()

        async def follow() -> None:
            async for lines in change_batches(log, 0, follow=True, until=done, idle=idle):
                got.extend(line.seq for line in lines)

        follower = asyncio.create_task(follow())
        try:
            await asyncio.wait_for(waited.wait(), 5)  # caught up, and following
            assert got == [1]
            # Woken by the commit (PostgreSQL: its NOTIFY, well before the 10 s recheck).
            await writer.write([Write("fixtures", [fixture(2)])])
            await until(lambda: got == [1, 2], within=5)
            # Committed before it is told to end: given all the same, then it ends.
            await writer.write([Write("fixtures", [fixture(3)]), Write("fixtures", [fixture(4)])])
            done.set()
            await asyncio.wait_for(follower, 5)
            assert got == [1, 2, 3, 4]
        finally:
            follower.cancel()
            await log.close()


async def test_a_change_log_reader_refuses_a_file_that_is_not_there_and_makes_none(
    tmp_path: Path,
) -> None:
    # A mistyped --db: said at once, where a follower used to make an empty mirror there
    # and wait on it for ever.
    db = tmp_path / "typo.sqlite"
    with pytest.raises(SinkError, match=r"cannot read .*typo\.sqlite: there is no such file"):
        await open_changes(db)
    assert files(tmp_path) == []


async def test_a_follower_started_before_the_mirror_made_its_tables_waits_for_them(
    db: Path | str,
) -> None:
    """The database is there but its mirror has not made its tables (an empty file, a new
    PostgreSQL database): the change log reads as empty, makes nothing, and a follower
    gets the mirror's first commit."""
    if not is_pg(db):
        empty_file(Path(db))
    log = await open_changes(db)
    try:
        assert await log.contents() == "nothing" and await log.head() == 0
        assert await log.change_rows(0) == [] and await log.cursor("app") == 0
        if is_pg(db):
            assert await pg_tables(str(db)) == []
        else:
            assert size(Path(db)) == 0
        got: list[int] = []

        async def follow() -> None:
            async for lines in change_batches(log, 0, follow=True, recheck=0.2):
                got.extend(line.seq for line in lines)

        follower = asyncio.create_task(follow())
        try:
            async with mirror(db) as writer:
                await writer.write([Write("fixtures", [fixture(1)])])
                await until(lambda: got == [1], within=5)
            assert await log.contents() == "mirror"
        finally:
            follower.cancel()
    finally:
        await log.close()


# --------------------------------------------------------------------------- the lease


async def test_the_lease_s_holder_through_a_release_a_retake_and_a_stale_release(
    db: Path | str,
) -> None:
    a, b, watcher = (Election(db, "sync", who) for who in ("a", "b", "w"))
    other = Election(db, "standby", "b")
    try:
        assert await watcher.holder() is None  # never taken
        first = await a.take(60)
        assert first == Lease("sync", 1, "a")
        assert await b.take(60) is None
        assert await watcher.holder() == (1, "a", True)
        assert await a.renew(first, 60)
        await a.release(first)
        assert await watcher.holder() == (1, "a", False)  # lapsed at once, not taken
        again = await a.take(60)  # the same holder again: a new term all the same
        assert again == Lease("sync", 2, "a")
        assert not await a.renew(first, 60)
        await a.release(first)  # the old term's release lets nothing go
        assert await watcher.holder() == (2, "a", True)
        assert await b.take(60) is None
        # Another lease's name is a lease of its own.
        assert await other.take(60) == Lease("standby", 1, "b")
        assert await watcher.holder() == (2, "a", True)
    finally:
        for e in (a, b, watcher, other):
            await e.close()


# -------------------------------------------------------------------------- the reader


async def test_a_reader_counts_and_reads_rows_in_chunks_and_queries(db: Path | str) -> None:
    fixtures = [fixture(n, "Live" if n % 2 else "Scheduled") for n in range(1, 6)]
    acts = [action(fixtures[0].id, n) for n in range(1, 4)]
    async with mirror(db) as store:
        await store.write([Write("fixtures", fixtures), Write("actions", acts)])
    async with open_store(db) as reader:
        counts = await reader.counts()
        assert {t: counts[t] for t in ("fixtures", "actions", "statistics", "changes")} == {
            "fixtures": 5,
            "actions": 3,
            "statistics": 0,
            "changes": 8,
        }
        chunks = [chunk async for chunk in reader.rows("fixtures", chunk=2)]
        assert [len(c) for c in chunks] == [2, 2, 1]
        assert [r[0] for c in chunks for r in c] == [f.id for f in fixtures]  # by key
        assert [r[-1] for c in chunks for r in c] == [f.json for f in fixtures]  # as sent
        live = [
            c
            async for c in reader.query(
                "SELECT id FROM fixtures WHERE status = 'Live' ORDER BY id", chunk=1
            )
        ]
        assert live == [[(fixtures[0].id,)], [(fixtures[2].id,)], [(fixtures[4].id,)]]
        assert await reader.value("SELECT count(*) FROM fixtures") == len(fixtures)
        assert await reader.value("SELECT id FROM fixtures WHERE id = 'none'") is None
        with pytest.raises(SinkError, match="no table 'nope'"):
            [c async for c in reader.rows("nope")]


async def test_a_reader_left_in_the_middle_of_a_table_closes_without_an_error(
    db: Path | str,
) -> None:
    """``break`` out of ``rows()``: the generators are closed by the loop after the reader
    (the garbage collector hands them over), and closing a cursor then failed on the
    closed connection ("Task exception was never retrieved")."""
    async with mirror(db) as store:
        await store.write([Write("fixtures", [fixture(n) for n in range(1, 4)])])
    loop = asyncio.get_running_loop()
    errors: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _, context: errors.append(context))
    try:
        async with open_store(db) as reader:
            async for rows in reader.rows("fixtures", chunk=1):
                assert len(rows) == 1
                break
        gc.collect()  # the generators' finalizers: each schedules its aclose() on the loop
        for _ in range(20):  # let those run
            await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(None)
    assert errors == []


async def test_a_reader_reads_rows_as_the_mirror_reads_them(
    db: Path | str, request: pytest.FixtureRequest
) -> None:
    rows = [fixture(1), fixture(2, "Live", deleted=True)]
    async with mirror(db) as store:
        await store.write([Write("fixtures", rows)])
        want = await store.rows("fixtures")
    assert want == rows
    assert await read_all(db, "fixtures") == [want]


async def test_a_reader_reads_text_keys_in_byte_order_as_the_mirror_does(
    db: Path | str, request: pytest.FixtureRequest
) -> None:
    if is_pg(db):
        # Most servers' databases sort text by a language's rules (en_US.UTF-8), not
        # by bytes as the throwaway server's C locale does: one made so (ICU: PostgreSQL
        # 15 or newer, as Debian 12's).
        name = "icu_" + str(db).rsplit("/", 1)[1]
        conn = await asyncpg.connect(beside(str(db), "postgres"))
        try:
            await conn.execute(
                f"CREATE DATABASE {name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'"
            )
        finally:
            await conn.close()
        db = beside(str(db), name)
    ids = ["b", "B", "a", "Z", "10", "9"]
    written = [FixtureRow(i, SPORT, None, None, "Scheduled", None, 0, "{}") for i in ids]
    by_bytes = ["10", "9", "B", "Z", "a", "b"]
    async with mirror(db) as store:
        await store.write([Write("fixtures", written)])
        assert [r[0] for r in await store.rows("fixtures")] == by_bytes
    assert [r[0] for c in await read_all(db, "fixtures") for r in c] == by_bytes


async def test_a_reader_refuses_a_database_that_is_not_there_and_creates_none(
    db: Path | str, tmp_path: Path
) -> None:
    if is_pg(db):
        url = str(db)
        missing = beside(url, "nowhere")
        with pytest.raises(SinkError, match=r"cannot read .*nowhere.*does not exist"):
            async with open_store(missing):
                pass
        assert "nowhere" not in await pg_databases(url)
    else:
        missing = str(tmp_path / "nope.sqlite")
        with pytest.raises(SinkError, match=r"cannot read .*nope\.sqlite"):
            async with open_store(missing):
                pass
        assert files(tmp_path) == []  # no file, no -wal or -shm beside it


async def test_a_reader_refuses_a_database_with_no_store_in_it_and_writes_nothing(
    db: Path | str, request: pytest.FixtureRequest
) -> None:
    if not is_pg(db):
        empty_file(Path(db))  # a SQLite database with nothing in it
    opened: tuple[int, list[str], dict[str, int]] | None = None
    refused = ""
    try:
        async with open_store(db) as reader:
            opened = (reader.version, reader.tables, await reader.counts())
    except SinkError as exc:
        refused = str(exc)
    # Opened or not, nothing is written to it.
    if is_pg(db):
        assert await pg_tables(str(db)) == []
    else:
        assert files(Path(db).parent) == [Path(db).name]
        assert size(Path(db)) == 0
    assert opened is None, opened
    assert "holds no asyncsports tables" in refused


async def test_a_reader_refuses_another_application_s_database_and_writes_nothing(
    db: Path | str,
) -> None:
    if is_pg(db):
        conn = await asyncpg.connect(str(db))
        try:
            await conn.execute("CREATE TABLE fixtures (x int)")
        finally:
            await conn.close()
    else:
        with contextlib.closing(sqlite3.connect(db)) as conn:
            conn.execute("CREATE TABLE fixtures (x)")
    with pytest.raises(SinkError, match="is not an asyncsports database"):
        async with open_store(db):
            pass
    if is_pg(db):
        assert await pg_tables(str(db)) == ["fixtures"]
    else:
        with contextlib.closing(sqlite3.connect(db)) as conn:
            names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master")]
        assert names == ["fixtures"]


async def test_a_reader_reads_one_snapshot_while_a_writer_commits(db: Path | str) -> None:
    f1, f2 = fixture(1), fixture(2)
    async with mirror(db) as writer:
        await writer.write([Write("fixtures", [f1])])
        async with open_store(db) as reader:
            before = await reader.counts()
            assert before["fixtures"] == 1
            # Commits while the reader is open: not waiting for it, not seen by it.
            changed = await asyncio.wait_for(
                writer.write([Write("fixtures", [f2]), Write("actions", [action(f1.id, 1)])]),
                5,
            )
            assert changed == {"fixtures": 1, "actions": 1}
            assert await reader.counts() == before
            ids = [r[0] async for chunk in reader.rows("fixtures") for r in chunk]
            assert ids == [f1.id]
            heads = [c async for c in reader.query("SELECT max(seq) FROM changes")]
            assert heads == [[(1,)]]
        later = await read_all(db, "fixtures")
        assert [r[0] for c in later for r in c] == [f1.id, f2.id]


# ------------------------------------------------------------------------ the backfill


async def test_a_backfill_job_resumes_an_unfinished_run_and_starts_afresh_once_finished(
    db: Path | str,
) -> None:
    f3, f1, f2 = fixture(3), fixture(1), fixture(2, "Completed", deleted=True)
    a = [action(f3.id, n) for n in range(1, 5)]
    units = [
        Unit("fixtures 0", "fixtures", [f3, f1], members=[f3.id, f1.id]),
        Unit("fixtures 1", "fixtures", [f2], members=[f2.id, f3.id]),  # f3 listed again
        Unit(f"actions {f3.id}", "actions", a[:3], replace=f3.id),
        Unit(f"statistics {f1.id}", "statistics"),  # nothing: checkpointed all the same
    ]
    first = engine(db, "job")
    try:
        assert await first.open() == JobState(resumed=False)
        assert await first.write(units[:2]) == units[:2]
        assert await first.write(units[2:]) == units[2:]
        assert await first.counts() == {"fixtures": 3, "actions": 3, "statistics": 0}
    finally:
        await first.close()  # stopped: not finished

    second = engine(db, "job")
    try:
        state = await second.open()
        assert state.resumed and state.done == {u.name for u in units}
        # The fixtures its listings gave, in the order first listed.
        assert list(state.fixtures) == [
            (f3.id, SPORT, "Scheduled", False),
            (f1.id, SPORT, "Scheduled", False),
            (f2.id, SPORT, "Completed", True),
        ]
        other = engine(db, "other")
        try:
            assert await other.open() == JobState(resumed=False)  # a job of its own
        finally:
            await other.close()
        # A replace leaves exactly the unit's rows, even of a unit earlier in its batch.
        await second.write(
            [
                Unit("more", "actions", [a[3]]),
                Unit("again", "actions", [a[1]], replace=f3.id),
                Unit("after", "actions", [a[2]]),
            ]
        )
        assert await second.counts() == {"fixtures": 3, "actions": 2, "statistics": 0}
        await second.finish()
    finally:
        await second.close()
    async with mirror(db) as store:  # the backfill's rows, read back as written
        assert await store.rows("actions") == [a[1], a[2]]
        assert await store.rows("fixtures") == sorted([f1, f2, f3])
        assert await store.head() == 0  # a backfill logs no change

    fresh = engine(db, "job")
    try:
        assert await fresh.open() == JobState(resumed=False)  # finished: afresh
        await fresh.write([Unit("fixtures 0", "fixtures", [f1], members=[f1.id])])
    finally:
        await fresh.close()
    resumed = engine(db, "job")
    try:
        state = await resumed.open()
        assert state.resumed and state.done == {"fixtures 0"}
        assert list(state.fixtures) == [(f1.id, SPORT, "Scheduled", False)]
    finally:
        await resumed.close()
    restarted = engine(db, "job", restart=True)
    try:
        assert await restarted.open() == JobState(resumed=False)  # forgotten
        assert await restarted.counts() == {"fixtures": 3, "actions": 2, "statistics": 0}
    finally:
        await restarted.close()
    after = engine(db, "job")
    try:
        state = await after.open()  # unfinished, but nothing done
        assert state.resumed and not state.done and not state.fixtures
    finally:
        await after.close()
