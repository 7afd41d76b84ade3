"""Scripted faults, the fault storm, the counters and the server-side rate limit."""

from __future__ import annotations

import asyncio
import datetime as dt
import email.utils
import time

import aiohttp
import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.api import Api

from asyncsports.emulator import DEFAULT_NOW, Clock, Emulator
from asyncsports.emulator._faults import RateLimiter

FIXTURES = "/basketball/fixtures"


async def read(api: Api, path: str = FIXTURES) -> tuple[int | None, bytes, Exception | None]:
    """Status, the bytes that arrived, and the error that cut them short, if any."""
    body = bytearray()
    try:
        async with api.session.get(api.emu.base_url + path, headers=api.headers()) as r:
            try:
                async for chunk in r.content.iter_any():
                    body += chunk
            except aiohttp.ClientError as exc:
                return r.status, bytes(body), exc
            return r.status, bytes(body), None
    except aiohttp.ClientError as exc:
        return None, bytes(body), exc


async def test_429_with_retry_after_seconds_a_given_number_of_times(api: Api) -> None:
    rule = api.emu.faults.add("fixtures", status=429, retry_after=2, times=3)
    for _ in range(3):
        r = await api.get(FIXTURES)
        assert r.status == 429 and r.headers["Retry-After"] == "2"
        assert r.json() == {"error": "Too Many Requests", "status": 429}
    assert (await api.get(FIXTURES)).status == 200
    assert rule.hits == 3 and rule.seen == 4 and not rule.active
    assert api.emu.faults.injected["429"] == 3


