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
async def sports_client(sports_emulator: Emulator) -> AsyncIterator[Client]:
    """The plugin's ``sports_client``, retrying fast."""
    async with sports_emulator.client(retry=FAST) as c:
        yield c


async def replay(client: Client, fid: uuid.UUID, **kw: Any) -> list[Any]:
    """Every record of a finished fixture's actions feed, replayed fast."""
    feed = client.live.actions("basketball", fid, replay="fast", idle_timeout=IDLE, **kw)
    return await records(feed)


async def completed(client: Client) -> tuple[uuid.UUID, list[Any]]:
    fid = await fixture_id(client, "completed")
    return fid, await client.actions.list("basketball", fid).collect()


# ---------------------------------------------------------------------- healed


@pytest.mark.parametrize("kind", ["drop", "stall", "duplicate", "reorder"])
async def test_each_fault_is_healed_every_record_once_in_order(
    sports_emulator: Emulator, sports_client: Client, kind: str
) -> None:
    fid, rest = await completed(sports_client)
    sports_emulator.faults.live(kind, after=5)
    got = await replay(sports_client, fid)
    assert unseq(got) == unseq(rest)
    assert sports_emulator.faults.injected["live." + kind] == 1
    reconnects = 1 if kind in ("drop", "stall") else 0
    assert sports_emulator.requests["live.actions"] == 1 + reconnects
    await closed(sports_emulator)


