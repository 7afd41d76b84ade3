"""The pacer's turns on a clock the test holds: the first goes at once, the next waits
exactly one interval, and the settings it was built with are the ones it keeps."""

from __future__ import annotations

import asyncio

import pytest

from asyncsports._http.ratelimit import MARGIN, Pacer, spacing, turn


def test_the_pacer_keeps_its_rate_and_its_margin() -> None:
    pacer = Pacer(4.0, margin=0.5)
    assert pacer.rate == 4.0
    assert pacer.interval == pytest.approx(1.5 / 4.0)
    assert Pacer(4.0).interval == pytest.approx((1 + MARGIN) / 4.0) == spacing(4.0)


async def test_the_first_turn_goes_at_once_and_the_next_one_interval_later() -> None:
    now = 1000.0
    pacer = Pacer(10.0, margin=0.0, clock=lambda: now)
    assert pacer.next_turn == float("-inf")
    # A pacer that has never given a turn gives the first at the clock's reading.
    await asyncio.wait_for(pacer.wait(), 5)
    assert pacer.next_turn == pytest.approx(now + 0.1)


async def test_a_turn_in_the_future_sleeps_the_difference_only() -> None:
    slept: list[float] = []
    real_sleep = asyncio.sleep

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        await real_sleep(0)

    now = 1000.0
    pacer = Pacer(10.0, margin=0.0, clock=lambda: now)
    await asyncio.wait_for(pacer.wait(), 5)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(asyncio, "sleep", sleep)
        await asyncio.wait_for(pacer.wait(), 5)
    assert slept == [pytest.approx(0.1)]
    assert pacer.next_turn == pytest.approx(now + 0.2)


def test_a_turn_due_now_goes_now() -> None:
    assert turn(5.0, 5.0, 1.0) == (5.0, 6.0)
    assert turn(4.0, 5.0, 1.0) == (5.0, 6.0)
    assert turn(6.0, 5.0, 1.0) == (6.0, 7.0)
