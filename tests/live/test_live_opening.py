"""Opening a live connection (_http/connection.py, _http/live.py's ``_connect`` and
``_opened``): what is missing is said before any socket opens, and a connection that ends
before its token is sent is tried again at the same position, its token never sent.

The servers are tests/support/hostile_servers.py's (frames by hand over asyncio streams)
serving a real fixture's REST timeline (the emulator's); the client's REST side is the
emulator.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping
from typing import Any

import pytest
from support.hostile_servers import WAYS, Conn, Timeline, Way, raw_server, read, serve_rest
from support.live import fixture_id, unseq
from support.wrapping import Wrapping

from asyncsports import RetryPolicy
from asyncsports.emulator import Emulator
from asyncsports.transports import (
    Listener,
    Pushed,
    Settings,
    Transport,
)

FAST = RetryPolicy(max_retries=2, base=0.01, cap=0.05)
FID = uuid.UUID(int=7)  # a fixture no server is asked about
GUARD = 10.0  # a feed not over by then has hung: fail here, not at pytest's timeout


async def _timeline(emu: Emulator) -> tuple[Timeline, list[Any]]:
    async with emu.client() as c:
        fid = await fixture_id(c, "completed")
        timeline = await Timeline.of(c, "basketball", fid)
        rest = await c.actions.list("basketball", fid).collect()
    return timeline, rest


class Dropping(Wrapping):
    """aiohttp's transport as a user's module would wrap it: its first ``drop`` sockets
    are lost between the handshake and the token (dropped before they are handed back),
    and it has nothing to drop a socket with (``abort`` is None: a close is polite only)."""

    def __init__(self, settings: Settings, drop: int) -> None:
        super().__init__(settings)
        self.drop = drop
        self.opened: list[Pushed] = []

    async def listen(
        self, url: str, headers: Mapping[str, str] | None, max_size: int, listener: Listener
    ) -> Pushed:
        ws = await self.inner.listen(url, headers, max_size, listener)
        self.opened.append(ws)
        if len(self.opened) <= self.drop:
            self.inner.abort(ws)()  # the connection lost as it opened
        return ws

    def abort(self, ws: Pushed) -> Any:
        return None


@pytest.mark.parametrize("way", WAYS)
async def test_a_connection_lost_before_its_token_is_sent_is_tried_again(
    sports_emulator: Emulator, way: Way
) -> None:
    timeline, rest = await _timeline(sports_emulator)
    made: list[Dropping] = []

    def dropping(settings: Settings) -> Transport:
        made.append(Dropping(settings, drop=1))
        return made[-1]

    async with raw_server(serve_rest(timeline)) as server:
        client = sports_emulator.client(live_url=server.url, retry=FAST, transport=dropping)
        async with client as c:
            feed = c.live.actions("basketball", timeline.fixture_id, idle_timeout=1.0)
            async with asyncio.timeout(GUARD):
                r = await read(c, feed, way)
            [net] = made
            assert all(ws.closed for ws in net.opened)  # closed without an abort
    if r.error is not None:
        raise r.error
    assert unseq(r.records) == unseq(rest) and r.finished
    assert server.starts == [0, 0]  # tried again at the same position
    assert server.conns[0].token is None  # never sent on the lost connection
    assert server.conns[1].token == sports_emulator.token


async def test_a_feed_without_a_token_says_so_before_connecting(sports_emulator: Emulator) -> None:
    async with raw_server(serve_rest(Timeline("basketball", FID, []))) as server:
        async with sports_emulator.client(token=None, live_url=server.url) as c:
            feed = c.live.actions("basketball", FID)
            with pytest.raises(ValueError, match="the live feeds need one"):
                async with feed:
                    await anext(feed)
        assert server.conns == []  # no socket was opened


async def test_a_feed_of_a_client_without_a_live_url_says_so(sports_emulator: Emulator) -> None:
    async with sports_emulator.client(live_url=None) as c:
        with pytest.raises(ValueError, match="live_url: the live feeds need the streams host"):
            c.live.actions("basketball", FID)


async def test_a_feed_of_a_client_never_opened_says_how_to_open_it(
    sports_emulator: Emulator,
) -> None:
    feed = sports_emulator.client().live.actions("basketball", FID)
    with pytest.raises(RuntimeError, match="async with Client"):
        await anext(feed)
    await feed.aclose()


async def test_each_connection_of_a_rate_limited_client_waits_its_turn(
    sports_emulator: Emulator,
) -> None:
    timeline, rest = await _timeline(sports_emulator)
    rest_of_it = serve_rest(timeline)

    async def script(conn: Conn) -> None:
        if conn.index == 0:
            await conn.accept()
            await conn.records(timeline, 5)
            await conn.close(1011)  # a reconnect at once, but for the rate limit
            return
        await rest_of_it(conn)

    rate = 4.0  # a connection every quarter second at most
    async with raw_server(script) as server:
        client = sports_emulator.client(live_url=server.url, retry=FAST, rate_limit=rate)
        async with client as c:
            feed = c.live.actions("basketball", timeline.fixture_id, idle_timeout=2.0)
            async with asyncio.timeout(GUARD):
                r = await read(c, feed, "feed")
    if r.error is not None:
        raise r.error
    assert unseq(r.records) == unseq(rest) and server.starts == [0, 5]
    apart = server.conns[1].opened - server.conns[0].opened
    assert apart >= 1 / rate - 0.05, apart  # the backoff alone is at most 50 ms
