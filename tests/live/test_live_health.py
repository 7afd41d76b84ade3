"""A live feed's health as data (issue 44, item 1): each event within its documented
bound of its cause, read both ways (``feed.health()`` beside an iterated feed, and
``merged.health()`` beside a merge), against a server the test scripts over loopback."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import msgspec
import pytest
from aiohttp import web
from support import until
from support.live import HEARTBEAT, fixture_id, serve

from asyncsports import Client, RetryPolicy
from asyncsports._http.health import POLL
from asyncsports.emulator import Emulator
from asyncsports.emulator._live import STATUS_TEXT
from asyncsports.live import (
    Connected,
    Coverage,
    Delayed,
    Ended,
    Feed,
    HealthEvent,
    HealthEvents,
    Lost,
    Reconnecting,
    Recovered,
    Resumed,
    VendorStatus,
)

FAST = RetryPolicy(max_retries=3, base=0.01, cap=0.05)
AT_ONCE = 0.5
"""The bound of an event the driver makes as it learns its cause (a connection opened or
ended, a status message, the end): the same turn of the loop; this much for a loaded
machine's scheduling, and the same in docs/guides/live.md."""
GUARD = 20.0  # a test not over by then has hung


class Script:
    """The server's side: each connection takes commands from one queue, in turn, and
    notes when it did what (epoch seconds, to compare with each event's ``at``)."""

    def __init__(self, fid: uuid.UUID, refuse: int = 0) -> None:
        self.fid = fid
        self.refuse = refuse  # handshakes answered 503 first
        self.commands: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self.starts: list[int] = []
        self.done: dict[str, float] = {}

    def packet(
        self, index: int, seq: int, *, last: bool = False, age: float = 0.0, summary: Any = None
    ) -> bytes:
        stamp = datetime.fromtimestamp(time.time() - age, UTC).isoformat()
        action = {
            "actionId": str(uuid.UUID(int=index + 1)),
            "fixtureId": str(self.fid),
            "fixtureSeqNum": seq,
            "timestamp": stamp,
        }
        record: dict[str, Any] = {"fixtureAction": action, "finished": last}
        if summary is not None:
            record["fixtureSummary"] = summary
        return msgspec.json.encode(record)

    async def handler(self, request: web.Request) -> web.StreamResponse:
        if self.refuse:
            self.refuse -= 1
            self.done["refused"] = time.time()
            return web.Response(status=503)
        start = int(request.query["startPosition"])
        self.starts.append(start)
        self.done[f"open {len(self.starts)}"] = time.time()  # before the handshake
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.receive()  # the token
        # Read on, as a server does: a client's close is answered at once.
        reader = asyncio.ensure_future(_read_all(ws))
        try:
            return await self._run(ws, start, reader)
        finally:
            reader.cancel()

    async def _run(
        self, ws: web.WebSocketResponse, start: int, reader: asyncio.Future[None]
    ) -> web.WebSocketResponse:
        sent = 0
        while True:
            # A connection the client closed takes no more commands: the next one does.
            taking = asyncio.ensure_future(self.commands.get())
            await asyncio.wait([taking, reader], return_when=asyncio.FIRST_COMPLETED)
            if not taking.done():
                taking.cancel()
                return ws
            what, arg = taking.result()
            if what == "records":
                for _ in range(arg):
                    await ws.send_bytes(self.packet(start + sent, sent + 1))
                    sent += 1
            elif what == "old":  # a record whose own timestamp is ``arg`` seconds old
                await ws.send_bytes(self.packet(start + sent, sent + 1, age=arg))
                sent += 1
            elif what == "summary":  # a record whose fixture summary is ``arg``
                await ws.send_bytes(self.packet(start + sent, sent + 1, summary=arg))
                sent += 1
            elif what == "raw":
                await ws.send_str(arg)
            elif what == "cut":
                self.done["cut"] = time.time()
                await ws.close(code=1011, message=b"cut by the test")
                return ws
            elif what == "finish":
                await ws.send_bytes(self.packet(start + sent, sent + 1, last=True))
                self.done["finish"] = time.time()
                await ws.close()
                return ws
            self.done[what] = time.time()

    def do(self, what: str, arg: Any = None) -> None:
        self.commands.put_nowait((what, arg))


