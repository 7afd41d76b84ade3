"""The clock at a speed: ``Clock.speed``, ``/_emulator/clock`` and the live feeds following it."""

from __future__ import annotations

import datetime as dt
import types

import aiohttp
import pytest
from support.api import Api, connect, fixture_id, rest_actions

from asyncsports.emulator import DEFAULT_NOW, Clock, Emulator
from asyncsports.emulator import _clock as clock_module
from asyncsports.emulator.__main__ import _parser

T0 = DEFAULT_NOW.timestamp()


# The emulator of the ``sports_emulator`` fixture (asyncsports.testing.plugin).
pytestmark = pytest.mark.emulator(live_heartbeat=0.3)


class Wall:
    """A stand-in for the ``time`` module as the clock sees it: monotonic time set by hand."""

    def __init__(self) -> None:
        self.t = 1000.0

    def monotonic(self) -> float:
        return self.t


@pytest.fixture
def wall(monkeypatch: pytest.MonkeyPatch) -> Wall:
    w = Wall()
    monkeypatch.setattr(clock_module, "time", types.SimpleNamespace(monotonic=w.monotonic))
    return w


def test_speed_runs_the_clock_that_many_times_faster(wall: Wall) -> None:
    clock = Clock(DEFAULT_NOW, speed=60)
    assert clock.running and clock.speed == 60
    wall.t += 2
    assert clock.time() == T0 + 120
    assert clock.until(T0 + 180) == pytest.approx(1.0)
    assert clock.until(T0) == 0.0


def test_a_new_speed_never_makes_the_clock_jump(wall: Wall) -> None:
    seen: list[float] = []
    clock = Clock(DEFAULT_NOW, running=True)
    clock.watch(lambda: seen.append(clock.time()))
    wall.t += 10
    clock.speed = 0
    assert clock.time() == T0 + 10 and not clock.running
    assert clock.until(T0 + 11) is None  # frozen: it never gets there by itself
    wall.t += 100
    assert clock.time() == T0 + 10
    clock.speed = 3.5
    wall.t += 2
    assert clock.time() == T0 + 17
    clock.advance(3)
    assert clock.time() == T0 + 20
    assert seen == [T0 + 10, T0 + 10, T0 + 20]  # watchers hear of each new speed too


@pytest.mark.parametrize("bad", [-1, float("nan"), float("inf")])
def test_a_bad_speed_is_refused(bad: float) -> None:
    with pytest.raises(ValueError, match="speed"):
        Clock(DEFAULT_NOW, speed=bad)
    clock = Clock(DEFAULT_NOW)
    with pytest.raises(ValueError, match="speed"):
        clock.speed = bad
    with pytest.raises(TypeError, match="speed"):
        clock.speed = "fast"  # type: ignore[assignment]
    assert clock.speed == 0


def test_the_command_takes_a_speed() -> None:
    assert _parser().parse_args(["--speed", "60"]).speed == 60.0
    assert Emulator(speed=60).clock.speed == 60
    assert Emulator(running_clock=True).clock.speed == 1
    assert Emulator().clock.speed == 0


async def control(api: Api, body: object | None = None) -> tuple[int, dict[str, object]]:
    url = api.emu.base_url + "/_emulator/clock"
    if body is None:
        async with api.session.get(url) as r:
            return r.status, await r.json()
    async with api.session.post(url, json=body) as r:
        return r.status, await r.json()


async def test_the_control_endpoint_reads_and_steers_the_clock(
    sports_emulator: Emulator, api: Api
) -> None:
    sports_emulator.rate_limit = 1
    status, state = await control(api)
    assert status == 200
    assert state == {"now": DEFAULT_NOW.isoformat(), "time": T0, "speed": 0.0}
    status, state = await control(api, {"advance": 90})
    assert status == 200 and state["time"] == T0 + 90 and sports_emulator.clock.time() == T0 + 90
    later = DEFAULT_NOW + dt.timedelta(hours=2)
    status, state = await control(api, {"now": "2026-06-01T14:00:00"})  # naive is UTC
    assert state["now"] == later.isoformat() and sports_emulator.clock.now() == later
    await control(api, {"now": T0, "speed": 1000})
    assert sports_emulator.clock.speed == 1000 and sports_emulator.clock.running
    status, state = await control(api, {"speed": 0})
    frozen = sports_emulator.clock.time()
    assert state["speed"] == 0 and state["time"] == frozen
    assert (await control(api))[1]["time"] == frozen
    # None of it is a request of the emulated services: not counted, never rate limited.
    assert (
        sum(sports_emulator.requests.values()) == 0
        and sports_emulator.faults.injected["rate_limit"] == 0
    )


@pytest.mark.parametrize(
    "body",
    [
        [],
        {},
        {"pause": True},
        {"advance": -5},
        {"advance": "5"},
        {"speed": -1},
        {"speed": True},
        {"now": "yesterday"},
        {"now": "2026-06-01T00:00:00Z", "speed": -1},  # nothing changes, not even now
    ],
)
async def test_a_bad_control_body_is_a_400_that_changes_nothing(
    sports_emulator: Emulator, api: Api, body: object
) -> None:
    status, answer = await control(api, body)
    assert status == 400 and answer["status"] == 400 and answer["error"]
    assert sports_emulator.clock.time() == T0 and sports_emulator.clock.speed == 0


async def test_the_live_feed_follows_the_clock_at_its_speed() -> None:
    # Heartbeats 20 s apart: only the clock's speed can wake the feed in time.
    async with Emulator() as emu, aiohttp.ClientSession() as session:
        await _follows(emu, Api(emu, session))


async def _follows(emu: Emulator, api: Api) -> None:
    fid = await fixture_id(api, "live")
    rest = await rest_actions(api, "basketball", fid)
    feed = await connect(emu, api.session, f"/basketball/fixtures/{fid}/actions")
    assert await feed.packets(len(rest)) == rest
    status, _ = await control(api, {"speed": 600})  # ten minutes a second
    assert status == 200
    more = await feed.packets(2)
    assert len(more) == 2
    await control(api, {"speed": 0})
    now_rest = await rest_actions(api, "basketball", fid)
    assert rest + more == now_rest[: len(rest) + 2]
    await feed.ws.close()