async def test_a_feed_that_delivers_survives_any_number_of_drops(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    """The budget counts failed connections in a row: one that delivered resets it."""
    fid, rest = await completed(sports_client)
    sports_emulator.faults.live("drop", after=10, times=1000)  # every connection drops after 10
    got = await replay(sports_client, fid)
    assert unseq(got) == unseq(rest)
    assert sports_emulator.requests["live.actions"] == len(rest) // 10 + 1 > FAST.max_retries + 1


async def test_a_server_that_continues_numbering_is_followed_too(sports_client: Client) -> None:
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


async def test_bad_token_is_one_authentication_error_no_loop(sports_emulator: Emulator) -> None:
    async with sports_emulator.client(token="wrong", retry=FAST) as client:
        fid = await _any_fixture(sports_emulator)
        with pytest.raises(
            AuthenticationError, match=r"supplied authentication is invalid|Invalid auth"
        ):
            await replay(client, fid)
    assert sports_emulator.requests["live.actions"] == 1


async def test_a_callable_token_is_asked_again_once(sports_emulator: Emulator) -> None:
    asked: list[int] = []

    def token() -> str:
        asked.append(1)
        return sports_emulator.token

    fid = await _any_fixture(sports_emulator)
    sports_emulator.faults.live("bad_auth")
    async with sports_emulator.client(token=token, retry=FAST) as client:
        rest = await client.actions.list("basketball", fid).collect()
        assert unseq(await replay(client, fid)) == unseq(rest)
    assert sports_emulator.requests["live.actions"] == 2 and len(asked) == 2
    sports_emulator.faults.live("bad_auth", times=2)
    async with sports_emulator.client(token=token, retry=FAST) as client:
        with pytest.raises(AuthenticationError):
            await replay(client, fid)


async def test_accept_and_close_forever_ends_in_transport_error(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fid, _ = await completed(sports_client)
    sports_emulator.faults.live("close", times=1000)
    with pytest.raises(TransportError, match="1011") as info:
        await replay(sports_client, fid)
    assert sports_emulator.requests["live.actions"] == FAST.max_retries + 1 == info.value.attempts
    assert sports_client.retries >= FAST.max_retries


@pytest.mark.slow
async def test_a_server_that_stalls_forever_ends_in_a_timeout(sports_emulator: Emulator) -> None:
    sports_emulator.faults.live("stall", after=0, times=1000)
    async with sports_emulator.client(retry=RetryPolicy(max_retries=1, base=0.01)) as client:
        fid, _ = await completed(client)
        with pytest.raises(TimeoutError, match="idle_timeout"):
            await replay(client, fid)
    assert sports_emulator.requests["live.actions"] == 2
    await closed(sports_emulator)


async def test_unknown_fixture_is_not_found_at_once(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    with pytest.raises(NotFoundError) as info:
        await replay(sports_client, uuid.uuid4())
    assert info.value.status == 404 and sports_emulator.requests["live.actions"] == 1


async def test_malformed_packet_names_the_position_and_can_be_skipped(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fid, rest = await completed(sports_client)
    sports_emulator.faults.live("malformed", after=4)
    got: list[Any] = []
    feed = sports_client.live.actions("basketball", fid, replay="fast", idle_timeout=IDLE)
    with pytest.raises(DecodeError, match=r"after position 4 .*start_position=5"):
        async with feed:
            async for a in feed:
                got.append(a)
    assert feed.position == 4 == len(got)
    got += await replay(sports_client, fid, start_position=feed.position + 1)
    assert unseq(got) == unseq(rest[:4] + rest[5:])
    await closed(sports_emulator)


async def test_nothing_beyond_the_start_position_ends_the_feed(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fid, rest = await completed(sports_client)
    assert await replay(sports_client, fid, start_position=len(rest)) == []
    assert sports_emulator.requests["live.actions"] == 1


async def _any_fixture(emu: Emulator) -> uuid.UUID:
    async with emu.client() as c:
        return await fixture_id(c, "completed")


# ---------------------------------------------------------------------- the storm


async def test_storm_over_a_live_fixture_yields_the_rest_timeline_once_in_order(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    """Drops, stalls, duplicates and reorders while the fixture is played live."""
    storm = sports_emulator.faults.live_storm(0.1, seed=6, per_packet=True)
    fid = await fixture_id(sports_client, "live")
    got: list[Any] = []
    feed = sports_client.live.actions("basketball", fid, idle_timeout=IDLE)
    async with feed:
        while not feed.finished:
            sports_emulator.clock.advance(120)  # two minutes of the match, then read what is due
            due = len(await sports_client.actions.list("basketball", fid).collect())
            while feed.position < due:
                got.append(await anext(feed))
    rest = await sports_client.actions.list("basketball", fid).collect()
    assert got[-1].finished and unseq(got) == unseq(rest)
    kinds = {k: sports_emulator.faults.injected[f"live.{k}"] for k in storm.kinds}
    assert all(n > 0 for n in kinds.values()), kinds
    assert feed.connections == sports_emulator.requests["live.actions"] > 3


async def test_statistics_feed_is_healed_too(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fid, _ = await completed(sports_client)

    async def packets() -> list[Any]:
        feed = sports_client.live.statistics("basketball", fid, replay="fast", idle_timeout=IDLE)
        async with feed:
            return [(p.timestamp, p.finished, p.team_action_aggregates) async for p in feed]

    clean = await packets()
    sports_emulator.faults.live(
        "drop", feed="statistics", after=3
    )  # one fault a connection, in turn
    sports_emulator.faults.live("stall", feed="statistics", after=2)
    sports_emulator.faults.live("reorder", feed="statistics", after=5)
    assert await packets() == clean and len(clean) > 8
    assert sports_emulator.requests["live.statistics"] == 1 + 3  # the clean run, then one per fault


async def test_closing_the_client_under_a_feed_is_said_at_the_next_connection(
    sports_emulator: Emulator,
) -> None:
    async with sports_emulator.client(retry=FAST) as c:
        fid = await fixture_id(c, "completed")
        sports_emulator.faults.live("drop", after=3)
        feed = c.live.actions("basketball", fid, replay="fast", idle_timeout=IDLE)
        got = [await anext(feed) for _ in range(3)]
        await c.aclose()
        with pytest.raises(RuntimeError, match="client was closed while a live feed"):
            await anext(feed)
        assert feed.position == len(got) == 3
        await feed.aclose()
