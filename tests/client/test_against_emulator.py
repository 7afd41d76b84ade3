"""The client against the embedded emulator: behaviour, clock-driven watchers, faults."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import TypeVar

import pytest
from support.stub import Requests

from asyncsports import Client, PagingError, RequestInfo, RetryPolicy, Sport
from asyncsports.emulator import Emulator
from asyncsports.errors import AuthenticationError, NotFoundError

T = TypeVar("T")

SPORTS = ["basketball", "ice-hockey", "volleyball", "cricket", "american-football", "soccer"]


@pytest.mark.parametrize("sport", SPORTS)
async def test_every_sport_lists_fixtures_in_the_default_order(
    sports_client: Client, sport: str
) -> None:
    fixtures = await sports_client.fixtures.list(sport, page_size=7).collect()
    assert len(fixtures) > 7
    keys = [(f.start_date_utc, f.name) for f in fixtures]
    assert keys == sorted(keys)
    assert len({f.id for f in fixtures}) == len(fixtures)
    assert all(f.start_date_utc.tzinfo is dt.UTC for f in fixtures)


async def test_filters_hold_for_every_record(sports_client: Client) -> None:
    done = await sports_client.fixtures.list(
        "basketball", status="completed", date_from="2024-01-01", include_deleted=False
    ).collect()
    assert done and all(f.status == "Completed" for f in done)
    assert all(f.start_date_utc.date() >= dt.date(2024, 1, 1) for f in done)
    assert not any(f.fixture_deleted for f in done)
    desc = await sports_client.fixtures.list("ice-hockey", sort="name,desc").collect()
    assert [f.name for f in desc] == sorted((f.name for f in desc), reverse=True)
    live = await sports_client.fixtures.list("soccer", live=True).collect()
    assert all(f.status == "Live" for f in live)


async def test_concurrent_walk_equals_sequential(sports_client: Client) -> None:
    one = await sports_client.fixtures.list("volleyball", page_size=5).collect()
    four = await sports_client.fixtures.list("volleyball", page_size=5, concurrency=4).collect()
    assert [f.id for f in four] == [f.id for f in one]


async def test_a_completed_fixture_has_a_consistent_timeline_and_statistics(
    sports_client: Client,
) -> None:
    (fixture, *_) = await sports_client.fixtures.list(
        Sport.AMERICAN_FOOTBALL, status="completed"
    ).collect()
    actions = await sports_client.actions.list(Sport.AMERICAN_FOOTBALL, fixture.id).collect()
    seqs = [a.fixture_action.fixture_seq_num for a in actions]
    assert seqs == sorted(seqs) and actions[-1].finished
    statuses = [a.fixture_summary.current_status for a in actions]
    assert statuses[-1] == "Completed" and "Live" in statuses
    stats = await sports_client.statistics.get(Sport.AMERICAN_FOOTBALL, fixture.id)
    assert stats.fixture_id == fixture.id and stats.finished


async def test_squads_standings_snooker_and_events(sports_client: Client) -> None:
    (f, *_) = await sports_client.fixtures.list("soccer").collect()
    table = await sports_client.standings.get("soccer", season_id=f.stage.season.id)
    for team in table[0].teams_statistics:
        assert team.total_wins + team.total_draws + team.total_losses == team.games_played
    (c, *_) = await sports_client.fixtures.list("cricket").collect()
    squads = await sports_client.squads.list("cricket", season_id=c.stage.season.id).collect()
    assert squads and all(s.season.id == c.stage.season.id for s in squads)
    by_team = await sports_client.squads.list("cricket", team_id=squads[0].team.id).collect()
    assert by_team[0].players == squads[0].players
    tournaments = await sports_client.snooker.tournaments().collect()
    assert tournaments[0].season_name == "1973/1974"
    last = tournaments[-1]
    winner = await sports_client.snooker.current_tournament_winner(last.tournament_id)
    image = await sports_client.snooker.player_info(winner.player_id, last.tournament_id)
    assert image.file_content.startswith(b"\x89PNG")
    events = await sports_client.events.list(vendor_data_id=True).collect()
    assert events and all(e.id for e in events)


async def test_unknown_ids_and_wrong_tokens(sports_emulator: Emulator) -> None:
    async with sports_emulator.client() as c:
        with pytest.raises(NotFoundError):
            await c.fixtures.get("basketball", "00000000-0000-4000-8000-000000000000")
    async with Client(sports_emulator.base_url, token="wrong") as c:
        with pytest.raises(AuthenticationError) as info:
            await c.fixtures.list("basketball").collect()
    assert "The supplied authentication is invalid" in str(info.value)


async def test_a_refreshed_token_is_used_after_a_401(sports_emulator: Emulator) -> None:
    tokens = iter(["stale", sports_emulator.token])
    async with sports_emulator.client(token=lambda: next(tokens)) as c:
        assert await c.fixtures.list("basketball", page_size=100).collect()


@pytest.mark.emulator(actions_per_fixture=60)
async def test_follow_a_live_fixture_driven_by_the_clock(sports_emulator: Emulator) -> None:
    def a_minute_per_poll(info: RequestInfo) -> None:
        # The emulator answered this poll at the old time; the next one sees a minute on.
        sports_emulator.clock.advance(60)

    seen: list[int] = []
    async with sports_emulator.client(on_response=a_minute_per_poll) as c:
        (fixture, *_) = await c.fixtures.list("american-football", status="scheduled").collect()
        polls = c.actions.follow("american-football", fixture.id, interval=0)
        async with asyncio.timeout(30), aclosing(polls):
            async for change in polls:  # ends with the fixture's last action
                if change.kind == "new":
                    seen.append(change.record.fixture_action.fixture_seq_num)
    assert seen == sorted(set(seen)) and len(seen) >= 10


async def test_watch_events_go_live_and_end_with_the_clock(sports_emulator: Emulator) -> None:
    changes: list[tuple[str, int]] = []
    first: set[int] = set()
    answered = Requests()

    def on_response(info: RequestInfo) -> None:
        # The clock moves an hour every second poll, only here: once the emulator has
        # answered one poll and before the next is signed (stream credentials are signed
        # by the emulator's clock), so every poll is signed and answered at one time.
        answered(info)
        if answered.count % 2 == 0 and answered.count <= 24:
            if answered.count == 2:  # what the watcher took in from the first hour
                first.update(i for _, i in changes)
            sports_emulator.clock.advance(3600)

    async with sports_emulator.client(on_response=on_response) as c:

        async def watch() -> None:
            async for change in c.events.watch(interval=0):
                changes.append((change.kind, change.record.id))

        task = asyncio.ensure_future(watch())
        try:
            async with asyncio.timeout(30):
                # Poll 25 is at the last time; the watcher sends poll 26 once it is taken in.
                await answered.reach(26)
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    ended = {i for kind, i in changes if kind == "ended"}
    live = {i for kind, i in changes if kind == "live"}
    assert first and ended and ended <= live
    assert live - first  # events that went live later were seen too


async def test_a_page_that_repeats_ends_the_walk(sports_emulator: Emulator) -> None:
    sports_emulator.faults.add("fixtures", repeat_page=True)
    async with sports_emulator.client() as c:
        with pytest.raises(PagingError):
            await c.fixtures.list("basketball", page_size=5).collect()


@pytest.mark.emulator(big_timeline=5000)
async def test_resets_and_truncations_mid_body_lose_nothing(sports_emulator: Emulator) -> None:
    async with sports_emulator.client() as c:
        clean = await c.actions.list("american-football", sports_emulator.big_fixture_id).collect()
    sports_emulator.faults.add("actions", reset=200_000, times=1)
    sports_emulator.faults.add("actions", truncate=900_000, times=1)
    async with sports_emulator.client(retry=RetryPolicy(base=0, cap=0)) as c:
        faulty = await c.actions.list("american-football", sports_emulator.big_fixture_id).collect()
        assert c.retries == 2
    assert [a.fixture_action.action_id for a in faulty] == [
        a.fixture_action.action_id for a in clean
    ]


@pytest.mark.emulator(big_fixture_list=1000, big_timeline=100_000)
@pytest.mark.slow
async def test_fault_storm_gives_results_identical_to_a_clean_run(
    sports_emulator: Emulator,
) -> None:
    """A 50-page walk and a 100,000-action stream under seeded 429s, 503s, resets, truncations."""
    sport, season, fixture = (
        "basketball",
        sports_emulator.big_season_id,
        sports_emulator.big_fixture_id,
    )

    async def run() -> tuple[list[object], int]:
        retry = RetryPolicy(max_retries=30, base=0.0, cap=0.0)
        async with sports_emulator.client(retry=retry) as c:
            pages = await c.fixtures.list(
                sport, season_id=season, page_size=20, concurrency=4
            ).collect()
            actions = 0
            last = None
            async for a in c.actions.list("american-football", fixture):
                actions += 1
                last = a.fixture_action.fixture_seq_num
            return [f.id for f in pages] + [last], actions

    clean, clean_actions = await run()
    sports_emulator.faults.storm(
        0.2, seed=7, kinds=("429", "503", "reset", "truncate"), retry_after=0, latency=0
    )
    stormy, stormy_actions = await run()
    survived = sum(sports_emulator.faults.injected.values())
    print(f"survived {survived} faults: {dict(sports_emulator.faults.injected)}")
    assert survived >= 10
    assert stormy == clean and stormy_actions == clean_actions == 100_000
    assert len(clean) == 1001


def client_tasks() -> set[asyncio.Task[object]]:
    """Tasks still running other than this one and the emulator's request handlers.

    Checked at once, without giving the loop a turn: leaving a walk or a stream awaits
    whatever it cancelled, so nothing may be left to finish later.
    """
    others = asyncio.all_tasks() - {asyncio.current_task()}
    return {t for t in others if "RequestHandler" not in repr(t.get_coro())}


@pytest.mark.emulator(big_fixture_list=400, latency=0.05)
async def test_leaving_a_concurrent_walk_early_releases_every_connection(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    it = sports_client.fixtures.list(
        "basketball", season_id=sports_emulator.big_season_id, page_size=10, concurrency=4
    )
    async with it:
        async for n, _ in aenumerate(it):
            if n == 25:  # page 2, with pages 3 to 6 in flight
                break
    assert sports_client.connections_in_use() == 0
    assert not client_tasks()


@pytest.mark.emulator(big_timeline=50_000)
async def test_leaving_a_stream_early_or_by_an_error_releases_the_connection(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    it = sports_client.actions.list("american-football", sports_emulator.big_fixture_id)
    with pytest.raises(RuntimeError):
        async with it:
            async for a in it:
                if a.fixture_action.fixture_seq_num == 100:
                    raise RuntimeError("the caller's own failure")
    assert sports_client.connections_in_use() == 0
    assert not client_tasks()


async def aenumerate(it: AsyncIterator[T]) -> AsyncIterator[tuple[int, T]]:
    n = 0
    async for x in it:
        yield n, x
        n += 1
