"""The retry policy's refusals, and the pacer's turn given back on a cancel (or not)."""

from __future__ import annotations

import asyncio

import pytest
from support.wait import until

from asyncsports._http.ratelimit import Pacer
from asyncsports._wire.retry import RetryPolicy


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"max_retries": -1}, ValueError, "max_retries: must be >= 0, got -1"),
        ({"max_retries": 1.0}, TypeError, "max_retries: expected an int"),
        ({"max_retries": True}, TypeError, "max_retries: expected an int"),
        ({"base": "1"}, TypeError, "base: expected a number, got str"),
        ({"cap": True}, TypeError, "cap: expected a number, got bool"),
        ({"max_retry_after": float("nan")}, ValueError, "max_retry_after: expected a finite"),
        ({"base": -0.5}, ValueError, "base: expected a finite number >= 0"),
    ],
)
def test_a_policy_refuses_what_is_not_a_count_or_a_finite_number(
    kwargs: dict[str, object], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message.replace("(", r"\(")):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]


async def test_a_cancelled_caller_gives_its_turn_back_only_when_it_was_the_last() -> None:
    # The clock stands still: each caller's turn is a whole interval after the previous one.
    pacer = Pacer(1.0, clock=lambda: 0.0)
    await pacer.wait()  # the first goes at once
    step = pacer.interval
    second = asyncio.create_task(pacer.wait())
    await until(lambda: pacer.next_turn == 2 * step)
    third = asyncio.create_task(pacer.wait())
    await until(lambda: pacer.next_turn == 3 * step)
    # The second's turn is followed by the third's: it cannot be given back.
    second.cancel()
    with pytest.raises(asyncio.CancelledError):
        await second
    assert pacer.next_turn == 3 * step
    # The third's is the last reserved: the next caller may take it.
    third.cancel()
    with pytest.raises(asyncio.CancelledError):
        await third
    assert pacer.next_turn == 2 * step
