"""The vendor's live messages besides packets (issue 20, point 2): each recognised, none
counted as a record; the emulator speaks each dialect (``Emulator(live_dialect=...)``)."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

import pytest
from aiohttp import web
from support.live import HEARTBEAT, fixture_id, serve

from asyncsports import AuthenticationError, Client, NotFoundError, RetryPolicy
from asyncsports._wire.live import Ack, AuthFailed, Heartbeat, Status, Unknown, Warned, classify
from asyncsports.emulator import Emulator
from asyncsports.emulator._live import DIALECTS

SHAPES: list[tuple[str, type]] = [
    ('{"message": "Authorisation accepted", "level": "INFO"}', Ack),
    ('{"message": "Heartbeat sent at 2026-06-01T12:00:00.000Z", "level": "INFO"}', Heartbeat),
    ('{"eventElementType": "Heartbeat", "timestamp": "2026-06-01T12:00:00Z"}', Heartbeat),
    ('{"eventElementType": "Alarm", "alarm": "Feed open"}', Status),
    ('{"message": "Feed restarted upstream", "level": "INFO"}', Status),
    ('{"message": "No fixture found with id 12", "level": "WARN"}', Warned),
    ('{"message": "Something odd", "level": "warning"}', Warned),
    ('{"message": "Invalid authorisation token", "level": "ERROR"}', AuthFailed),
    ('{"hello": [1, 2]}', Unknown),
]


@pytest.mark.parametrize(("text", "kind"), SHAPES)
def test_each_documented_shape_is_recognised(text: str, kind: type) -> None:
    for feed in ("actions", "statistics"):
        assert type(classify(text, feed)) is kind  # type: ignore[arg-type]


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_each_dialect_replays_the_rest_timeline(dialect: str) -> None:
    emu = Emulator(live_heartbeat=HEARTBEAT, live_dialect=dialect)
    async with emu, emu.client() as client:
        fid = await fixture_id(client, "live")
        emu.clock.advance(10 * 3600)  # over, so a fast replay sends it all
        rest = await client.actions.list("basketball", fid).collect()
        feed = client.live.actions("basketball", fid, replay="fast", idle_timeout=5)
        async with feed:
            got = [a async for a in feed]
    assert len(got) == len(rest) and got[-1].finished and feed.position == len(rest)


@pytest.mark.parametrize("dialect", ["vendor", "golf"])
async def test_a_warning_for_an_unknown_fixture_is_not_found_within_seconds(
    dialect: str,
) -> None:
    async with Emulator(live_heartbeat=30, live_dialect=dialect) as emu, emu.client() as client:
        loop = asyncio.get_running_loop()
        started = loop.time()
        with pytest.raises(NotFoundError) as info:
            async with client.live.actions("basketball", uuid.uuid4()) as feed:
                async for _ in feed:
                    pass
        assert loop.time() - started < 5  # idle_timeout is 60
    assert "No fixture found" in " ".join(info.value.__notes__)
    assert emu.requests["live.actions"] == 1


@pytest.mark.parametrize("dialect", ["vendor", "golf"])
async def test_an_error_message_is_an_authentication_error(dialect: str) -> None:
    async with Emulator(live_heartbeat=HEARTBEAT, live_dialect=dialect) as emu:
        async with emu.client() as c:
            fid = await fixture_id(c, "completed")
        async with emu.client(token="wrong", retry=RetryPolicy(max_retries=3, base=0.01)) as c:
            with pytest.raises(AuthenticationError, match="Invalid authorisation token"):
                async with c.live.actions("basketball", fid, replay="fast") as feed:
                    async for _ in feed:
                        pass
    assert emu.requests["live.actions"] == 1


async def test_unknown_shapes_are_skipped_and_logged_once_a_feed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    fid = uuid.UUID(int=9)
    path = f"/basketball/fixtures/{fid}/actions"
    action = {"actionId": str(uuid.UUID(int=1)), "fixtureId": str(fid), "fixtureSeqNum": 1}
    packet: dict[str, Any] = {"fixtureAction": action, "finished": True}

    async def odd(request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.receive()
        for i in range(3):
            await ws.send_json({"whatIsThis": i})
        await ws.send_json(packet)
        await ws.close()
        return ws

    caplog.set_level(logging.DEBUG, logger="asyncsports")
    async with (
        serve(odd, path) as url,
        Client(url, token="t", live_url="ws" + url[4:]) as c,
        c.live.actions("basketball", fid) as feed,
    ):
        got = [a async for a in feed]
    assert len(got) == 1 and feed.finished
    skipped = [r for r in caplog.records if "unknown shape" in r.getMessage()]
    assert len(skipped) == 1 and skipped[0].levelno == logging.DEBUG