async def test_retry_after_as_an_http_date(api: Api) -> None:
    when = dt.datetime(2030, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    api.emu.faults.add("*", status=429, retry_after=when, times=1)
    r = await api.get(FIXTURES)
    assert r.headers["Retry-After"] == "Wed, 02 Jan 2030 03:04:05 GMT"
    assert email.utils.parsedate_to_datetime(r.headers["Retry-After"]) == when


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_server_errors(api: Api, status: int) -> None:
    api.emu.faults.add("snooker", status=status)
    r = await api.get("/snooker/tvfeed/tour-players")
    assert r.status == status and r.json()["status"] == status
    assert (await api.get(FIXTURES)).status == 200
    assert api.emu.faults.injected == {str(status): 1}


async def test_added_latency(api: Api) -> None:
    api.emu.faults.add("fixture", latency=0.3, times=1)
    fid = (await api.fixtures())[0]["id"]
    started = time.monotonic()
    assert (await api.get(f"{FIXTURES}/{fid}")).status == 200
    assert time.monotonic() - started >= 0.3
    api.emu.latency = 0.2
    started = time.monotonic()
    await api.get(FIXTURES)
    assert time.monotonic() - started >= 0.2
    assert api.emu.faults.injected["latency"] == 1


async def test_connection_reset_mid_body(api: Api) -> None:
    _, good, _ = await read(api)
    api.emu.faults.add("fixtures", reset=5000, times=1)
    _, body, error = await read(api)
    assert error is not None and len(body) < len(good) and good.startswith(body)
    assert api.emu.faults.injected["reset"] == 1
    assert (await read(api))[1] == good


async def test_truncated_body(api: Api) -> None:
    _, good, _ = await read(api)
    api.emu.faults.add("fixtures", truncate=1000, times=1)
    status, body, error = await read(api)
    assert status == 200 and isinstance(error, aiohttp.ClientPayloadError)
    assert body == good[:1000]
    # A body shorter than the cut still ends without its final chunk.
    api.emu.faults.add("fixture", truncate=10**9, times=1)
    fid = msgspec.json.decode(good)[0]["id"]
    status, body, error = await read(api, f"{FIXTURES}/{fid}")
    assert isinstance(error, aiohttp.ClientPayloadError) and body
    assert api.emu.faults.injected["truncate"] == 2


async def test_malformed_json(api: Api) -> None:
    good = (await api.get(FIXTURES)).body
    api.emu.faults.add("fixtures", malformed=True, times=1)
    r = await api.get(FIXTURES)
    assert r.status == 200
    with pytest.raises(msgspec.DecodeError):
        r.json()
    assert r.body.replace(b"\x00", b"", 1) == good


async def test_a_page_that_repeats(api: Api) -> None:
    params = {"paged": "true", "size": "10"}
    pages = [await api.json(FIXTURES, {**params, "page": str(p)}) for p in range(3)]
    rule = api.emu.faults.add("fixtures", repeat_page=True, times=1)
    assert await api.json(FIXTURES, {**params, "page": "0"}) == pages[0]
    assert rule.hits == 0  # the first page has nothing before it to repeat
    assert await api.json(FIXTURES, {**params, "page": "2"}) == pages[1]
    assert await api.json(FIXTURES, {**params, "page": "2"}) == pages[2]
    assert api.emu.faults.injected["repeat_page"] == 1
    api.emu.faults.add("events", repeat_page=True)
    listing = {"restrictions": "whitelist", "page.size": "5"}
    first = (await api.events({**listing, "page.page": "0"})).json()
    assert (await api.events({**listing, "page.page": "1"})).json() == first


async def test_routes_by_name_family_glob_and_skip(api: Api) -> None:
    faults = api.emu.faults
    faults.add("/v2/*", status=503)
    faults.add("actions", status=500, skip=1, times=1)
    assert (await api.get("/v2/volleyball/fixtures")).status == 503
    assert (await api.get(FIXTURES)).status == 200
    fid = (await api.fixtures())[0]["id"]
    assert (await api.get(f"{FIXTURES}/{fid}/actions")).status == 200
    assert (await api.get(f"{FIXTURES}/{fid}/actions")).status == 500
    assert (await api.get(f"{FIXTURES}/{fid}/actions")).status == 200
    faults.clear()
    assert (await api.get("/v2/volleyball/fixtures")).status == 200
    assert faults.injected == {"503": 1, "500": 1}


async def test_request_counters_and_log(api: Api) -> None:
    fid = (await api.fixtures())[0]["id"]
    await api.get(f"{FIXTURES}/{fid}")
    await api.get(f"{FIXTURES}/{fid}/actions")
    await api.get("/snooker/tvfeed/tour-players")
    await api.events()
    await api.get("/nowhere")
    assert api.emu.requests == {
        "fixtures": 1,
        "fixture": 1,
        "actions": 1,
        "snooker.tour-players": 1,
        "events": 1,
        "unknown": 1,
    }
    last = api.emu.log[-1]
    assert (last.route, last.method, last.path_qs, last.status) == (
        "unknown",
        "GET",
        "/nowhere",
        404,
    )
    assert [r.route for r in api.emu.log][:2] == ["fixtures", "fixture"]


async def statuses_under_storm(seed: int) -> list[int | None]:
    async with Emulator() as emu, aiohttp.ClientSession() as session:
        api = Api(emu, session)
        emu.faults.storm(0.5, seed=seed, kinds=("429", "500", "502", "503", "reset"))
        out: list[int | None] = []
        for _ in range(30):
            status, _, error = await read(api, "/snooker/tvfeed/tour-players")
            out.append(None if error is not None else status)
        assert sum(emu.faults.injected.values()) == sum(s != 200 for s in out)
        return out


async def test_a_storm_is_random_but_repeatable() -> None:
    first, again, other = [await statuses_under_storm(s) for s in (7, 7, 8)]
    assert first == again != other
    assert {200, 429, None} <= set(first) and 5 < first.count(200) < 25


async def test_storm_can_inject_every_kind(api: Api) -> None:
    api.emu.faults.storm(1.0, seed=1, kinds=("truncate", "malformed", "latency"), latency=0.01)
    for _ in range(12):
        await read(api)
    assert set(api.emu.faults.injected) == {"truncate", "malformed", "latency"}
    api.emu.faults.storm(0)
    assert (await read(api))[2] is None


async def test_server_side_rate_limit_runs_on_its_own_clock() -> None:
    async with (
        Emulator(rate_limit=5, rate_clock=Clock(DEFAULT_NOW)) as emu,
        aiohttp.ClientSession() as session,
    ):
        api = Api(emu, session)
        statuses = [r.status for r in await asyncio.gather(*(api.get(FIXTURES) for _ in range(8)))]
        assert sorted(statuses) == [200] * 5 + [429] * 3
        emu.clock.advance(3600)  # the data clock moving on does not open the window
        r = await api.get(FIXTURES)
        assert r.status == 429 and r.headers["Retry-After"] == "1"
        assert emu.faults.injected["rate_limit"] == 4
        emu.rate_clock.advance(1)  # as a client honouring Retry-After would wait
        assert (await api.get(FIXTURES)).status == 200
        emu.rate_limit = 1  # a new limit, on the same clock
        assert [(await api.get(FIXTURES)).status for _ in range(2)] == [200, 429]
        emu.rate_limit = None
        assert all(
            r.status == 200 for r in await asyncio.gather(*(api.get(FIXTURES) for _ in range(8)))
        )


def test_the_default_rate_clock_is_real_time_and_not_the_data_clock() -> None:
    emu = Emulator(rate_limit=5)
    assert emu.rate_clock is not emu.clock and emu.rate_clock.running
    assert not emu.clock.running


@settings(deadline=None)
@given(
    per_second=st.integers(1, 4),
    # Milliseconds between requests: bursts (0), and gaps around a second.
    steps=st.lists(st.sampled_from([0, 0, 0, 1, 250, 500, 999, 1000, 1001, 1500]), max_size=40),
)
def test_the_rate_limiter_lets_at_most_n_through_in_any_second(
    per_second: int, steps: list[int]
) -> None:
    clock = Clock(DEFAULT_NOW)
    limiter = RateLimiter(per_second, clock)
    passed: list[float] = []
    for ms in steps:
        clock.advance(ms / 1000)
        now = clock.time()
        wait = limiter.check()
        if wait is None:
            passed.append(now)
        else:
            # Refused only with the allowance used up in the last second, and told to
            # come back within that second.
            assert sum(1 for t in passed if now - t < 1.0) == per_second
            assert 0 < wait <= 1.0
    # Never more than per_second in any one second.
    assert all(b - a >= 1.0 for a, b in zip(passed, passed[per_second:], strict=False))


def test_rules_are_checked() -> None:
    faults = Emulator().faults
    for bad in (
        {},
        {"status": 200},
        {"status": 500, "reset": 10},
        {"truncate": 1, "malformed": True},
        {"latency": -1.0},
        {"status": 500, "times": -1},
    ):
        with pytest.raises(ValueError):
            faults.add("*", **bad)
    with pytest.raises(ValueError):
        faults.storm(1.5)
    with pytest.raises(ValueError):
        faults.storm(0.5, kinds=("teapot",))
