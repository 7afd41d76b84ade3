"""A connection reset mid-feed reconnects at its position, on every way of reading a feed
and every transport (issue 33, point 1: a reset that raised instead of reconnecting passed
the suite).

The test's server (tests/support/hostile_servers.py) sends ``AT`` records, then resets the
TCP connection (SO_LINGER 0, no close frame); the next connection serves the rest from its
``startPosition``. The reset reaches the driver two ways: as picows sees it, a close
without a code (``plain``), and as a transport whose receive raises says it, the
listener's ``on_closed`` with a ``ConnectionResetError`` (``raised``: the branch for a
connection lost with an error). Either way the feed asks for ``startPosition`` = ``AT``,
yields the rest once each and ends with the finishing record.
"""

from __future__ import annotations

import asyncio
import errno
import importlib.util
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import pytest
import pytest_asyncio
from support.hostile_servers import WAYS, Conn, Timeline, Way, raw_server, read, serve_rest
from support.live import fixture_id, unseq

from asyncsports import RetryPolicy, Timeout
from asyncsports._http.transports.pyreqwest import PyreqwestTransport
from asyncsports.emulator import Emulator
from asyncsports.transports import AiohttpTransport, Listener, Pushed, Settings, Transport

AT = 5  # records delivered before the reset
GUARD = 6.0  # a feed not over by then has hung
Reported = Literal["plain", "raised"]
# Every transport the live path has (the recording wraps aiohttp's), the reset as picows
# tells it; and aiohttp's telling it as a receive's error.
CASES = [
    ("aiohttp", "plain"),
    ("pyreqwest", "plain"),
    ("recording", "plain"),
    ("aiohttp", "raised"),
]


class ResetRaised:
    """A listener in front of the driver's: a connection gone with neither close code nor
    error (a reset, as picows sees it) is told with the error a receive would raise."""

    def __init__(self, inner: Listener) -> None:
        self.inner = inner

    def on_message(self, data: bytes) -> None:
        self.inner.on_message(data)

    def on_closed(self, code: int | None, error: BaseException | None) -> None:
        if code is None and error is None:
            error = ConnectionResetError(errno.ECONNRESET, "Connection reset by peer")
        self.inner.on_closed(code, error)


class Raising(AiohttpTransport):
    """aiohttp's transport, its sockets' resets told as a receive's ConnectionResetError."""

    async def listen(
        self, url: str, headers: Mapping[str, str] | None, max_size: int, listener: Listener
    ) -> Pushed:
        return await super().listen(url, headers, max_size, ResetRaised(listener))


def _maker(name: str, reported: Reported) -> Callable[[Settings], Transport] | None:
    if reported == "raised":
        return Raising
    if name == "pyreqwest":
        if importlib.util.find_spec("pyreqwest") is None:
            pytest.skip("pyreqwest is not installed")
        return PyreqwestTransport
    return None  # aiohttp's, the default (the recording wraps it)


@pytest_asyncio.fixture
async def timeline(sports_emulator: Emulator) -> tuple[Timeline, list[Any]]:
    """A completed fixture's records as the test's server sends them, and as REST has them."""
    async with sports_emulator.client() as c:
        fid = await fixture_id(c, "completed")
        tl = await Timeline.of(c, "basketball", fid)
        rest = await c.actions.list("basketball", fid).collect()
    assert len(rest) == len(tl) > AT * 2 and rest[-1].finished
    return tl, rest


def _reset_then_rest(tl: Timeline) -> Callable[[Conn], Any]:
    rest = serve_rest(tl)

    async def script(conn: Conn) -> None:
        if conn.index > 0:
            await rest(conn)
            return
        await conn.accept()
        await conn.records(tl, AT)
        conn.reset()

    return script


@pytest.mark.parametrize("pace", [False, True], ids=["eager", "paced"])
@pytest.mark.parametrize(("name", "reported"), CASES)
@pytest.mark.parametrize("way", WAYS)
async def test_a_reset_mid_feed_reconnects_at_its_position_and_yields_the_rest_once(
    sports_emulator: Emulator,
    timeline: tuple[Timeline, list[Any]],
    tmp_path: Path,
    way: Way,
    name: str,
    reported: Reported,
    pace: bool,
) -> None:
    tl, rest = timeline
    make = _maker(name, reported)
    kw: dict[str, Any] = {"record": tmp_path / "rec.jsonl"} if name == "recording" else {}
    async with raw_server(_reset_then_rest(tl)) as server:
        client = sports_emulator.client(
            live_url=server.url,
            retry=RetryPolicy(max_retries=2, base=0.01, cap=0.05),
            timeout=Timeout(connect=0.5),
            transport=make,
            **kw,
        )
        async with client:
            feed = client.live.actions("basketball", tl.fixture_id, idle_timeout=2.0)
            try:
                async with asyncio.timeout(GUARD):
                    r = await read(client, feed, way, pace)
            except TimeoutError:
                raise AssertionError(
                    f"the {way} feed hung after the reset: position {feed.position}, "
                    f"{feed.connections} connections, startPositions {server.starts}"
                ) from None
    if r.error is not None:
        raise r.error  # the feed's own error, its traceback shown
    # Reconnected once, asking for the record after the last one delivered.
    assert server.starts == [0, AT] and r.connections == 2
    # The rest once each, in order, and the feed ended with its finishing record.
    assert r.finished and r.position == len(rest) == len(r.records)
    assert unseq(r.records) == unseq(rest)
