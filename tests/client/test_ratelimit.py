"""The client's rate limit: GCRA with no burst, checked as arithmetic and counted at the server."""

from __future__ import annotations

import asyncio
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.ratelimit import Arrivals, busiest

from asyncsports import RetryPolicy
from asyncsports._http.ratelimit import MARGIN, Pacer, spacing, turn
from asyncsports.emulator import Emulator

gaps = st.lists(st.floats(min_value=0.0, max_value=2.0, allow_nan=False), max_size=120)


def grants(rate: float, asked: list[float]) -> list[float]:
    """When each request asked for at ``asked`` (ascending) may go."""
    tat, out, interval = -math.inf, [], spacing(rate)
    for now in asked:
        at, tat = turn(tat, now, interval)
        out.append(at)
    return out


def ascending(deltas: list[float]) -> list[float]:
    t, out = 0.0, []
    for d in deltas:
        t += d
        out.append(t)
    return out


@given(st.integers(min_value=1, max_value=200), gaps)
def test_no_sliding_second_ever_holds_more_than_the_rate(rate: int, deltas: list[float]) -> None:
    assert busiest(grants(rate, ascending(deltas))) <= rate


@given(
    st.floats(min_value=0.05, max_value=100.0),
    gaps,
    st.floats(min_value=0.01, max_value=10.0),
)
def test_any_window_holds_at_most_its_share(rate: float, deltas: list[float], w: float) -> None:
    # Non-integer rates and other windows: the spacing bounds every window.
    bound = math.floor(w / spacing(rate) + 1e-9) + 1
    assert busiest(grants(rate, ascending(deltas)), w) <= bound


@given(st.floats(min_value=0.05, max_value=100.0), gaps)
def test_a_request_goes_as_soon_as_its_turn_comes(rate: float, deltas: list[float]) -> None:
    asked = ascending(deltas)
    went = grants(rate, asked)
    interval = spacing(rate)
    for i, (now, at) in enumerate(zip(asked, went, strict=True)):
        # Never early, never held longer than the spacing after the one before requires.
        earliest = now if i == 0 else max(now, went[i - 1] + interval)
        assert at == earliest


def test_a_steady_pace_below_the_rate_never_waits() -> None:
    asked = [i * spacing(5) * 1.5 for i in range(50)]
    assert grants(5, asked) == asked


def test_spacing_refuses_nonsense() -> None:
    assert spacing(5) == pytest.approx((1 + MARGIN) / 5)
    for bad in (0, -1, math.inf, math.nan):
        with pytest.raises(ValueError, match="rate"):
            spacing(bad)


async def test_a_cancelled_waiter_gives_its_turn_back() -> None:
    now = [100.0]
    pacer = Pacer(1, clock=lambda: now[0])
    await pacer.wait()  # the first goes at once
    waiting = asyncio.create_task(pacer.wait())
    await asyncio.sleep(0)
    assert pacer.next_turn == pytest.approx(100.0 + 2 * spacing(1))
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert pacer.next_turn == pytest.approx(100.0 + spacing(1))


@pytest.mark.parametrize("rate", [20])
@pytest.mark.slow
async def test_a_burst_never_draws_a_429_nor_passes_the_rate_at_the_server(rate: int) -> None:
    arrivals = Arrivals()
    no_retry = RetryPolicy(max_retries=0)
    async with (
        Emulator(rate_limit=rate, rate_clock=arrivals) as emu,
        emu.client(rate_limit=rate, retry=no_retry) as client,
    ):
        async for first in client.fixtures.list("basketball", page_size=1):
            fixture_id = first.id
            break
        burst = [client.fixtures.get("basketball", fixture_id) for _ in range(int(1.5 * rate))]
        got = await asyncio.gather(*burst)
        assert all(f.id == fixture_id for f in got)
        assert emu.faults.injected["rate_limit"] == 0
        served = sum(emu.requests.values())
    # Every request was counted at the server, the burst and the listing's page or two.
    assert len(arrivals.seen) == served > int(1.5 * rate)
    assert busiest(arrivals.seen) <= rate


@pytest.mark.slow
async def test_stream_credentials_are_signed_when_the_turn_comes_not_before() -> None:
    # The emulator's clock runs a minute a second: a token signed when the request joined
    # the queue would be a minute old (over its 30 s) by the time its turn came.
    async with Emulator(speed=60) as emu, emu.client(rate_limit=1) as client:
        lists = [client.events.list(live=True).collect() for _ in range(3)]
        answers = await asyncio.gather(*lists)
    assert all(answers) and emu.requests["events"] == 3
