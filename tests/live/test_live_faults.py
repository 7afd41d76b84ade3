"""client.live under the emulator's websocket faults: never lose, never repeat."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from support import each_dialect
from support.live import HEARTBEAT, closed, fixture_id, records, unseq

from asyncsports import (
    AuthenticationError,
    Client,
    DecodeError,
    NotFoundError,
    RetryPolicy,
    TimeoutError,
    TransportError,
)
from asyncsports.emulator import Emulator

IDLE = 3 * HEARTBEAT  # a few heartbeat intervals, as the default is
FAST = RetryPolicy(max_retries=3, base=0.01, cap=0.05)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    each_dialect(metafunc, ways=True, live_heartbeat=HEARTBEAT)  # the vendor's shapes too


@pytest_asyncio.fixture
async def client(emu: Emulator) -> AsyncIterator[Client]:
    async with emu.client(retry=FAST) as c:
        yield c


async def replay(client: Client, fid: uuid.UUID, **kw: Any) -> list[Any]:
    """Every record of a finished fixture's actions feed, replayed fast."""
    feed = client.live.actions("basketball", fid, speed="fast", idle_timeout=IDLE, **kw)
    return await records(feed)


async def completed(client: Client) -> tuple[uuid.UUID, list[Any]]:
    fid = await fixture_id(client, "completed")
    return fid, await client.actions.list("basketball", fid).collect()


# ---------------------------------------------------------------------- healed


@pytest.mark.parametrize("kind", ["drop", "stall", "duplicate", "reorder"])
async def test_each_fault_is_healed_every_record_once_in_order(
    emu: Emulator, client: Client, kind: str
) -> None:
    fid, rest = await completed(client)
    emu.faults.live(kind, after=5)
    got = await replay(client, fid)
    assert unseq(got) == unseq(rest)
    assert emu.faults.injected["live." + kind] == 1
    reconnects = 1 if kind in ("drop", "stall") else 0
    assert emu.requests["live.actions"] == 1 + reconnects
    await closed(emu)


async def test_a_feed_that_delivers_survives_any_number_of_drops(
    emu: Emulator, client: Client
) -> None:
    """The budget counts failed connections in a row: one that delivered resets it."""
    fid, rest = await completed(client)
    emu.faults.live("drop", after=10, times=1000)  # every connection drops after 10
    got = await replay(client, fid)
    assert unseq(got) == unseq(rest)
    assert emu.requests["live.actions"] == len(rest) // 10 + 1 > FAST.max_retries + 1


async def test_a_server_that_continues_numbering_is_followed_too(client: Client) -> None:
    async with (
        Emulator(live_heartbeat=HEARTBEAT, live_seq="fixture") as emu,
        emu.client(retry=FAST) as c,
    ):
        fid, rest = await completed(c)
        emu.faults.live("drop", after=7, times=5)
        emu.faults.live("reorder", after=2, skip=5)
        got = await replay(c, fid)
    assert unseq(got) == unseq(rest)


# ---------------------------------------------------------------------- raised


async def test_bad_token_is_one_authentication_error_no_loop(emu: Emulator) -> None:
    async with emu.client(token="wrong", retry=FAST) as client:
        fid = await _any_fixture(emu)
        with pytest.raises(
            AuthenticationError, match=r"supplied authentication is invalid|Invalid auth"
        ):
            await replay(client, fid)
    assert emu.requests["live.actions"] == 1


async def test_a_callable_token_is_asked_again_once(emu: Emulator) -> None:
    asked: list[int] = []

    def token() -> str:
        asked.append(1)
        return emu.token

    fid = await _any_fixture(emu)
    emu.faults.live("bad_auth")
    async with emu.client(token=token, retry=FAST) as client:
        rest = await client.actions.list("basketball", fid).collect()
        assert unseq(await replay(client, fid)) == unseq(rest)
    assert emu.requests["live.actions"] == 2 and len(asked) == 2
    emu.faults.live("bad_auth", times=2)
    async with emu.client(token=token, retry=FAST) as client:
        with pytest.raises(AuthenticationError):
            await replay(client, fid)


async def test_accept_and_close_forever_ends_in_transport_error(
    emu: Emulator, client: Client
) -> None:
    fid, _ = await completed(client)
    emu.faults.live("close", times=1000)
    with pytest.raises(TransportError, match="1011") as info:
        await replay(client, fid)
    assert emu.requests["live.actions"] == FAST.max_retries + 1 == info.value.attempts
    assert client.retries >= FAST.max_retries


