"""The clock the caller controls: fixtures go live, timelines grow, events start and end."""

from __future__ import annotations

import datetime as dt
import time
from typing import Any

import pytest
from support.api import Api

from asyncsports.auth import StreamingCredentials, stream_token
from asyncsports.emulator import DEFAULT_NOW, Clock

EVENTS = "/streaming/api/v2/streaming/events"


def epoch(naive: str) -> float:
    return dt.datetime.fromisoformat(naive).replace(tzinfo=dt.UTC).timestamp()


def test_clock_api() -> None:
    clock = Clock(DEFAULT_NOW)
    assert clock.now() == DEFAULT_NOW and clock.now().tzinfo is not None
    assert clock.time() == DEFAULT_NOW.timestamp()
    clock.advance(90.5)
    assert clock.time() == DEFAULT_NOW.timestamp() + 90.5
    assert clock.time_ms() == int(clock.time() * 1000)
    clock.set(DEFAULT_NOW - dt.timedelta(days=1))
    assert clock.now() == DEFAULT_NOW - dt.timedelta(days=1)
    with pytest.raises(ValueError):
        clock.advance(-1)
    with pytest.raises(ValueError):
        Clock(dt.datetime(2026, 1, 1))
    running = Clock(DEFAULT_NOW, running=True)
    assert running.running and running.time() >= DEFAULT_NOW.timestamp()


async def test_a_fixture_goes_live_then_completes(api: Api) -> None:
    emu = api.emu
    upcoming = await api.fixtures("soccer", {"status": "scheduled"})
    f = upcoming[0]
    assert f not in await api.fixtures("soccer", {"live": "true"})
    emu.clock.set(dt.datetime.fromtimestamp(epoch(f["startDateUTC"]), dt.UTC))
    now_live = await api.json(f"/soccer/fixtures/{f['id']}")
    assert now_live["status"] == "Live"
    assert f["id"] in [x["id"] for x in await api.fixtures("soccer", {"live": "true"})]
    assert (await api.get(f"/soccer/fixtures/{f['id']}/statistics")).status == 404
    emu.clock.advance(4 * 3600)
    assert (await api.json(f"/soccer/fixtures/{f['id']}"))["status"] == "Completed"
    stats = await api.json(f"/soccer/fixtures/{f['id']}/statistics")
    assert stats["fixtureId"] == f["id"] and stats["finished"]


async def test_a_timeline_grows_action_by_action(api: Api) -> None:
    emu = api.emu
    f = (await api.fixtures("basketball", {"status": "scheduled"}))[0]
    path = f"/basketball/fixtures/{f['id']}/actions"
    start = epoch(f["startDateUTC"])
    emu.clock.set(dt.datetime.fromtimestamp(start - 7200, dt.UTC))
    assert await api.json(path) == []
    seen: list[dict[str, Any]] = []
    statuses = []
    for offset in (-3600, -1800, -1, 0, 600, 1800, 3600, 5400, 7200, 10800):
        emu.clock.set(dt.datetime.fromtimestamp(start + offset, dt.UTC))
        actions = await api.json(path)
        assert actions[: len(seen)] == seen  # what was served stays, in order
        assert len(actions) >= len(seen)
        assert all(
            a["fixtureAction"]["timestamp"] <= emu.clock.now().strftime("%Y-%m-%dT%H:%M:%S.999Z")
            for a in actions
        )
        seen = actions
        statuses.append(actions[-1]["fixtureSummary"]["currentStatus"])
    assert statuses[0] == "Scheduled" and "LineUps" in statuses and "Live" in statuses
    assert statuses[-1] == "Completed" and seen[-1]["finished"]


async def test_standings_count_fixtures_as_they_complete(api: Api) -> None:
    emu = api.emu
    f = (await api.fixtures("basketball", {"status": "scheduled"}))[0]
    season = f["stage"]["season"]["id"]

    async def counted() -> tuple[int, int]:
        """Games played in the standings, and two per completed, official, not deleted
        fixture of the season (what the standings count)."""
        table = (await api.json(f"/basketball/seasons/{season}/standings"))[0]
        fixtures = [
            x
            for x in await api.fixtures("basketball")
            if x["stage"]["season"]["id"] == season
            and x["status"] == "Completed"
            and x["type"] == "Official"
            and not x["fixtureDeleted"]
        ]
        return sum(r["gamesPlayed"] for r in table["teamStatistics"]), 2 * len(fixtures)

    played, want = await counted()
    assert played == want
    emu.clock.advance(2 * 86400)
    later, want = await counted()
    assert later == want > played  # the fixtures completed meanwhile, each counted