async def _read_all(ws: web.WebSocketResponse) -> None:
    async for _ in ws:
        pass


async def _next(events: HealthEvents, within: float) -> HealthEvent:
    async with asyncio.timeout(within):
        return await anext(events)


@pytest.fixture(params=["feed", "merged"])
def way(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@contextlib.asynccontextmanager
async def _reading(
    c: Client, feed: Feed[Any], way: str, got: list[Any]
) -> AsyncIterator[HealthEvents]:
    """The feed's health events while its records are read (into ``got``) the ``way``."""
    if way == "feed":
        events = feed.health()

        async def read() -> None:
            async with feed:
                async for r in feed:
                    got.append(r)

    else:
        m = c.live.merge([feed])
        events = m.health()

        async def read() -> None:
            async with m:
                async for fid, r in m:
                    assert fid == feed.fixture_id
                    got.append(r)

    task = asyncio.ensure_future(read())
    try:
        yield events
        async with asyncio.timeout(GUARD):
            await task
    finally:
        task.cancel()


@contextlib.asynccontextmanager
async def _served(script: Script) -> AsyncIterator[Client]:
    """A client of a server running ``script`` on a loopback port."""
    path = f"/basketball/fixtures/{script.fid}/actions"
    async with serve(script.handler, path) as url, _client(url) as c:
        yield c


def _client(url: str) -> Client:
    return Client(url, token="t", live_url="ws" + url[4:], retry=FAST)


async def test_connected_lost_reconnecting_resumed_status_and_end(way: str) -> None:
    fid = uuid.uuid4()
    script = Script(fid)
    got: list[Any] = []
    async with _served(script) as c:
        feed = c.live.actions("basketball", fid, idle_timeout=10)
        assert feed.health_state == "connecting"
        async with _reading(c, feed, way, got) as events:
            first = await _next(events, GUARD)
            assert isinstance(first, Connected) and first.fixture_id == fid
            assert (first.connection, first.position) == (1, 0)
            assert first.at - script.done["open 1"] <= AT_ONCE
            assert feed.health_state == "live"

            script.do("records", 3)
            script.do("cut")
            lost = await _next(events, GUARD)
            assert isinstance(lost, Lost) and lost.position == 3 and not lost.stalled
            assert "1011" in lost.cause and lost.at - script.done["cut"] <= AT_ONCE
            again = await _next(events, GUARD)
            assert isinstance(again, Reconnecting) and again.attempt == 1
            assert 0 <= again.wait <= FAST.cap and again.at - lost.at <= AT_ONCE
            opened = await _next(events, GUARD)
            assert isinstance(opened, Connected) and opened.connection == 2
            assert opened.position == 3 and script.starts == [0, 3]
            resumed = await _next(events, GUARD)
            assert isinstance(resumed, Resumed) and resumed.position == 3
            assert resumed.at - script.done["open 2"] <= AT_ONCE

            alarm = '{"eventElementType": "Alarm", "alarm": "Feed open"}'
            script.do("raw", alarm)
            status = await _next(events, GUARD)
            assert isinstance(status, VendorStatus) and status.fixture_id == fid
            assert (status.kind, status.text, status.raw) == (
                "alarm",
                "Feed open",
                alarm.encode(),
            )
            assert status.at - script.done["raw"] <= AT_ONCE
            notice = '{"message": "Coverage reduced", "level": "INFO"}'
            script.do("raw", notice)
            said = await _next(events, GUARD)
            assert isinstance(said, VendorStatus)
            assert (said.kind, said.text) == ("notice", "Coverage reduced")
            odd = '{"whatIsThis": 1}'
            script.do("raw", odd)
            unknown = await _next(events, GUARD)
            assert isinstance(unknown, VendorStatus) and unknown.kind == "unknown"
            assert unknown.raw == odd.encode()

            script.do("records", 2)
            script.do("finish")
            end = await _next(events, GUARD)
            assert isinstance(end, Ended) and end.finished and end.position == 6
            assert end.at - script.done["finish"] <= AT_ONCE
            with pytest.raises(StopAsyncIteration):
                await _next(events, GUARD)  # the end is the last event
    assert [r.fixture_action.action_id.int for r in got] == list(range(1, 7))
    assert feed.health_state == "over" and events.dropped == 0


async def test_a_silent_feed_is_delayed_then_recovered_and_a_stall_is_lost(way: str) -> None:
    fid = uuid.uuid4()
    script = Script(fid)
    got: list[Any] = []
    async with _served(script) as c:
        feed = c.live.actions("basketball", fid, idle_timeout=2.0)
        feed.delayed_after = 0.4
        async with _reading(c, feed, way, got) as events:
            assert isinstance(await _next(events, GUARD), Connected)
            script.do("records", 1)
            await until(lambda: "records" in script.done)
            delayed = await _next(events, GUARD)
            assert isinstance(delayed, Delayed) and delayed.cause == "silent"
            quiet = delayed.at - script.done["records"]
            assert quiet + 0.01 >= 0.4 and quiet <= 0.4 + AT_ONCE
            assert feed.health_state == "delayed" and delayed.seconds >= 0.4

            script.do("raw", '{"message": "Heartbeat sent at now", "level": "INFO"}')
            recovered = await _next(events, GUARD)
            assert isinstance(recovered, Recovered) and recovered.cause == "silent"
            assert recovered.at - script.done["raw"] <= POLL + AT_ONCE
            assert feed.health_state == "live"

            # Then nothing at all: delayed again, then the stall ends the connection.
            again = await _next(events, GUARD)
            assert isinstance(again, Delayed) and again.cause == "silent"
            lost = await _next(events, GUARD)
            assert isinstance(lost, Lost) and lost.stalled and lost.position == 1
            assert lost.at - script.done["raw"] <= 2.0 + AT_ONCE
            assert isinstance(await _next(events, GUARD), Reconnecting)
            assert isinstance(await _next(events, GUARD), Connected)
            assert isinstance(await _next(events, GUARD), Resumed)
            script.do("finish")
            end = await _next(events, GUARD)
            assert isinstance(end, Ended) and end.finished
    assert len(got) == 2


async def test_a_silence_the_finishing_record_ends_is_recovered_before_the_end(
    way: str,
) -> None:
    # The finishing record ends the silence and the feed in one turn, before the
    # recovery timer's next look: the delay was over first, so Recovered, then Ended.
    fid = uuid.uuid4()
    script = Script(fid)
    got: list[Any] = []
    async with _served(script) as c:
        feed = c.live.actions("basketball", fid, idle_timeout=10)
        feed.delayed_after = 0.4
        async with _reading(c, feed, way, got) as events:
            assert isinstance(await _next(events, GUARD), Connected)
            script.do("records", 1)
            delayed = await _next(events, GUARD)
            assert isinstance(delayed, Delayed) and delayed.cause == "silent"
            script.do("finish")
            recovered = await _next(events, GUARD)
            assert isinstance(recovered, Recovered) and recovered.cause == "silent"
            assert recovered.at - script.done["finish"] <= AT_ONCE
            end = await _next(events, GUARD)
            assert isinstance(end, Ended) and end.finished
    assert len(got) == 2


async def test_a_lagging_record_is_delayed_and_a_current_one_recovers(way: str) -> None:
    fid = uuid.uuid4()
    script = Script(fid)
    got: list[Any] = []
    async with _served(script) as c:
        feed = c.live.actions("basketball", fid, idle_timeout=10)
        feed.lag_after = 5.0
        async with _reading(c, feed, way, got) as events:
            assert isinstance(await _next(events, GUARD), Connected)
            script.do("old", 30.0)  # the first record of a connection is compared
            delayed = await _next(events, GUARD)
            assert isinstance(delayed, Delayed) and delayed.cause == "lagging"
            assert 30.0 <= delayed.seconds <= 30.0 + AT_ONCE
            assert delayed.at - script.done["old"] <= AT_ONCE
            script.do("records", 1)
            recovered = await _next(events, GUARD)
            assert isinstance(recovered, Recovered) and recovered.cause == "lagging"
            assert recovered.at - script.done["records"] <= AT_ONCE
            script.do("finish")
            assert isinstance(await _next(events, GUARD), Ended)
    assert len(got) == 3


async def test_a_coverage_change_in_the_records_is_an_event(way: str) -> None:
    fid = uuid.uuid4()
    script = Script(fid)
    got: list[Any] = []
    live = {"collectionStatus": "CollectingLive"}
    paused = {"collectionStatus": "CollectionSuspended", "reason": "no signal"}
    async with _served(script) as c:
        feed = c.live.actions("basketball", fid, idle_timeout=10)
        async with _reading(c, feed, way, got) as events:
            assert isinstance(await _next(events, GUARD), Connected)
            script.do("summary", live)
            first = await _next(events, GUARD)
            assert isinstance(first, Coverage) and first.fixture_id == fid
            assert (first.status, first.previous, first.position) == ("CollectingLive", None, 1)
            script.do("summary", live)  # no change: no event
            script.do("summary", paused)
            dropped = await _next(events, GUARD)
            assert isinstance(dropped, Coverage) and dropped.position == 3
            assert (dropped.status, dropped.previous) == ("CollectionSuspended", "CollectingLive")
            assert dropped.reason == "no signal"
            assert dropped.at - script.done["summary"] <= AT_ONCE
            script.do("summary", live)
            back = await _next(events, GUARD)
            assert isinstance(back, Coverage) and back.status == "CollectingLive"
            assert back.previous == "CollectionSuspended"
            script.do("finish")  # a record without a summary says nothing of coverage
            assert isinstance(await _next(events, GUARD), Ended)
    assert len(got) == 5


async def test_a_refused_handshake_is_reconnecting_before_the_first_connection(
    way: str,
) -> None:
    fid = uuid.uuid4()
    script = Script(fid, refuse=2)
    got: list[Any] = []
    async with _served(script) as c:
        feed = c.live.actions("basketball", fid, idle_timeout=10)
        async with _reading(c, feed, way, got) as events:
            tries = [await _next(events, GUARD), await _next(events, GUARD)]
            assert [(type(e), e.attempt) for e in tries] == [  # type: ignore[union-attr]
                (Reconnecting, 1),
                (Reconnecting, 2),
            ]
            assert tries[1].at - script.done["refused"] <= AT_ONCE
            opened = await _next(events, GUARD)
            assert isinstance(opened, Connected) and opened.connection == 3
            script.do("finish")  # no Resumed: nothing was lost, nothing delivered
            assert isinstance(await _next(events, GUARD), Ended)
    assert len(got) == 1


async def test_a_feed_closed_by_its_reader_ends_its_events_and_many_listen() -> None:
    fid = uuid.uuid4()
    script = Script(fid)
    async with _served(script) as c:
        feed = c.live.actions("basketball", fid, idle_timeout=10)
        one, two = feed.health(), feed.health(maxsize=1)
        async with feed:
            script.do("records", 2)
            assert (await anext(feed)).fixture_action.action_id.int == 1
        ends = [e async for e in one]
        assert [type(e) for e in ends] == [Connected, Ended]
        assert ends[-1].position == 1 and not ends[-1].finished  # type: ignore[union-attr]
        assert "closed" in ends[-1].reason  # type: ignore[union-attr]
        assert [type(e) for e in [e async for e in two]] == [Ended] and two.dropped == 1
        late = feed.health()
        assert [e async for e in late] == []  # an ended feed's listener ends at once


async def test_a_merge_names_each_fixture_in_its_events() -> None:
    fids = [uuid.uuid4(), uuid.uuid4()]
    scripts = {fid: Script(fid) for fid in fids}

    async def route(request: web.Request) -> web.StreamResponse:
        return await scripts[uuid.UUID(request.match_info["fid"])].handler(request)

    async with serve(route, "/basketball/fixtures/{fid}/actions") as url, _client(url) as c:
        feeds = [c.live.actions("basketball", fid, idle_timeout=10) for fid in fids]
        async with c.live.merge(feeds) as m:
            events = m.health()
            reading = asyncio.ensure_future(_drain(m))
            seen = [await _next(events, GUARD), await _next(events, GUARD)]
            assert {e.fixture_id for e in seen} == set(fids)
            assert all(isinstance(e, Connected) for e in seen)
            for s in scripts.values():
                s.do("finish")
            ends = [await _next(events, GUARD), await _next(events, GUARD)]
            assert {e.fixture_id for e in ends} == set(fids)
            assert all(isinstance(e, Ended) and e.finished for e in ends)
            with pytest.raises(StopAsyncIteration):
                await _next(events, GUARD)
            assert await reading == 2


async def _drain(m: Any) -> int:
    return len([r async for r in m])


# ------------------------------------------------------------- against the emulator


@pytest.mark.parametrize("dialect", ["emulator", "vendor", "golf"])
async def test_the_emulators_status_fault_is_a_vendor_status_event(way: str, dialect: str) -> None:
    async with (
        Emulator(live_heartbeat=HEARTBEAT, live_dialect=dialect) as emu,
        emu.client(retry=FAST) as c,
    ):
        fid = await fixture_id(c, "completed")
        rest = await c.actions.list("basketball", fid).collect()
        emu.faults.live("status", after=3)
        feed = c.live.actions("basketball", fid, replay="fast", idle_timeout=10)
        got: list[Any] = []
        async with _reading(c, feed, way, got) as events:
            said = [e async for e in events]
    statuses = [e for e in said if isinstance(e, VendorStatus)]
    kind = "alarm" if dialect == "golf" else "notice"
    assert [(e.kind, e.text) for e in statuses][-1] == (kind, STATUS_TEXT)
    assert type(said[0]) is Connected and type(said[-1]) is Ended and said[-1].finished
    assert len(got) == len(rest) and emu.faults.injected["live.status"] == 1


async def test_the_emulators_stall_is_delayed_then_lost_and_resumed(way: str) -> None:
    async with (
        Emulator(live_heartbeat=HEARTBEAT) as emu,
        emu.client(retry=FAST) as c,
    ):
        fid = await fixture_id(c, "completed")
        rest = await c.actions.list("basketball", fid).collect()
        emu.faults.live("stall", after=5)
        feed = c.live.actions("basketball", fid, replay="fast", idle_timeout=1.5)
        feed.delayed_after = 0.5
        got: list[Any] = []
        async with _reading(c, feed, way, got) as events:
            said = [e async for e in events]
    kinds = [type(e) for e in said]
    at = kinds.index(Delayed)
    assert kinds[at : at + 5] == [Delayed, Lost, Reconnecting, Connected, Resumed]
    delayed, lost, resumed = said[at], said[at + 1], said[at + 4]
    assert isinstance(lost, Lost) and lost.stalled and isinstance(resumed, Resumed)
    # Delayed half-way through the stall, lost at its end; resumed where it stood.
    assert 0.5 <= delayed.seconds <= 0.5 + AT_ONCE
    assert 1.5 - 0.5 - AT_ONCE <= lost.at - delayed.at <= 1.5 - 0.5 + AT_ONCE
    assert resumed.position == lost.position == 5
    assert kinds[-1] is Ended and len(got) == len(rest)


async def test_the_emulators_delay_is_delayed_then_recovered_on_one_connection(
    way: str,
) -> None:
    async with (
        Emulator(live_heartbeat=HEARTBEAT) as emu,
        emu.client(retry=FAST) as c,
    ):
        fid = await fixture_id(c, "completed")
        rest = await c.actions.list("basketball", fid).collect()
        emu.faults.live("delay", after=5, seconds=2.0)
        feed = c.live.actions("basketball", fid, replay="fast", idle_timeout=10)
        feed.delayed_after = 0.5
        got: list[Any] = []
        async with _reading(c, feed, way, got) as events:
            said = [e async for e in events]
    kinds = [type(e) for e in said if not isinstance(e, Coverage)]
    assert kinds == [Connected, Delayed, Recovered, Ended]  # no reconnect
    delayed = next(e for e in said if isinstance(e, Delayed))
    recovered = next(e for e in said if isinstance(e, Recovered))
    assert delayed.cause == recovered.cause == "silent"
    assert 0.5 <= delayed.seconds <= 0.5 + AT_ONCE
    # Recovered by the packet that ends the silence, 2 s after it began.
    quiet = recovered.at - delayed.at
    assert 2.0 - 0.5 - AT_ONCE <= quiet <= 2.0 - 0.5 + POLL + AT_ONCE
    assert len(got) == len(rest) and emu.faults.injected["live.delay"] == 1


async def test_the_emulators_lag_is_delayed_lagging_then_recovered(way: str) -> None:
    # The emulator's clock at the real time: the client compares records with its own.
    async with (
        Emulator(live_heartbeat=HEARTBEAT, now=datetime.now(UTC), speed=1.0) as emu,
        emu.client(retry=FAST) as c,
    ):
        fid = await fixture_id(c, "completed")
        rest = await c.actions.list("basketball", fid).collect()
        # From the first record, which a listened feed always compares with the clock.
        emu.faults.live("lag", after=0, seconds=30.0, count=3)
        feed = c.live.actions("basketball", fid, replay="fast", idle_timeout=10)
        feed.lag_after = 5.0
        got: list[Any] = []
        async with _reading(c, feed, way, got) as events:
            said = [e async for e in events]
    kinds = [type(e) for e in said if not isinstance(e, Coverage)]
    assert kinds == [Connected, Delayed, Recovered, Ended]
    delayed = next(e for e in said if isinstance(e, Delayed))
    recovered = next(e for e in said if isinstance(e, Recovered))
    assert delayed.cause == recovered.cause == "lagging"
    assert 30.0 - AT_ONCE <= delayed.seconds <= 30.0 + AT_ONCE
    assert len(got) == len(rest) and emu.faults.injected["live.lag"] == 1


async def test_the_emulators_coverage_drop_is_coverage_events(way: str) -> None:
    async with (
        Emulator(live_heartbeat=HEARTBEAT) as emu,
        emu.client(retry=FAST) as c,
    ):
        fid = await fixture_id(c, "completed")
        rest = await c.actions.list("basketball", fid).collect()
        emu.faults.live("coverage", after=5, count=3)
        feed = c.live.actions("basketball", fid, replay="fast", idle_timeout=10)
        got: list[Any] = []
        async with _reading(c, feed, way, got) as events:
            said = [e async for e in events]
    changes = {e.position: e for e in said if isinstance(e, Coverage)}
    suspended, dropped, back = changes[6], changes[7], changes[9]
    assert suspended.status == "CollectionSuspended" and suspended.reason == "no signal"
    assert suspended.previous not in ("CollectionSuspended", "CollectionDropped", None)
    assert (dropped.status, dropped.previous) == ("CollectionDropped", "CollectionSuspended")
    assert dropped.reason == "no signal" and 8 not in changes  # no change, no event
    assert back.previous == "CollectionDropped"  # then the timeline's own status
    assert back.status not in ("CollectionSuspended", "CollectionDropped")
    assert type(said[-1]) is Ended and said[-1].finished
    assert len(got) == len(rest) and emu.faults.injected["live.coverage"] == 1