@pytest.mark.slow
async def test_a_server_that_stalls_forever_ends_in_a_timeout(emu: Emulator) -> None:
    emu.faults.live("stall", after=0, times=1000)
    async with emu.client(retry=RetryPolicy(max_retries=1, base=0.01)) as client:
        fid, _ = await completed(client)
        with pytest.raises(TimeoutError, match="idle_timeout"):
            await replay(client, fid)
    assert emu.requests["live.actions"] == 2
    await closed(emu)


async def test_unknown_fixture_is_not_found_at_once(emu: Emulator, client: Client) -> None:
    with pytest.raises(NotFoundError) as info:
        await replay(client, uuid.uuid4())
    assert info.value.status == 404 and emu.requests["live.actions"] == 1


async def test_malformed_packet_names_the_position_and_can_be_skipped(
    emu: Emulator, client: Client
) -> None:
    fid, rest = await completed(client)
    emu.faults.live("malformed", after=4)
    got: list[Any] = []
    feed = client.live.actions("basketball", fid, speed="fast", idle_timeout=IDLE)
    with pytest.raises(DecodeError, match=r"after position 4 .*start_position=5"):
        async with feed:
            async for a in feed:
                got.append(a)
    assert feed.position == 4 == len(got)
    got += await replay(client, fid, start_position=feed.position + 1)
    assert unseq(got) == unseq(rest[:4] + rest[5:])
    await closed(emu)


async def test_nothing_beyond_the_start_position_ends_the_feed(
    emu: Emulator, client: Client
) -> None:
    fid, rest = await completed(client)
    assert await replay(client, fid, start_position=len(rest)) == []
    assert emu.requests["live.actions"] == 1


async def _any_fixture(emu: Emulator) -> uuid.UUID:
    async with emu.client() as c:
        return await fixture_id(c, "completed")


# ---------------------------------------------------------------------- the storm


async def test_storm_over_a_live_fixture_yields_the_rest_timeline_once_in_order(
    emu: Emulator, client: Client
) -> None:
    """Drops, stalls, duplicates and reorders while the fixture is played live."""
    storm = emu.faults.live_storm(0.1, seed=6, per_packet=True)
    fid = await fixture_id(client, "live")
    got: list[Any] = []
    feed = client.live.actions("basketball", fid, idle_timeout=IDLE)
    async with feed:
        while not feed.finished:
            emu.clock.advance(120)  # two minutes of the match, then read what is due
            due = len(await client.actions.list("basketball", fid).collect())
            while feed.position < due:
                got.append(await anext(feed))
    rest = await client.actions.list("basketball", fid).collect()
    assert got[-1].finished and unseq(got) == unseq(rest)
    kinds = {k: emu.faults.injected[f"live.{k}"] for k in storm.kinds}
    assert all(n > 0 for n in kinds.values()), kinds
    assert feed.connections == emu.requests["live.actions"] > 3


async def test_statistics_feed_is_healed_too(emu: Emulator, client: Client) -> None:
    fid, _ = await completed(client)

    async def packets() -> list[Any]:
        feed = client.live.statistics("basketball", fid, speed="fast", idle_timeout=IDLE)
        async with feed:
            return [(p.timestamp, p.finished, p.team_action_aggregates) async for p in feed]

    clean = await packets()
    emu.faults.live("drop", feed="statistics", after=3)  # one fault a connection, in turn
    emu.faults.live("stall", feed="statistics", after=2)
    emu.faults.live("reorder", feed="statistics", after=5)
    assert await packets() == clean and len(clean) > 8
    assert emu.requests["live.statistics"] == 1 + 3  # the clean run, then one per fault


async def test_closing_the_client_under_a_feed_is_said_at_the_next_connection(
    emu: Emulator,
) -> None:
    async with emu.client(retry=FAST) as c:
        fid = await fixture_id(c, "completed")
        emu.faults.live("drop", after=3)
        feed = c.live.actions("basketball", fid, speed="fast", idle_timeout=IDLE)
        got = [await anext(feed) for _ in range(3)]
        await c.aclose()
        with pytest.raises(RuntimeError, match="client was closed while a live feed"):
            await anext(feed)
        assert feed.position == len(got) == 3
        await feed.aclose()
