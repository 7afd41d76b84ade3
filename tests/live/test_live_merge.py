"""Many live feeds merged into one iterator; backpressure; closing leaves nothing behind."""

from __future__ import annotations

import asyncio
import tracemalloc
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from support import until
from support.live import HEARTBEAT, client_tasks, closed, fixture_id, unseq

from asyncsports import Client, NotFoundError, RetryPolicy
from asyncsports.emulator import Emulator
from asyncsports.live import Feed, merge
from asyncsports.models import Action, Statistics

BIG = 20_000


# The emulator of the ``sports_emulator`` fixture (asyncsports.testing.plugin).
pytestmark = pytest.mark.emulator(live_heartbeat=HEARTBEAT, big_timeline=BIG)


@pytest_asyncio.fixture(params=["plain", "recorded"])
async def sports_client(
    sports_emulator: Emulator, request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[Client]:
    """The plugin's ``sports_client``, retrying fast: a client straight on the default transport, or through the recording one (a second
    transport wrapping the first: its websockets push through a listener of its own)."""
    recorded = {"record": tmp_path / "merge.jsonl"} if request.param == "recorded" else {}
    async with sports_emulator.client(
        retry=RetryPolicy(max_retries=2, base=0.01, cap=0.05), **recorded
    ) as c:
        yield c


async def completed(client: Client, n: int) -> list[uuid.UUID]:
    out = []
    async for f in client.fixtures.list("basketball", status="completed"):
        out.append(f.id)
        if len(out) == n:
            break
    return out


async def settled(emu: Emulator) -> int:
    """The emulator's packets sent, once it stopped sending: every socket's transport
    paused for writing (the kernel's buffers full), so its next drain waits."""

    def paused(ws: web.WebSocketResponse) -> bool:
        protocol = ws._req.protocol if ws._req is not None else None  # aiohttp keeps it private
        return protocol is not None and protocol.writing_paused

    await until(lambda: emu._live.sockets and all(map(paused, emu._live.sockets)), within=30)
    return emu.live_packets_sent


async def test_merge_keeps_each_fixtures_order_and_ends(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fids = await completed(sports_client, 4)
    feeds = [sports_client.live.actions("basketball", f, replay="fast") for f in fids]
    stats = sports_client.live.statistics("basketball", fids[0], replay="fast")
    got: dict[tuple[uuid.UUID, type], list[Any]] = {}
    async with sports_client.live.merge([*feeds, stats], per_feed=3) as merged:
        async for fid, record in merged:
            got.setdefault((fid, type(record)), []).append(record)
            assert merged.buffered <= 3 * 5
    for fid, feed in zip(fids, feeds, strict=True):
        rest = await sports_client.actions.list("basketball", fid).collect()
        assert unseq(got[fid, Action]) == unseq(rest)
        assert merged.position(feed) == feed.position == len(rest)
    packets = got[fids[0], Statistics]
    assert packets[-1] == await sports_client.statistics.get("basketball", fids[0])
    assert merged.position(stats) == len(packets)
    await closed(sports_emulator)


async def test_one_feed_failing_is_raised_once_and_the_others_go_on(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fids = await completed(sports_client, 2)
    bad = sports_client.live.actions("basketball", uuid.uuid4(), replay="fast")
    good = [sports_client.live.actions("basketball", f, replay="fast") for f in fids]
    seen: list[uuid.UUID] = []
    merged = merge(bad, *good)
    async with merged:
        with pytest.raises(NotFoundError) as info:
            async for fid, _ in merged:
                seen.append(fid)
        assert str(bad.fixture_id) in "".join(info.value.__notes__)
        seen += [fid async for fid, _ in merged]
    assert merged.position(bad) == 0
    for fid, feed in zip(fids, good, strict=True):
        n = len(await sports_client.actions.list("basketball", fid).collect())
        assert seen.count(fid) == n == merged.position(feed)


async def test_break_out_of_a_merge_closes_every_socket_and_task(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    live = await fixture_id(sports_client, "live")
    fids = await completed(sports_client, 3)
    tasks = client_tasks()
    feeds = [sports_client.live.actions("basketball", live)]
    feeds += [sports_client.live.actions("basketball", f, replay="normal") for f in fids]
    async with merge(*feeds, per_feed=2) as merged:
        n = 0
        async for _ in merged:
            n += 1
            if n == 20:
                break
        assert len(sports_emulator._live.sockets) == 4
    await closed(sports_emulator)
    assert client_tasks() - tasks == set()
    assert sum(merged.position(f) for f in feeds) == 20


async def test_cancelling_a_consumer_closes_its_socket(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fid = await fixture_id(sports_client, "live")
    tasks = client_tasks()

    async def consume() -> None:
        async with sports_client.live.actions("basketball", fid, idle_timeout=5) as feed:
            async for _ in feed:
                reading.set()

    reading = asyncio.Event()
    task = asyncio.create_task(consume())
    await asyncio.wait_for(reading.wait(), 10)  # connected, the backlog coming in
    assert len(sports_emulator._live.sockets) == 1 and not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await closed(sports_emulator)
    # The recording's writer task ends once it has written the close (at once, or soon).
    await until(lambda: client_tasks() - tasks == set())


# ---------------------------------------------------------------------- backpressure


@pytest.mark.slow
async def test_a_slow_consumer_pauses_the_socket_and_memory_stays_bounded(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fid = sports_emulator.big_fixture_id
    assert fid is not None
    async with sports_client.live.actions("american-football", fid, replay="fast") as feed:
        first = [await anext(feed) for _ in range(5)]
        tracemalloc.start()
        try:
            sent = await settled(sports_emulator)  # the consumer is away: the server must stop
            grown, _ = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        rest = [a async for a in feed]
    assert sent < BIG * 3 // 4  # a 20,000-action timeline (about 25 MB) did not all go out
    assert grown < 4 * 1024 * 1024
    got = first + rest
    assert len(got) == BIG == feed.position and got[-1].finished
    assert [a.fixture_action.fixture_seq_num for a in got] == list(range(1, BIG + 1))


async def test_a_merge_buffers_at_most_per_feed_records_of_each(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fid = sports_emulator.big_fixture_id
    assert fid is not None
    feeds = [sports_client.live.actions("american-football", fid, replay="fast") for _ in range(3)]
    async with merge(*feeds, per_feed=8) as merged:
        await anext(merged)
        sent = await settled(sports_emulator)
        assert merged.buffered <= 3 * 8
        assert sent < 3 * BIG // 2
        n = 1
        async for _ in merged:
            n += 1
            assert merged.buffered <= 3 * 8
            if n == 3 * 2000:
                break
        counts: dict[Feed[Any], int] = {f: merged.position(f) for f in feeds}
    assert sum(counts.values()) == 3 * 2000 and all(counts.values())


async def test_feeds_can_be_added_while_merging(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    first, second = await completed(sports_client, 2)
    a = sports_client.live.actions("basketball", first, replay="fast")
    b = sports_client.live.actions("basketball", second, replay="fast", start_position=10)
    seen: list[uuid.UUID] = []
    async with merge(a) as merged:
        async for fid, _ in merged:
            if not seen:
                merged.add(b)
            seen.append(fid)
        with pytest.raises(TypeError):
            merged.add("not a feed")  # type: ignore[arg-type]
    assert merged.feeds == [a, b]
    assert seen.count(second) == b.position - 10 == merged.position(b) - 10 > 0
    assert seen.count(first) == a.position == merged.position(a)
    with pytest.raises(RuntimeError, match="closed"):
        merged.add(sports_client.live.actions("basketball", first))


async def test_anext_and_async_for_share_one_merge(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    # ``async for`` reads through a generator, ``anext`` through __anext__: one book.
    fids = await completed(sports_client, 2)
    feeds = [sports_client.live.actions("basketball", f, replay="fast") for f in fids]
    async with merge(*feeds) as merged:
        first = [await anext(merged) for _ in range(3)]
        rest = [pair async for pair in merged]
    for fid, feed in zip(fids, feeds, strict=True):
        n = len(await sports_client.actions.list("basketball", fid).collect())
        assert [f for f, _ in first + rest].count(fid) == n == merged.position(feed)
