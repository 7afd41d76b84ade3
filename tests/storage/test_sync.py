"""The mirror against the emulator: a match day with the clock steered, the change feed."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from support import until
from support.mirror import FAST, SPORTS, assert_mirrors, caught_up, rows, settled

from asyncsports.emulator import Emulator
from asyncsports.sync import TABLES, Mirror, open_mirror
from asyncsports.sync._keys import Live, Stats
from asyncsports.sync._metrics import serve_metrics
from asyncsports.sync._plan import near_window, window

# The emulator of the ``sports_emulator`` fixture (asyncsports.testing.plugin).
pytestmark = pytest.mark.emulator(seed=3, fixtures_per_season=16, actions_per_fixture=40)


@pytest.mark.slow
async def test_a_match_day_at_speed_mirrors_what_the_service_answers(
    sports_emulator: Emulator, tmp_path: Path, db: Path | str, request: pytest.FixtureRequest
) -> None:
    async with sports_emulator.client() as client:
        # Polling (live=False); over the websockets: tests/storage/test_sync_live.py.
        mirror = Mirror(
            client,
            db,
            sports=SPORTS,
            every=FAST,
            days_back=1,
            days_ahead=1,
            clock=sports_emulator.clock.time,
            live=False,
        )
        assert mirror.follow_events and mirror.live.actions is None
        running = asyncio.create_task(mirror.run())
        try:
            seen: set[str] = set()
            for step in range(4):
                await caught_up(mirror)
                assert await assert_mirrors(client, sports_emulator, db) > 0
                statuses = {r[4] for r in rows(db, "fixtures")}
                seen |= statuses
                if step == 1:
                    # Run the clock at an hour a second for a moment, then freeze it again.
                    sports_emulator.clock.speed = 3600
                    await asyncio.sleep(0.2)
                    sports_emulator.clock.speed = 0
                else:
                    sports_emulator.clock.advance(2400)
            # The day moved fixtures on: some went live and completed while followed.
            assert {"Live", "Completed"} <= seen
            assert mirror.committed["statistics"] > 0 and mirror.committed["standings"] > 0
        finally:
            mirror.stop()
            await asyncio.wait_for(running, 30)
    # The change feed from the start rebuilds the same tables, on either engine.
    for into in (tmp_path / "copy.sqlite", request.getfixturevalue("postgres_url")):
        copy = await open_mirror(into)
        reader = Mirror(client, db)
        await copy.apply([c async for c in reader.changes(follow=False)])
        for table in TABLES:
            assert await copy.rows(table) == rows(db, table), table
        await copy.close()


async def test_a_restarted_consumer_resumes_after_what_it_was_done_with(
    sports_emulator: Emulator, db: Path | str
) -> None:
    async with sports_emulator.client() as client:
        mirror = Mirror(client, db, sports=["basketball"], clock=sports_emulator.clock.time)
        await mirror.once()
        total = len(rows(db, "fixtures")) + len(rows(db, "actions")) + len(rows(db, "statistics"))
        got = []
        async for change in mirror.changes(consumer="app", follow=False):
            got.append(change.seq)
            if len(got) == 10:
                break  # the consumer stops while holding change 10: it was not done with it
        await asyncio.sleep(0)
        rest = [c.seq async for c in mirror.changes(consumer="app", follow=False)]
        assert rest[0] == 10 and rest == list(range(10, rest[-1] + 1))  # at least once, in order
        assert rest[-1] >= total
        assert [c async for c in mirror.changes(consumer="app", follow=False)] == []
        # A pass over an unchanged service changes nothing.
        await mirror.once()
        assert [c async for c in mirror.changes(consumer="app", follow=False)] == []
        # The clock moves: only what changed comes.
        sports_emulator.clock.advance(900)
        await mirror.once()
        new = [c async for c in mirror.changes(consumer="app", follow=False)]
        assert new and {c.table for c in new} <= {
            "fixtures",
            "actions",
            "statistics",
            "standings",
            "squads",
            "events",
        }
        assert all(c.seq > rest[-1] for c in new)


async def test_the_feed_follows_commits_as_they_happen(
    sports_emulator: Emulator, db: Path | str
) -> None:
    async with sports_emulator.client() as client:
        mirror = Mirror(
            client, db, sports=["basketball"], every=FAST, clock=sports_emulator.clock.time
        )
        running = asyncio.create_task(mirror.run())
        try:
            async with asyncio.timeout(30):
                await mirror.caught_up()
                start = max([c.seq async for c in mirror.changes(follow=False)])
                sports_emulator.clock.advance(600)
                followed = []
                async for change in mirror.changes(start):
                    followed.append(change)
                    if change.table == "actions":
                        break
                logged = [c async for c in mirror.changes(start, follow=False)]
        finally:
            mirror.stop()
            await running
    # Each commit after ``start``, in order, as the log holds it: none skipped, none twice.
    assert followed == logged[: len(followed)]
    seqs = [c.seq for c in followed]
    assert seqs == sorted(set(seqs)) and seqs[0] > start


@pytest.mark.slow
async def test_metrics_and_healthz(sports_emulator: Emulator, tmp_path: Path) -> None:
    async with sports_emulator.client(rate_limit=50) as client:
        mirror = Mirror(
            client,
            tmp_path / "m.sqlite",
            sports=["basketball"],
            every=FAST,
            clock=sports_emulator.clock.time,
        )
        running = asyncio.create_task(mirror.run())
        server = await serve_metrics(mirror, 0)
        port = server.addresses[0][1]
        try:
            await caught_up(mirror)
            async with aiohttp.ClientSession() as http:
                async with http.get(f"http://127.0.0.1:{port}/healthz") as r:
                    assert r.status == 200 and (await r.json())["ok"] is True
                async with http.get(f"http://127.0.0.1:{port}/metrics") as r:
                    text = await r.text()
        finally:
            mirror.stop()
            await running
            await server.cleanup()
    assert 'asyncsports_sync_requests_total{resource="fixtures",status="200"}' in text
    for name in ("budget_used", "queue_depth", "feeds_open", "tasks_behind"):
        assert f"asyncsports_sync_{name} " in text
    assert 'asyncsports_sync_freshness_seconds{resource="fixtures"}' in text


@pytest.mark.slow
async def test_a_budget_too_small_is_said(
    sports_emulator: Emulator, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Live polling every 10 ms with 2 requests a second: far behind; the plan says so.
    sports_emulator.rate_limit = 2  # and the server counts: 2 in any sliding second
    async with sports_emulator.client(rate_limit=2) as client:
        mirror = Mirror(
            client,
            tmp_path / "m.sqlite",
            sports=["basketball"],
            concurrency=1,
            every={"live": 0.01, "fixtures": 0.01},
            clock=sports_emulator.clock.time,
            live=False,
        )
        running = asyncio.create_task(mirror.run())
        try:
            await asyncio.sleep(1.0)  # a second of work: far more than 2 requests wanted
            behind = mirror.plan.late(asyncio.get_running_loop().time())
        finally:
            mirror.stop()
            await running
        assert behind and {t.kind for t, _ in behind} & {"live", "fixtures"}
        # The budget held meanwhile: no 429, and the requests of a second and the ones in
        # flight when it stopped, about 2 a second.
        assert sports_emulator.faults.injected["rate_limit"] == 0
        assert client.requests_sent <= 2 * 3 + 4


def test_dates_of_the_windows() -> None:
    noon = dt.datetime(2026, 6, 1, 12, tzinfo=dt.UTC).timestamp()
    assert near_window(noon) == (dt.date(2026, 5, 31), dt.date(2026, 6, 2))
    assert window(noon, 3, 0) == (dt.date(2026, 5, 29), dt.date(2026, 6, 1))


@pytest.mark.slow
async def test_live_actions_come_from_a_live_feed_where_one_is_plugged_in(
    sports_emulator: Emulator, tmp_path: Path
) -> None:
    # The seams for client.live: feeds that give the timeline from start_position on (and
    # a statistics packet), then stay open as a websocket would.
    calls: list[tuple[str, int]] = []
    hold = asyncio.Event()

    async def feed(sport: str, fid: str, start: int) -> AsyncIterator[Any]:
        calls.append((fid, start))
        for record in (await client.with_json.actions.list(sport, fid).collect())[start:]:
            yield record
        await hold.wait()

    async def statistics(sport: str, fid: str, start: int) -> AsyncIterator[Any]:
        # While live the service has no REST packet: one of an ended fixture stands in.
        done = await client.fixtures.list(sport, status="completed", page_size=1).collect()
        yield await client.with_json.statistics.get(sport, done[0].id)
        await hold.wait()

    db = tmp_path / "m.sqlite"
    async with sports_emulator.client() as client:
        mirror = Mirror(
            client,
            db,
            sports=["basketball"],
            every=FAST,
            clock=sports_emulator.clock.time,
            live_feed=feed,
            statistics_feed=statistics,
        )
        running = asyncio.create_task(mirror.run())
        try:
            await caught_up(mirror)
            await caught_up(mirror)
            live = [t.args[1] for t in mirror.plan.tasks.values() if t.kind == "live"]
            assert live and sorted(f for f, _ in calls) == sorted(live)  # one feed each
            assert sum(not f.done() for f in mirror.feeds.values()) == 2 * len(live)
            # The live statistics: each feed's packet, committed by the feeds' committer,
            # which caught_up() does not wait for (under CI's load it came after).
            await until(lambda: set(live) <= {r[0] for r in rows(db, "statistics")}, 30, 0.05)
            requests = sports_emulator.requests["actions"]
            await caught_up(mirror)
            assert (
                sports_emulator.requests["actions"] == requests
            )  # no polling while the feeds are open
            assert await settled(client, sports_emulator, db, ["basketball"])
            # The fixtures end: their feeds close, the REST packet replaces the live one.
            sports_emulator.clock.advance(6 * 3600)
            await caught_up(mirror)
            for fid in live:
                assert Live(fid) not in mirror.plan.tasks
                for key in (Live(fid), Stats(fid)):
                    assert key not in mirror.feeds or mirror.feeds[key].done()
            assert await settled(client, sports_emulator, db, ["basketball"])
        finally:
            hold.set()
            mirror.stop()
            await running
