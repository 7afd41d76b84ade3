"""The service's clock (issue 20, point 5): the ``Date`` of its responses, the mirror's now.

``parse_date`` with hypothesis; ``Client.server_date``/``server_time`` against loopback
servers; the emulator's ``Date`` follows its clock; a mirror without a ``clock`` follows an
emulator whose clock is not the machine's, says so once, and says when its window is empty.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import email.utils
import logging
import time
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from hypothesis import given
from hypothesis import strategies as st
from support.samples import fixture
from support.stub import Serve

from asyncsports import Client
from asyncsports._wire.clock import EARLIEST, LATEST, parse_date
from asyncsports.emulator import Emulator
from asyncsports.emulator._control import CLOCK_PATH
from asyncsports.sync import Mirror
from asyncsports.sync._clock import ServiceClock
from asyncsports.sync._metrics import serve_metrics

FID = "6a0b2c1e-0f6e-4c1a-9a51-7f3a0f8d1c11"

# ------------------------------------------------------------------ parse_date


@given(st.integers(int(EARLIEST), int(LATEST) - 1))
def test_a_date_in_range_reads_back_to_the_second(seconds: int) -> None:
    assert parse_date(email.utils.formatdate(seconds, usegmt=True)) == seconds
    # A numeric zone too (RFC 5322's form): the same instant.
    zoned = dt.datetime.fromtimestamp(seconds, dt.timezone(dt.timedelta(hours=-5)))
    assert parse_date(email.utils.format_datetime(zoned)) == seconds


@given(st.integers(0, int(EARLIEST) - 1) | st.integers(int(LATEST), 253402300799))
def test_a_date_before_2000_or_from_2100_on_is_absurd(seconds: int) -> None:
    assert parse_date(email.utils.formatdate(seconds, usegmt=True)) is None


@given(st.text(max_size=60))
def test_any_text_is_a_date_or_none_never_an_error(text: str) -> None:
    value = parse_date(text)
    assert value is None or EARLIEST <= value < LATEST


@pytest.mark.parametrize(
    "value", [None, "", "soon", "Mon, 01 Jun 2026 12:00:00", "Thu, 01 Jan 1970 00:00:00 GMT"]
)
def test_absent_unparseable_zoneless_or_absurd_is_none(value: str | None) -> None:
    assert parse_date(value) is None


# ------------------------------------------------------------------ the client


def _dated(date: str) -> web.Application:
    async def handle(request: web.Request) -> web.Response:
        return web.json_response(fixture(0, id=FID), headers={"Date": date})

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    return app


async def test_the_client_keeps_the_last_date_and_runs_it_on(serve: Serve) -> None:
    url = await serve(_dated("Tue, 01 Jan 2030 00:00:00 GMT"))
    async with Client(url, token="t") as c:
        assert c.server_date is None and c.server_time() is None  # nothing seen yet
        await c.fixtures.get("soccer", FID)
        assert c.server_date == dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
        came = time.time()
        await asyncio.sleep(0.2)
        now = c.server_time()
        assert now is not None
        # The Date plus the time since it came: 0.2 s on, to within the sleep's slack.
        assert (
            0.2
            <= now - dt.datetime(2030, 1, 1, tzinfo=dt.UTC).timestamp()
            <= time.time() - came + 0.05
        )


@pytest.mark.parametrize("date", ["Thu, 01 Jan 1970 00:00:00 GMT", "yesterday"])
async def test_an_absurd_date_is_none(serve: Serve, date: str) -> None:
    url = await serve(_dated(date))
    async with Client(url, token="t") as c:
        await c.fixtures.get("soccer", FID)
        assert c.server_date is None and c.server_time() is None


async def test_an_error_response_tells_the_date_too(serve: Serve) -> None:
    async def handle(request: web.Request) -> web.Response:
        body = {"error": "no", "status": 404}
        return web.json_response(
            body, status=404, headers={"Date": "Fri, 01 Feb 2030 00:00:00 GMT"}
        )

    url = await serve(handle)
    async with Client(url, token="t") as c:
        with pytest.raises(Exception, match="no"):
            await c.fixtures.get("soccer", FID)
        assert c.server_date == dt.datetime(2030, 2, 1, tzinfo=dt.UTC)


async def test_the_emulators_date_follows_its_clock() -> None:
    async with Emulator(seed=1, fixtures_per_season=4) as emu, emu.client() as c:
        await c.fixtures.list("basketball", page_size=1).collect()
        assert c.server_date == emu.clock.now().replace(microsecond=0)
        emu.clock.advance(3 * 86400 + 0.5)
        await c.fixtures.list("basketball", page_size=1).collect()
        assert c.server_date == emu.clock.now().replace(microsecond=0)
        # Its clock control answers with the same Date.
        async with aiohttp.ClientSession() as http, http.get(emu.base_url + CLOCK_PATH) as r:
            assert parse_date(r.headers["Date"]) == int(emu.clock.time())


# ------------------------------------------------------------------ the mirror's now


class Clocks:
    def __init__(self, local: float, server: float | None) -> None:
        self.local, self.server, self.answered = local, server, False


def _clock(c: Clocks) -> ServiceClock:
    return ServiceClock(lambda: c.server, lambda: c.answered, lambda: c.local)


def test_the_service_clock_wins_and_a_skew_is_said_once(caplog: pytest.LogCaptureFixture) -> None:
    c = Clocks(1_000_000.0, 2_000_000.0)
    now = _clock(c)
    with caplog.at_level(logging.INFO, "asyncsports.sync"):
        assert now() == 2_000_000.0
        c.local, c.server = 1_000_010.0, 2_000_010.5
        assert now() == 2_000_010.5
        c.server = None  # a response without a Date: the offset last seen carries on
        c.local = 1_000_020.0
        assert now() == 2_000_020.5
        # A service clock that runs fast moves the difference on: not said again.
        c.local, c.server = 1_000_030.0, 2_003_000.0
        assert now() == 2_003_000.0
        c.local, c.server = 1_000_040.0, 2_006_000.0
        assert now() == 2_006_000.0
    said = [r.getMessage() for r in caplog.records]
    assert len(said) == 1
    assert said[0].startswith(
        "mirror: the service's clock reads 1970-01-24T03:33:20Z, this machine's"
    )
    assert "(11.6 days apart)" in said[0]
    assert now.offset == 2_006_000.0 - 1_000_040.0


def test_within_a_minute_nothing_is_said(caplog: pytest.LogCaptureFixture) -> None:
    c = Clocks(1_000_000.0, 1_000_059.0)
    with caplog.at_level(logging.INFO, "asyncsports.sync"):
        assert _clock(c)() == 1_000_059.0
    assert caplog.records == []


def test_without_a_date_the_machine_clock_is_used_and_said_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    c = Clocks(1_800_000_000.0, None)
    now = _clock(c)
    with caplog.at_level(logging.INFO, "asyncsports.sync"):
        assert now() == c.local  # nothing answered yet: nothing to say
        c.answered = True
        assert now() == c.local
        assert now() == c.local
    said = [r.getMessage() for r in caplog.records]
    assert said == [
        "mirror: the service's responses carry no usable Date header: the mirror's now is "
        "this machine's clock (2027-01-15T08:00:00Z)"
    ]


async def test_a_mirror_follows_the_service_clock_not_the_machines(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The emulator's clock is 2026-06-01, frozen; no clock= given: the Date decides.
    async with Emulator(seed=2, fixtures_per_season=8, actions_per_fixture=20) as emu:
        assert abs(emu.clock.time() - time.time()) > 60  # the machine's is another day
        async with emu.client() as client:
            mirror = Mirror(client, tmp_path / "m.sqlite", sports=["basketball"], live=False)
            with caplog.at_level(logging.INFO, "asyncsports.sync"):
                await mirror.once()
            expected = await client.fixtures.list(
                "basketball",
                date_from=dt.date(2026, 5, 30),
                date_to=dt.date(2026, 6, 3),
                include_deleted=True,
            ).collect()
    assert expected and mirror.found == {"basketball": len(expected)}
    said = [r.getMessage() for r in caplog.records if "clock reads" in r.getMessage()]
    assert len(said) == 1 and "2026-06-01T12:00:00Z" in said[0]
    assert not [r for r in caplog.records if "no basketball fixture" in r.getMessage()]


async def test_an_explicit_clock_wins_and_an_empty_window_is_said(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ten_years_on = dt.datetime(2036, 6, 1, tzinfo=dt.UTC).timestamp()
    emu = Emulator(seed=2, fixtures_per_season=8, actions_per_fixture=20)
    async with emu, emu.client() as client:
        mirror = Mirror(
            client,
            tmp_path / "m.sqlite",
            sports=["basketball"],
            live=False,
            clock=lambda: ten_years_on,
        )
        assert mirror.clock() == ten_years_on
        with caplog.at_level(logging.INFO, "asyncsports.sync"):
            await mirror.once()
        server = await serve_metrics(mirror, 0)
        try:
            metrics = f"http://127.0.0.1:{server.addresses[0][1]}/metrics"
            async with aiohttp.ClientSession() as http, http.get(metrics) as r:
                text = await r.text()
        finally:
            await server.cleanup()
    assert mirror.found == {"basketball": 0}
    said = [r.getMessage() for r in caplog.records]
    assert (
        "mirror: no basketball fixture from 2036-05-30 to 2036-06-03 by the service's clock: "
        "nothing of it to follow"
    ) in said
    assert not [m for m in said if "clock reads" in m]  # the explicit clock is not second-guessed
    assert 'asyncsports_sync_window_fixtures{sport="basketball"} 0.0' in text
