"""A live feed ends when its fixture does, and only then (issue 20, docs/wire.md).

The finishing record ends a feed. Any other end of a connection, a normal close (1000)
included, is a connection that ended: the feed reconnects at its position or raises. A
normal close with nothing delivered makes the feed ask the service, which ends it without
error only for a fixture that is over with every record of its timeline delivered.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from support import each_dialect
from support.live import HEARTBEAT, closed, fixture_id, records, unseq

from asyncsports import Client, RetryPolicy, TimeoutError, TransportError
from asyncsports.emulator import Emulator
from asyncsports.emulator._faults import LIVE_KINDS
from asyncsports.emulator._live import DIALECTS

IDLE = 3 * HEARTBEAT
FAST = RetryPolicy(max_retries=3, base=0.01, cap=0.05)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    each_dialect(metafunc, ways=True, live_heartbeat=HEARTBEAT)  # the vendor's shapes too


@pytest_asyncio.fixture
async def sports_client(sports_emulator: Emulator) -> AsyncIterator[Client]:
    """The plugin's ``sports_client``, retrying fast."""
    async with sports_emulator.client(retry=FAST) as c:
        yield c


async def completed(client: Client, sport: str = "basketball") -> tuple[uuid.UUID, list[Any]]:
    fid = await fixture_id(client, "completed", sport)
    return fid, await client.actions.list(sport, fid).collect()


async def replay(client: Client, fid: uuid.UUID, kind: str = "actions", **kw: Any) -> list[Any]:
    open_feed = client.live.actions if kind == "actions" else client.live.statistics
    feed = open_feed("basketball", fid, replay="fast", idle_timeout=IDLE, **kw)
    return await records(feed)


# ---------------------------------------------------------------------- the two cases


async def test_a_clean_close_right_after_accepting_once_loses_nothing(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fid, rest = await completed(sports_client)
    rule = sports_emulator.faults.live("close_clean")  # after=0: on accept, once
    got = await replay(sports_client, fid)
    assert rule.hits == 1 and sports_emulator.faults.injected["live.close_clean"] == 1
    assert unseq(got) == unseq(rest) and got[-1].finished
    assert sports_emulator.requests["live.actions"] == 2


async def test_a_clean_close_right_after_accepting_forever_raises(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fid, _ = await completed(sports_client)
    sports_emulator.faults.live("close_clean", times=None)
    with pytest.raises(TransportError, match=r"1000.*finishing record.*0 of the \d+ records"):
        await replay(sports_client, fid)
    assert sports_emulator.requests["live.actions"] == FAST.max_retries + 1


async def test_a_clean_close_mid_fixture_reconnects_at_the_position(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fid, rest = await completed(sports_client)
    sports_emulator.faults.live("close_clean", after=53)
    got = await replay(sports_client, fid)
    assert unseq(got) == unseq(rest) and sports_emulator.requests["live.actions"] == 2


async def test_a_clean_close_of_a_fixture_in_play_is_not_its_end(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fid = await fixture_id(sports_client, "live")
    sports_emulator.faults.live("close_clean", times=None)
    with pytest.raises(TransportError, match=r"status Live.*not over"):
        async with sports_client.live.actions("basketball", fid, idle_timeout=IDLE) as feed:
            async for _ in feed:
                pass
    assert not feed.finished and feed.ended is None


async def test_a_statistics_feed_needs_its_finished_packet(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fid, _ = await completed(sports_client)
    sports_emulator.faults.live("close_clean", feed="statistics", times=None)
    with pytest.raises(TransportError, match="finished statistics packet"):
        await replay(sports_client, fid, "statistics")
    sports_emulator.faults.clear()
    sports_emulator.faults.live("close_clean", feed="statistics", after=4)
    packets = await replay(sports_client, fid, "statistics")
    assert packets[-1].finished and len(packets) > 8


# ---------------------------------------------------------------------- ends the service confirms


async def test_a_postponed_fixture_ends_with_the_service_s_word(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fid = await fixture_id(sports_client, "postponed", "soccer")
    for kind in ("actions", "statistics"):
        open_feed = (
            sports_client.live.actions if kind == "actions" else sports_client.live.statistics
        )
        async with open_feed("soccer", fid, idle_timeout=IDLE) as feed:
            assert [r async for r in feed] == []
        assert not feed.finished
        assert feed.ended is not None and "Postponed" in feed.ended


async def test_a_resume_past_the_end_ends_after_one_question(
    sports_emulator: Emulator, sports_client: Client
) -> None:
    fid, rest = await completed(sports_client)
    before = sports_emulator.requests.copy()
    async with sports_client.live.actions("basketball", fid, start_position=len(rest)) as feed:
        assert [a async for a in feed] == []
    assert feed.ended is not None and f"all {len(rest)} records" in feed.ended
    # One connection, then fixtures.get and the actions list: asked once (the listing's
    # read-ahead of fixture_id may still be counting its pages).
    asked = {k: v for k, v in (sports_emulator.requests - before).items() if k != "fixtures"}
    assert asked == {"live.actions": 1, "fixture": 1, "actions": 1}


# ---------------------------------------------------------------------- random mixes


MIX = ("close_clean", "close", "drop", "stall", "duplicate", "reorder")


@pytest.mark.parametrize("seed", range(12))
async def test_random_fault_mixes_yield_the_rest_timeline_or_raise(seed: int) -> None:
    """Clean closes on accept and mid-fixture, mixed with the other faults at random: every
    feed is the whole REST timeline, in order, once, or an error; never a short feed."""
    rng = random.Random(seed)
    assert set(MIX) <= set(LIVE_KINDS)
    async with Emulator(live_heartbeat=HEARTBEAT, live_dialect=DIALECTS[seed % 3]) as emu:
        async with emu.client(retry=FAST) as client:
            fid, rest = await completed(client)
            n = len(rest)
            forever = rng.random() < 0.25
            faults = emu.faults
            faults.live("close_clean", times=None if forever else rng.randint(1, 3))
            faults.live("close_clean", after=rng.randint(1, n - 1), times=rng.randint(1, 3))
            for _ in range(rng.randint(0, 3)):
                kind = rng.choice(MIX)
                faults.live(kind, after=rng.randint(0, n - 1), skip=rng.randint(0, 2))
            if rng.random() < 0.5:  # one fault a packet, several on one connection
                kinds = tuple(k for k in MIX if k != "close")
                faults.live_storm(rng.uniform(1, 4) / n, seed=seed, kinds=kinds, per_packet=True)
            else:
                faults.live_storm(rng.uniform(0.3, 0.8), seed=seed, kinds=MIX, max_after=n - 1)
            got: list[Any] = []
            try:
                async with client.live.actions(
                    "basketball", fid, replay="fast", idle_timeout=IDLE
                ) as feed:
                    async for a in feed:
                        got.append(a)
            except (TransportError, TimeoutError):
                assert not feed.finished and len(got) == feed.position < n
                assert unseq(got) == unseq(rest[: len(got)])
                raised = True
            else:
                assert feed.finished and unseq(got) == unseq(rest)
                raised = False
            assert feed.ended is None
            assert faults.injected["live.close_clean"] >= 2 or forever
            assert raised or not forever
        await closed(emu)
