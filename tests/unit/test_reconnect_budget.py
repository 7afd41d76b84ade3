"""A live feed's reconnect decisions: each connection counted, the jitter drawn from the
caller's random source, and the deadline read at the caller's time."""

from __future__ import annotations

import random

from asyncsports._wire.live.reconnect import ConnectionEnd, reconnect
from asyncsports._wire.retry import Call, RetryPolicy

POLICY = RetryPolicy(max_retries=5, base=1.0, cap=8.0)


def test_every_connection_is_an_attempt() -> None:
    call = Call()
    for end in (ConnectionEnd(), ConnectionEnd(delivered=2), ConnectionEnd()):
        reconnect(end, call, POLICY, now=0.0)
    assert call.attempts == 3


def test_the_wait_is_drawn_from_the_callers_random_source() -> None:
    for end in (ConnectionEnd(), ConnectionEnd(delivered=1)):
        expected = random.Random(7).uniform(0.0, 1.0)
        decision = reconnect(end, Call(), POLICY, now=0.0, rng=random.Random(7))
        assert (decision.action, decision.wait) == ("retry", expected)


def test_a_connection_that_delivered_still_meets_the_deadline() -> None:
    call = Call(total=10.0, now=0.0)
    assert reconnect(ConnectionEnd(delivered=1), call, POLICY, now=5.0).action == "retry"
    # Past the deadline: no time is left for any wait.
    assert reconnect(ConnectionEnd(delivered=1), call, POLICY, now=10.0).action == "raise"