async def test_stream_events_go_live_and_end(api: Api) -> None:
    emu = api.emu
    events = (await api.events()).json()
    now = emu.clock.now()
    upcoming = next(
        e for e in events if dt.datetime.strptime(e["startDate"], "%Y-%m-%dT%H:%M:%S%z") > now
    )
    start = dt.datetime.strptime(upcoming["startDate"], "%Y-%m-%dT%H:%M:%S%z")
    end = dt.datetime.strptime(upcoming["endDate"], "%Y-%m-%dT%H:%M:%S%z")
    ids = [e["id"] for e in (await api.events({"live": "true"})).json()]
    assert upcoming["id"] not in ids
    playback = f"{EVENTS}/{upcoming['id']}/stream"
    assert (await api.get(playback, emu.streaming_credentials.params())).status == 400
    emu.clock.set(start)
    ids = [e["id"] for e in (await api.events({"live": "true"})).json()]
    assert upcoming["id"] in ids
    assert (await api.get(playback, emu.streaming_credentials.params())).status == 200
    emu.clock.set(end)
    assert upcoming["id"] not in [e["id"] for e in (await api.events()).json()]
    assert (await api.get(playback, emu.streaming_credentials.params())).status == 400
    assert (await api.events()).json()  # the schedule rolls on


async def test_streaming_tokens_expire_by_the_emulator_clock(api: Api) -> None:
    emu = api.emu
    params = emu.streaming_credentials.params()
    assert (await api.get(EVENTS, params)).status == 200
    emu.clock.advance(30)
    assert (await api.get(EVENTS, params)).status == 200
    emu.clock.advance(1)
    late = await api.get(EVENTS, params)
    assert late.status == 401 and b"expired" in late.body and b"behind" in late.body
    assert (await api.get(EVENTS, emu.streaming_credentials.params())).status == 200


@pytest.mark.emulator(speed=1_000_000)
async def test_streaming_tokens_live_30_real_seconds_on_a_running_clock(api: Api) -> None:
    # At speed X the clock's 30 s pass in 30 / X real seconds: a token signed by it would be
    # stale before its request came (at 600, after 50 ms: `asyncsports --emulator events
    # --watch` failed with 401 whenever a request took longer).
    emu = api.emu
    params = emu.streaming_credentials.params()
    assert (await api.get(EVENTS, params)).status == 200
    emu.clock.advance(31 * 1_000_000)  # 31 real seconds' worth at this speed
    late = await api.get(EVENTS, params)
    assert late.status == 401 and b"expired" in late.body


async def test_a_token_signed_ahead_of_the_emulator_clock_says_so(api: Api) -> None:
    emu = api.emu
    ahead = emu.clock.time_ms() + 90 * 86_400_000  # signed with a clock months ahead
    auth = stream_token(emu.stream_secret, "127.0.0.1", ahead)
    params = [("operatorId", str(emu.operator_id)), ("auth", auth), ("timestamp", str(ahead))]
    reply = await api.get(EVENTS, params)
    text = reply.body.decode()
    assert reply.status == 401
    assert "90.0 days ahead" in text and "emu.clock" in text


async def test_a_token_signed_with_the_real_time_is_accepted(api: Api) -> None:
    # As StreamingCredentials.from_secret signs by default, against the emulator's fixed clock.
    emu = api.emu
    creds = StreamingCredentials.from_secret(emu.operator_id, emu.stream_secret, "127.0.0.1")
    assert abs(emu.clock.time() - time.time()) > 86_400  # the two clocks are far apart
    assert (await api.get(EVENTS, creds.params())).status == 200
    late = StreamingCredentials.from_secret(
        emu.operator_id, emu.stream_secret, "127.0.0.1", clock=lambda: time.time() - 45
    )
    reply = await api.get(EVENTS, late.params())  # 45 s late by both clocks
    assert reply.status == 401 and b"ahead" in reply.body  # the emulator's clock is months back
