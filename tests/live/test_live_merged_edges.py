"""A feed read the merge's way (pushed: ``client.live.merge``, _http/live.py's ``push``)
at its edges: records and the close in the same write as the handshake fill the merge
before the socket is handed back, a malformed packet ends the feed at its position, and
messages of unknown shape are skipped and logged once while the feed reads on."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

import pytest
from aiohttp import web
from support import until
from support.hostile_servers import TEXT, Conn, Timeline, close_frame, frame, raw_server
from support.live import fixture_id, serve, unseq

from asyncsports import Client, DecodeError, RetryPolicy
from asyncsports.emulator import Emulator

FAST = RetryPolicy(max_retries=2, base=0.01, cap=0.05)
GUARD = 10.0  # a merge not over by then has hung: fail here, not at pytest's timeout


async def test_records_and_a_close_sent_with_the_handshake_fill_the_merge_and_the_feed_goes_on(
    sports_emulator: Emulator,
) -> None:
    async with sports_emulator.client() as c:
        fid = await fixture_id(c, "completed")
        timeline = await Timeline.of(c, "basketball", fid)
        rest = await c.actions.list("basketball", fid).collect()
    go = asyncio.Event()

    async def script(conn: Conn) -> None:
        if conn.index == 0:
            # Two records and a close, before the client could send its token: the merge
            # (one record a feed) is full before the socket is handed back.
            await conn.request()
            first = frame(TEXT, timeline.packet(0, 1)) + frame(TEXT, timeline.packet(1, 2))
            conn.write(conn._switching() + first + close_frame(1011))
            await conn.writer.drain()
            await conn.gone()
            return
        await go.wait()  # the consumer takes the second record between the connections
        await conn.accept()
        await conn.records(timeline)
        await conn.linger()

    got: list[Any] = []
    async with (
        raw_server(script) as server,
        sports_emulator.client(live_url=server.url, retry=FAST) as c,
    ):
        feed = c.live.actions("basketball", fid, idle_timeout=2.0)
        async with asyncio.timeout(GUARD), c.live.merge([feed], per_feed=1) as m:
            got.append((await anext(m))[1])
            await until(lambda: len(server.conns) == 2)  # the first connection is over
            got.append((await anext(m))[1])  # room again: nothing to resume meanwhile
            go.set()
            got += [r async for _, r in m]
    assert unseq(got) == unseq(rest) and got[-1].finished
    assert server.starts == [0, 2] and server.conns[0].token is None


async def test_a_malformed_packet_ends_a_merged_feed_at_its_position(
    sports_emulator: Emulator,
) -> None:
    async with sports_emulator.client(retry=FAST) as c:
        fid = await fixture_id(c, "completed")
        rest = await c.actions.list("basketball", fid).collect()
        sports_emulator.faults.live("malformed", after=4)
        feed = c.live.actions("basketball", fid, replay="fast", idle_timeout=2.0)
        got: list[Any] = []
        with pytest.raises(DecodeError, match=r"after position 4 .*start_position=5"):
            async with asyncio.timeout(GUARD), c.live.merge([feed]) as m:
                async for _, r in m:
                    got.append(r)
    assert unseq(got) == unseq(rest[:4]) and m.position(feed) == 4


async def test_unknown_shapes_are_skipped_and_logged_once_in_a_merge(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fid = uuid.UUID(int=9)
    action = {"actionId": str(uuid.UUID(int=1)), "fixtureId": str(fid), "fixtureSeqNum": 1}
    packet: dict[str, Any] = {"fixtureAction": action, "finished": True}
    sent = asyncio.Event()

    async def odd(request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.receive()
        for i in range(3):
            await ws.send_json({"whatIsThis": i})
        await sent.wait()  # the feed is seen reading on after them
        await ws.send_json(packet)
        await ws.close()
        return ws

    caplog.set_level(logging.DEBUG, logger="asyncsports")

    def skipped() -> list[logging.LogRecord]:
        return [r for r in caplog.records if "unknown shape" in r.getMessage()]

    async with (
        serve(odd, f"/basketball/fixtures/{fid}/actions") as url,
        Client(url, token="t", live_url="ws" + url[4:]) as c,
    ):
        feed = c.live.actions("basketball", fid)
        async with asyncio.timeout(GUARD), c.live.merge([feed]) as m:
            reading = asyncio.ensure_future(anext(m))
            await until(lambda: skipped())
            assert not reading.done()  # skipped, not delivered, and the feed reads on
            sent.set()
            got = [(await reading)[1]] + [r async for _, r in m]
    assert len(got) == 1 and got[0].finished
    assert len(skipped()) == 1 and skipped()[0].levelno == logging.DEBUG
