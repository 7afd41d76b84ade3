"""Record from the emulator or from a server written here, replay, get the same records."""

from __future__ import annotations

import asyncio
import gzip
import time
import urllib.parse
from pathlib import Path
from typing import Any

import msgspec
import pytest
from aiohttp import web
from support.samples import FIXTURE_ID, action, envelope, fixture
from support.sqlite import sqlite

from asyncsports import Client
from asyncsports._wire.recording.format import encode
from asyncsports.backfill import Backfill, Scope
from asyncsports.emulator import Emulator
from asyncsports.errors import NotFoundError
from asyncsports.store._backfill import TABLES

SCALE = {
    "competitions": 1,
    "seasons": 2,
    "teams": 4,
    "fixtures_per_season": 8,
    "actions_per_fixture": 30,
}


def text_of(path: Path) -> str:
    opener: Any = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as f:
        return f.read().decode()


def rows(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    with sqlite(db) as conn:
        return {t: sorted(conn.execute(f"SELECT * FROM {t}")) for t in TABLES}


def bare(records: list[Any]) -> list[Any]:
    """Action records without fixtureSeqNum (it counts a connection's packets)."""
    return [
        msgspec.structs.replace(
            r, fixture_action=msgspec.structs.replace(r.fixture_action, fixture_seq_num=0)
        )
        for r in records
    ]


async def test_a_backfill_recorded_from_the_emulator_replays_to_the_same_rows(
    tmp_path: Path,
) -> None:
    path = tmp_path / "backfill.jsonl.gz"
    scope = Scope(("basketball",), page_size=5)
    async with Emulator(**SCALE) as emu, emu.client(record=path) as client:
        first = await Backfill(client, tmp_path / "a.sqlite", scope).run()
    async with Emulator(replay=path) as emu, emu.client(token="any") as client:
        second = await Backfill(client, tmp_path / "b.sqlite", scope).run()
        with pytest.raises(NotFoundError) as caught:
            await client.fixtures.list("basketball", page_size=6).collect()
    assert first.finished and second.finished
    recorded, replayed = rows(tmp_path / "a.sqlite"), rows(tmp_path / "b.sqlite")
    assert recorded["fixtures"] and recorded["actions"]
    assert replayed == recorded
    # The 404 names the recorded request nearest to the one asked for.
    said = str(caught.value)
    assert "size=6" in said and "the nearest recorded: /basketball/fixtures?" in said
    assert "size=5" in said.partition("nearest")[2]


async def test_a_live_feed_recorded_across_a_drop_replays_to_the_same_records_and_no_secret(
    tmp_path: Path,
) -> None:
    path = tmp_path / "live.jsonl"
    async with Emulator(**SCALE) as emu, emu.client(record=path) as client:
        fid = (await client.fixtures.list("basketball", status="completed").collect())[0].id
        emu.faults.live("drop", after=10)  # two connections, the second at startPosition 10
        live = [r async for r in client.live.actions("basketball", fid, replay="fast")]
        stats = [r async for r in client.live.statistics("basketball", fid, replay="fast")]
        events = await client.events.list().collect()
        signed = [
            urllib.parse.parse_qs(r.path_qs.partition("?")[2])["auth"][0]
            for r in emu.log
            if r.route == "events"
        ]
        secrets = [emu.token, emu.stream_secret, *signed]
    text = text_of(path)
    assert len(signed) == 1 and text.count('"e":"connect"') == 3
    for secret in secrets:
        assert secret not in text
    assert text.count('"text":"{\\"authToken\\":\\"***\\"}"') == 3
    async with Emulator(replay=path) as emu, emu.client() as client:
        again = [r async for r in client.live.actions("basketball", fid, replay="fast")]
        stats_again = [r async for r in client.live.statistics("basketball", fid, replay="fast")]
        events_again = await client.events.list().collect()
        later = [r async for r in client.live.actions("basketball", fid, start_position=50)]
    assert live[-1].finished and len(live) > 50
    assert bare(again) == bare(live)
    assert repr(stats_again) == repr(stats) and stats[-1].finished
    assert events_again == events
    assert bare(later) == bare(live[50:])


# --------------------------------------------------------------------------- by hand

TOKEN = "hand-written-token-0001"


def packets() -> list[dict[str, Any]]:
    out = [action(i + 1) for i in range(4)]
    out[-1]["finished"] = True
    return out


def hand_server(seen: list[str], gap: float) -> web.Application:
    """The service as api-spec and the vendor's pages describe it, written by hand: a
    paged fixture list, an actions list, and the live actions websocket."""
    fixtures = [fixture(i) for i in range(5)]

    async def listing(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Authorization", ""))
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            return web.Response(status=401, text="{The supplied authentication is invalid}")
        page, size = int(request.query.get("page", 0)), int(request.query.get("size", 20))
        items = fixtures[page * size : (page + 1) * size]
        return web.json_response(envelope(items, page, size, len(fixtures)))

    async def actions(request: web.Request) -> web.Response:
        return web.json_response(packets())

    async def feed(request: web.Request) -> web.WebSocketResponse:
        start = int(request.query.get("startPosition", 0))
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        first = await ws.receive()
        seen.append(msgspec.json.decode(first.data)["authToken"])
        await ws.send_str('{"message": "Authorisation accepted", "level": "INFO"}')
        for n, record in enumerate(packets()[start:], 1):
            record["fixtureAction"]["fixtureSeqNum"] = n  # from 1 on each connection
            await asyncio.sleep(gap)
            await ws.send_str(msgspec.json.encode(record).decode())
            if n == 2:
                await ws.send_str('{"message": "Heartbeat sent at now", "level": "INFO"}')
        await ws.close(code=1000)
        return ws

    app = web.Application()
    app.router.add_get("/american-football/fixtures", listing)
    app.router.add_get(f"/american-football/fixtures/{FIXTURE_ID}/actions", actions)
    app.router.add_get(f"/live/american-football/fixtures/{FIXTURE_ID}/actions", feed)
    return app


async def test_a_recording_of_another_server_replays_through_the_emulator(
    tmp_path: Path, serve: Any
) -> None:
    seen: list[str] = []
    url = await serve(hand_server(seen, gap=0.05))
    path = tmp_path / "hand.jsonl.gz"
    live_url = "ws" + url.removeprefix("http") + "/live"
    async with Client(url, token=TOKEN, live_url=live_url, record=path) as client:
        listed = await client.fixtures.list("american-football", page_size=2).collect()
        timeline = await client.actions.list("american-football", FIXTURE_ID).collect()
        live = [r async for r in client.live.actions("american-football", FIXTURE_ID)]
    assert len(listed) == 5 and len(timeline) == 4 and len(live) == 4
    text = text_of(path)
    assert TOKEN in seen and TOKEN not in text  # the bearer header and the authToken
    times = [e["t"] for e in map(msgspec.json.decode, text.splitlines()) if e.get("e") == "recv"]
    assert times[-1] - times[1] >= 3 * 0.05  # the gaps between packets are in the file
    async with Emulator(replay=path) as emu, emu.client() as client:
        assert await client.fixtures.list("american-football", page_size=2).collect() == listed
        assert await client.actions.list("american-football", FIXTURE_ID).collect() == timeline
        again = [r async for r in client.live.actions("american-football", FIXTURE_ID)]
        rest = [
            r async for r in client.live.actions("american-football", FIXTURE_ID, start_position=2)
        ]
    assert bare(again) == bare(live) and again[-1].finished
    assert bare(rest) == bare(live[2:])


# --------------------------------------------------------------------------- timing


def paced(path: Path, gap: float, n: int) -> None:
    """A recording of one feed whose ``n`` packets came ``gap`` seconds apart."""
    feed = {"host": "live", "path": f"/american-football/fixtures/{FIXTURE_ID}/actions"}
    records = packets()[:n]
    records[-1]["finished"] = True
    lines = [
        {"format": "asyncsports-recording", "version": 1},
        {"e": "connect", "id": 1, "t": 0.0, **feed, "query": [["startPosition", "0"]]},
        {"e": "open", "id": 1, "t": 0.0},
        *(
            {"e": "recv", "id": 1, "t": i * gap, "text": msgspec.json.encode(r).decode()}
            for i, r in enumerate(records)
        ),
        {"e": "closed", "id": 1, "t": n * gap, "by": "server", "code": 1000},
    ]
    path.write_bytes(b"".join(encode(line) for line in lines))


@pytest.mark.parametrize("speed", [20.0, None])
async def test_recorded_gaps_are_kept_at_the_emulators_speed(
    tmp_path: Path, speed: float | None
) -> None:
    path = tmp_path / "paced.jsonl"
    paced(path, gap=2.0, n=4)  # 6 s from the first packet to the last
    async with Emulator(replay=path, speed=speed or 1000.0) as emu, emu.client() as client:
        started = time.monotonic()
        fast = "fast" if speed is None else None
        got = [r async for r in client.live.actions("american-football", FIXTURE_ID, replay=fast)]
        took = time.monotonic() - started
    assert len(got) == 4 and got[-1].finished
    if speed is None:
        assert took < 1.0  # speed=fast: at once, whatever the clock
    else:
        assert 6 / speed * 0.8 <= took < 6 / speed + 1.5  # 0.3 s, far from the recorded 6 s


async def test_a_big_body_is_written_in_pieces_and_a_reopened_client_appends(
    tmp_path: Path, serve: Any
) -> None:
    timeline = msgspec.json.encode([action(i + 1) for i in range(400)])  # about 0.5 MB

    async def actions(request: web.Request) -> web.Response:
        return web.Response(body=timeline, content_type="application/json")

    url = await serve(actions)
    path = tmp_path / "big.jsonl.gz"
    client = Client(url, token=TOKEN, record=path)
    for _ in range(2):  # opened, closed, opened again
        async with client:
            got = await client.actions.list("american-football", FIXTURE_ID).collect()
    events = [msgspec.json.decode(line) for line in text_of(path).splitlines()]
    assert events[0]["format"] == "asyncsports-recording"
    assert sum("format" in e for e in events) == 1 and sum(e.get("e") == "get" for e in events) == 2
    pieces = [e for e in events if e.get("e") == "body" and e["id"] == 1]
    assert len(pieces) >= len(timeline) // (128 * 1024)
    assert all(len(p["text"]) < 2 * 256 * 1024 for p in pieces)  # never the whole body at once
    async with Emulator(replay=path) as emu, emu.client() as replayed:
        assert await replayed.actions.list("american-football", FIXTURE_ID).collect() == got
