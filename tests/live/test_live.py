"""client.live against the emulator's websockets: the feeds, resuming, closing."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import msgspec
import pytest
from support import each_dialect, until
from support.live import HEARTBEAT, client_tasks, closed, fixture_id, plain, unseq

from asyncsports import Client, DecodeError, RequestInfo
from asyncsports.emulator import Emulator
from asyncsports.live import Feed, feed_request
from asyncsports.models import Action, DeviceLocation, FixtureAction


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    each_dialect(metafunc, live_heartbeat=HEARTBEAT)  # the vendor's shapes too


# ---------------------------------------------------------------------- the feeds


async def test_actions_feed_is_the_rest_timeline(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fid = await fixture_id(sports_client, "completed")
    rest = await sports_client.actions.list("basketball", fid).collect()
    feed = sports_client.live.actions("basketball", fid, replay="fast")
    assert (
        isinstance(feed, Feed)
        and feed.position == 0
        and sports_emulator.requests["live.actions"] == 0
    )
    async with feed:
        got = [a async for a in feed]
    assert plain(got) == plain(rest)  # the same typed records, fixtureSeqNum (from 1) too
    assert all(isinstance(a, Action) for a in got)
    assert feed.position == len(rest) and feed.finished and got[-1].finished
    assert (sports_emulator.requests["live.actions"], feed.connections) == (1, 1)


async def test_statistics_feed_ends_with_the_rest_packet(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fid = await fixture_id(sports_client, "completed", "ice-hockey")
    async with sports_client.live.statistics("ice-hockey", fid, replay="fast") as feed:
        got = [p async for p in feed]
    assert len(got) > 3 and [p.finished for p in got].count(True) == 1
    assert got[-1] == await sports_client.statistics.get("ice-hockey", fid)
    assert feed.position == len(got) and sports_emulator.requests["live.statistics"] == 1


async def test_live_fixture_follows_the_clock(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fid = await fixture_id(sports_client, "live")
    before = await sports_client.actions.list("basketball", fid).collect()
    async with sports_client.live.actions("basketball", fid, idle_timeout=5) as feed:
        got = [await anext(feed) for _ in before]
        assert plain(got) == plain(before)
        sports_emulator.clock.advance(600)
        got.append(await anext(feed))
    after = await sports_client.actions.list("basketball", fid).collect()
    assert plain(got) == plain(after[: len(got)]) and len(after) > len(before)
    assert feed.position == len(before) + 1
    await closed(sports_emulator)


async def test_start_position_resumes_where_a_feed_stopped(sports_client: Client) -> None:
    fid = await fixture_id(sports_client, "completed")
    rest = await sports_client.actions.list("basketball", fid).collect()
    async with sports_client.live.actions("basketball", fid, replay="fast") as first:
        head = [await anext(first) for _ in range(10)]
    assert first.position == 10
    async with sports_client.live.actions(
        "basketball", fid, replay="fast", start_position=first.position
    ) as second:
        tail = [a async for a in second]
    assert unseq(head + tail) == unseq(rest)
    assert tail[0].fixture_action.fixture_seq_num == 1  # the emulator numbers per connection


async def test_volleyball_and_media_paths(sports_emulator: Emulator, sports_client: Client) -> None:
    fid = await fixture_id(sports_client, "completed", "volleyball")
    rest = await sports_client.actions.list("volleyball", fid).collect()
    async with sports_client.live.actions("volleyball", fid, replay="fast", media=True) as feed:
        assert plain([a async for a in feed]) == plain(rest)
    req = feed_request("actions", "volleyball", fid, "FAST", True)
    assert req.target == f"/media/v2/volleyball/fixtures/{fid}/actions?speed=fast"


async def test_connection_attempts_use_the_clients_hooks_and_counts(
    sports_emulator: Emulator,
) -> None:
    seen: list[RequestInfo] = []
    answered: list[RequestInfo] = []
    async with sports_emulator.client(
        on_request=seen.append, on_response=answered.append
    ) as client:
        fid = await fixture_id(client, "completed")
        async with client.live.statistics("basketball", fid, replay="fast") as feed:
            assert [p async for p in feed]
    ws = [i for i in seen if i.url.startswith("ws:")]
    url = f"{sports_emulator.live_url}/basketball/fixtures/{fid}/statistics?startPosition=0&speed=fast"
    assert [(i.method, i.url, i.attempt) for i in ws] == [("GET", url, 1)]
    assert [(i.status, i.attempt) for i in answered if i.url == url] == [(101, 1)]


async def test_without_live_url_is_a_clear_error(sports_emulator: Emulator) -> None:
    async with Client(sports_emulator.base_url, token=sports_emulator.token) as client:
        fid = await fixture_id(client, "completed")
        with pytest.raises(ValueError, match="live_url"):
            client.live.actions("basketball", fid)
        with pytest.raises(ValueError, match="live_url"):
            client.live.statistics("basketball", fid)
    with pytest.raises(ValueError, match="live_url"):
        Client(sports_emulator.base_url, live_url="ftp://x")


async def test_arguments_are_checked_before_connecting(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fid = await fixture_id(sports_client, "completed")
    live = sports_client.live
    with pytest.raises(ValueError, match="replay"):
        live.actions("basketball", fid, replay=" ")  # a value is open, a blank is not
    with pytest.raises(ValueError, match="start_position"):
        live.actions("basketball", fid, start_position=-1)
    with pytest.raises(TypeError, match="start_position"):
        live.actions("basketball", fid, start_position="3")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="fixture_id"):
        live.actions("basketball", "nope")
    with pytest.raises(TypeError, match="media"):
        live.actions("basketball", fid, media="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="idle_timeout"):
        live.statistics("basketball", fid, idle_timeout=0)
    assert (
        sports_emulator.requests["live.actions"] + sports_emulator.requests["live.statistics"] == 0
    )


# ---------------------------------------------------------------------- closing


async def test_break_inside_async_with_closes_the_socket(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fid = await fixture_id(sports_client, "scheduled")
    tasks = client_tasks()
    async with sports_client.live.actions("basketball", fid, idle_timeout=5) as feed:
        waiting = asyncio.ensure_future(anext(feed))
        await until(lambda: len(sports_emulator._live.sockets) == 1)  # connected
        # A heartbeat or more comes in this time, and is no record to yield.
        await asyncio.sleep(1.5 * HEARTBEAT)
        assert not waiting.done() and len(sports_emulator._live.sockets) == 1
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
    await closed(sports_emulator)
    assert client_tasks() - tasks == set()  # nothing left behind
    assert sports_client.connections_in_use() == 0


async def test_a_bare_break_closes_the_socket_once_the_feed_is_dropped(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fid = await fixture_id(sports_client, "live")
    async for _ in sports_client.live.actions("basketball", fid):
        break  # no async with: the dropped generator is closed by the loop's finalizer
    await closed(sports_emulator)
    assert sports_client.connections_in_use() == 0


async def test_wrap_reads_the_records_through_the_hook_and_closes_it(sports_client: Client) -> None:
    fid = await fixture_id(sports_client, "completed")
    seen: list[int] = []
    closed_by_feed: list[bool] = []

    async def around(records: AsyncIterator[Any]) -> AsyncGenerator[Any, None]:
        try:
            async for record in records:
                seen.append(1)
                yield record
        finally:
            closed_by_feed.append(True)

    feed = sports_client.live.actions("basketball", fid, replay="fast")
    feed.wrap(around)
    async with feed:
        got = [await anext(feed) for _ in range(3)]
        with pytest.raises(RuntimeError, match="already being read"):
            feed.wrap(around)
    assert len(got) == len(seen) == feed.position == 3 and closed_by_feed == [True]


def test_quoted_decimals_in_metadata_decode_as_numbers() -> None:
    raw = msgspec.json.encode(
        {
            "actionId": str(uuid.UUID(int=1)),
            "fixtureId": str(uuid.UUID(int=2)),
            "fixtureActionTypeId": 19,
            "fixtureActionType": "Device Location",
            "metadata": {"latitude": "63.25", "longitude": -1.5},
        }
    )
    action = msgspec.json.decode(raw, type=FixtureAction)
    meta = action.metadata
    assert isinstance(meta, DeviceLocation) and (meta.latitude, meta.longitude) == (63.25, -1.5)
    bad = raw.replace(b'"63.25"', b'"north"')
    with pytest.raises(DecodeError, match="latitude"):
        _ = msgspec.json.decode(bad, type=FixtureAction).metadata


async def test_raw_feeds_pair_each_record_with_its_message(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fid = await fixture_id(sports_client, "completed")
    typed = [a async for a in sports_client.live.actions("basketball", fid, replay="fast")]
    sports_emulator.faults.live(
        "reorder", feed="actions", after=3
    )  # held records keep their own bytes
    async with sports_client.with_json.live.actions("basketball", fid, replay="fast") as feed:
        got = [r async for r in feed]
    assert [r.value for r in got] == typed and feed.finished
    assert sports_emulator.faults.injected["live.reorder"] == 1
    for action, json in got:
        sent = msgspec.json.decode(json)  # the packet as sent: decimals quoted
        assert sent["fixtureAction"]["actionId"] == str(action.fixture_action.action_id)
        assert sent["fixtureAction"]["fixtureSeqNum"] == action.fixture_action.fixture_seq_num
    async with sports_client.with_json.live.statistics("basketball", fid, replay="fast") as stats:
        packets = [p async for p in stats]
    assert packets[-1].value == await sports_client.statistics.get("basketball", fid)
    assert msgspec.json.decode(packets[-1].json)["fixtureId"] == str(fid)
    with pytest.raises(TypeError, match="unexpected keyword argument 'raw'"):
        sports_client.live.actions("basketball", fid, raw=True)  # type: ignore[call-arg]  # gone: with_json


async def test_feeds_never_take_the_places_of_requests(sports_emulator: Emulator) -> None:
    """Feeds hold their sockets for hours: they have a pool of their own, unbounded."""
    async with sports_emulator.client(max_connections=2) as c:
        fid = await fixture_id(c, "live")
        feeds = [c.live.actions("basketball", fid, idle_timeout=5) for _ in range(3)]
        try:
            for f in feeds:  # every feed connects, though the requests' pool holds 2
                async with asyncio.timeout(5):
                    await anext(f)
            assert len(sports_emulator._live.sockets) == 3
            async with asyncio.timeout(5):  # and a request still finds its place
                assert (await c.fixtures.get("basketball", fid)).id == fid
            assert c.connections_in_use() == 0
        finally:
            for f in feeds:
                await f.aclose()
    await closed(sports_emulator)
