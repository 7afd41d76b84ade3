"""The mirror's pure parts: the store's change log, the scheduler, the cadences."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import math
from pathlib import Path

import asyncpg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.servers import PostgresServer

from asyncsports.store import ChangeLine, EventRow, FixtureRow, Write, is_postgres, open_mirror
from asyncsports.sync import DEFAULT_EVERY, TABLES, parse_every
from asyncsports.sync._keys import (
    Events,
    Final,
    Fixtures,
    Live,
    NoStandings,
    Owed,
    Snooker,
    Squads,
    Standings,
    Stats,
    Window,
)
from asyncsports.sync._plan import Plan, wanted


def action(fid: str, aid: str, seq: int, text: str = "x") -> tuple[object, ...]:
    return (fid, aid, "basketball", seq, "Shot", "Confirmed", None, f'{{"t": "{text}"}}')


def fixture(fid: str, status: str, deleted: int = 0) -> tuple[object, ...]:
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


def test_the_named_rows_are_the_tables_columns_in_order() -> None:
    # Rows are read by name (row.status), written by position: the two must agree.
    assert FixtureRow._fields == TABLES["fixtures"]
    assert EventRow._fields == TABLES["events"]


async def test_a_change_line_is_read_by_name_and_decoded(db: Path | str) -> None:
    store = await open_mirror(db)
    await store.write([Write("fixtures", [fixture("f1", "Live")])])
    (line,) = await store.change_rows(0)
    assert isinstance(line, ChangeLine) and (line.seq, line.op, line.table) == (
        1,
        "insert",
        "fixtures",
    )
    change = line.decoded()
    assert change.key == ("f1",) and change.row["status"] == "Live"
    assert change.committed_at == line.committed_at and await store.changes(0) == [change]
    await store.close()


async def test_a_row_is_written_only_when_its_content_changed(db: Path | str) -> None:
    store = await open_mirror(db)
    assert (await store.write([Write("fixtures", [fixture("f1", "Scheduled")])]))["fixtures"] == 1
    assert (await store.write([Write("fixtures", [fixture("f1", "Scheduled")])])).total() == 0
    assert (await store.write([Write("fixtures", [fixture("f1", "Live")])]))["fixtures"] == 1
    deleted = [Write("fixtures", [fixture("f1", "Live", deleted=1)])]
    assert (await store.write(deleted))["fixtures"] == 1
    ops = [(c.seq, c.op, c.table, c.key) for c in await store.changes(0)]
    assert ops == [
        (1, "insert", "fixtures", ("f1",)),
        (2, "update", "fixtures", ("f1",)),
        (3, "delete", "fixtures", ("f1",)),  # fixtureDeleted: disregard it
    ]
    last = (await store.changes(2))[0]
    assert last.record == {"id": "f1", "status": "Live"} and last.row["deleted"] == 1
    assert (await store.changes(0))[0].as_dict()["record"] == {"id": "f1", "status": "Scheduled"}
    await store.close()


async def test_a_scoped_write_deletes_the_rows_no_longer_there(db: Path | str) -> None:
    store = await open_mirror(db)
    await store.write(
        [Write("actions", [action("f1", "a", 1), action("f1", "b", 2)], ("fixture_id", "f1"))]
    )
    await store.write([Write("actions", [action("f2", "a", 1)], ("fixture_id", "f2"))])
    await store.write([Write("actions", [action("f1", "a", 1, "y")], ("fixture_id", "f1"))])
    assert [r[:2] for r in await store.rows("actions")] == [("f1", "a"), ("f2", "a")]
    tail = [(c.op, c.key, c.row["json"]) for c in await store.changes(3)]
    assert tail == [("update", ("f1", "a"), '{"t": "y"}'), ("delete", ("f1", "b"), None)]
    await store.close()


async def test_cursors_and_marks_persist_and_a_cursor_never_moves_back(db: Path | str) -> None:
    store = await open_mirror(db)
    await store.write([], marks=["final:f1"], at=12.5)
    await store.save_cursor("app", 7)
    await store.save_cursor("app", 3)  # a late save of an older position
    await store.close()
    again = await open_mirror(db)
    assert await again.cursor("app") == 7 and await again.cursor("other") == 0
    assert await again.marks() == {"final:f1": 12.5}
    await again.close()


ids = st.sampled_from(["f1", "f2", "f3"])
actions = st.lists(st.tuples(st.sampled_from("abcd"), st.integers(0, 3)), max_size=4)
steps = st.lists(
    st.one_of(
        st.tuples(
            st.just("fixture"),
            ids,
            st.sampled_from(["Scheduled", "Live", "Completed"]),
            st.integers(0, 1),
        ),
        st.tuples(st.just("actions"), ids, actions, st.just(0)),
    ),
    max_size=25,
)


_REPLAY = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@_REPLAY
@given(steps)
def test_replaying_the_change_feed_rebuilds_the_same_tables(
    tmp_path: Path,
    todo: list,  # type: ignore[type-arg]
) -> None:
    asyncio.run(_replay(str(tmp_path / "a.sqlite"), str(tmp_path / "b.sqlite"), todo))


@pytest.mark.slow  # a PostgreSQL transaction a step: about 15 s
@_REPLAY
@given(steps)
def test_replaying_the_change_feed_rebuilds_the_same_tables_on_postgresql(
    postgres: PostgresServer,
    todo: list,  # type: ignore[type-arg]
) -> None:
    asyncio.run(_replay(*_databases(postgres), todo))


@functools.cache
def _databases(postgres: PostgresServer) -> tuple[str, str]:
    """Two databases for every example (each emptied first: creating them each time would
    take most of the test's time)."""
    return postgres.create_database(), postgres.create_database()


async def _replay(db: str, other: str, todo: list) -> None:  # type: ignore[type-arg]
    await _empty(db)
    await _empty(other)
    store, copy = await open_mirror(db), await open_mirror(other)
    for kind, fid, what, deleted in todo:
        if kind == "fixture":
            await store.write([Write("fixtures", [fixture(fid, what, deleted)])])
        else:
            rows = {aid: action(fid, aid, i, str(n)) for i, (aid, n) in enumerate(what)}
            await store.write([Write("actions", list(rows.values()), ("fixture_id", fid))])
    feed = await store.changes(0, limit=10_000)
    assert [c.seq for c in feed] == list(range(1, len(feed) + 1))
    await copy.apply(feed)
    for table in TABLES:
        assert await copy.rows(table) == await store.rows(table)
    await store.close()
    await copy.close()


def test_wanted_follows_a_fixture_through_its_day() -> None:
    assert wanted("Scheduled", False, False) is None
    assert wanted("Postponed", False, False) is None
    assert wanted("Live", False, False) == "live"
    assert wanted("Completed", False, False) == "final"
    assert wanted("Completed", False, True) is None
    assert wanted("Live", True, False) is None  # deleted: disregarded


def test_the_plan_hands_out_live_work_first_and_keeps_cadences() -> None:
    plan = Plan({"fixtures": 10})
    plan.add("squads:x", "squads", at=0)
    plan.add("fixtures:b", "fixtures", at=0)
    plan.add("live:f1", "live", at=1)
    assert plan.add("fixtures:b", "fixtures", at=99).due == 0  # already planned: kept
    assert plan.depth(1) == 3 and plan.wait(0) == 0
    first = plan.take(1)
    assert first is not None and first.key == "live:f1" and plan.running() == 1
    assert plan.rank(plan.tasks["squads:x"], 1) == 3 and plan.rank(plan.tasks["squads:x"], 35) == 0
    second = plan.take(1)
    assert second is not None and second.key == "fixtures:b"
    plan.finish(second, 2)
    assert second.due == 12 and plan.wait(2) == 0  # squads still due
    plan.add("final:f1", "final", at=0)
    once = plan.take(3)
    assert once is not None and once.key == "final:f1"
    plan.finish(once, 3)
    assert "final:f1" not in plan.tasks  # once, then dropped
    # Late: waiting longer than its own cadence (fixtures every 10 s, due since 12).
    assert [(t.key, behind) for t, behind in plan.late(25)] == [("fixtures:b", 13)]
    assert {t.key for t, _ in plan.late(DEFAULT_EVERY["squads"] + 1)} == {"squads:x", "fixtures:b"}


@given(
    st.lists(
        st.tuples(st.sampled_from(["live", "fixtures", "squads", "final"]), st.floats(0, 100)),
        max_size=30,
    )
)
def test_the_plan_never_hands_out_worse_work_while_better_is_due(
    tasks: list[tuple[str, float]],
) -> None:
    plan = Plan()
    for i, (kind, at) in enumerate(tasks):
        plan.add(f"{kind}:{i}", kind, at=at)
    now = 50.0
    while (task := plan.take(now)) is not None:
        due = [t for t in plan.tasks.values() if not t.running and t.due <= now]
        assert all(plan.rank(t, now) >= plan.rank(task, now) for t in due)
        # Better ranked is higher priority, or waiting longer by a cadence per level.
        assert task.priority - plan.rank(task, now) == int((now - task.due) / 30)
    assert plan.depth(now) == 0


def test_every_parses_and_refuses_nonsense() -> None:
    assert parse_every(["fixtures=10", "squads=3600,live=0.5"]) == {
        "fixtures": 10.0,
        "squads": 3600.0,
        "live": 0.5,
    }
    for bad in ("fixtures", "weather=5", "fixtures=soon", "fixtures=0", f"live={math.inf}"):
        with pytest.raises(ValueError, match="--every"):
            parse_every([bad])


def test_a_batch_keeps_each_fixtures_last_statistics_packet_and_every_action() -> None:
    from asyncsports.store import Write
    from asyncsports.sync._live import _last_packets

    def w(table: str, fid: str, n: int) -> tuple[str, Write]:
        return fid, Write(table, [(fid, n)])

    batch = [
        w("actions", "a", 1),
        w("statistics", "a", 1),
        w("statistics", "b", 1),
        w("actions", "a", 2),
        w("statistics", "a", 2),
    ]
    kept = [(x.table, x.rows[0]) for x in _last_packets(batch)]
    assert kept == [
        ("actions", ("a", 1)),
        ("statistics", ("b", 1)),
        ("actions", ("a", 2)),
        ("statistics", ("a", 2)),
    ]


def test_the_names_of_the_work_keep_the_texts_stored_in_databases() -> None:
    # Marks and positions are read back by text across versions: each text as before.
    assert [str(k) for k in (Fixtures("soccer"), Window("soccer"), Events(), Snooker())] == [
        "fixtures:soccer",
        "window:soccer",
        "events",
        "snooker",
    ]
    assert [str(k) for k in (Live("f1"), Stats("f1"), Final("f1"), Standings("s1"))] == [
        "live:f1",
        "stats:f1",
        "final:f1",
        "standings:s1",
    ]
    assert str(Owed("soccer", "s1")) == "standings:soccer:s1"
    assert str(NoStandings("s1")) == "nostandings:s1"
    assert str(Squads("soccer", "s1")) == "squads:soccer:s1"
    # One fixture's live task, feed and final read are three keys, not one.
    assert len({Live("f1"), Stats("f1"), Final("f1")}) == 3


@given(st.text().filter(lambda t: ":" not in t), st.text())
def test_an_owed_mark_reads_back_as_written(sport: str, season: str) -> None:
    assert Owed.parse(str(Owed(sport, season))) == Owed(sport, season)


@given(st.text(), st.text())
def test_no_other_mark_reads_as_owed_standings(fixture: str, season: str) -> None:
    for mark in (Final(fixture), NoStandings(season), Snooker(), Squads(fixture, season)):
        assert Owed.parse(str(mark)) is None


async def _empty(db: str) -> None:
    """``db`` as new for the next example: a file removed, a database's rows truncated."""
    if not is_postgres(db):
        for f in Path(db).parent.glob(Path(db).name + "*"):
            f.unlink()
        return
    conn = await asyncpg.connect(db)
    try:
        with contextlib.suppress(asyncpg.UndefinedTableError):  # not made yet
            await conn.execute("TRUNCATE changes, fixtures, actions RESTART IDENTITY")
    finally:
        await conn.close()
