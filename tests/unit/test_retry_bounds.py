"""The retry policy's argument checks and a call's budget reset, to the message.

Each test here kills a mutant that the suite let live (benchmarks/results/mutation.md):
a check loosened from ``or`` to ``and``, a message dropped, a flag not cleared.
"""

from __future__ import annotations

import random

import pytest

from asyncsports._wire.retry import REFRESH, RESEND, Call, Decision, Outcome, RetryPolicy, decide


@pytest.mark.parametrize("name", ["base", "cap", "max_retry_after"])
def test_a_bool_is_not_a_number_of_seconds(name: str) -> None:
    with pytest.raises(TypeError, match=f"^{name}: expected a number, got bool$"):
        RetryPolicy(**{name: True})


@pytest.mark.parametrize("name", ["base", "cap", "max_retry_after"])
def test_a_string_of_seconds_is_refused_by_name(name: str) -> None:
    with pytest.raises(TypeError, match=f"^{name}: expected a number, got str$"):
        RetryPolicy(**{name: "1"})


@pytest.mark.parametrize("value", [True, 1.0, "3"])
def test_max_retries_takes_an_int_only(value: object) -> None:
    with pytest.raises(TypeError, match=rf"^max_retries: expected an int, got {value!r}$"):
        RetryPolicy(max_retries=value)  # type: ignore[arg-type]


def test_a_reset_clears_the_refresh_and_the_resend() -> None:
    call = Call()
    call.apply(REFRESH)
    call.apply(RESEND)
    call.apply(Decision("retry", 1.0))
    assert (call.retries, call.refreshed, call.resent) == (1, True, True)
    call.reset()
    assert (call.retries, call.refreshed, call.resent) == (0, False, False)
    # Not merely falsy: the flags stay bools (the session and the traces read them).
    assert call.refreshed is False and call.resent is False


def test_a_negative_retry_count_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"^max_retries: must be >= 0, got -1$"):
        RetryPolicy(max_retries=-1)


def test_a_new_call_has_spent_nothing() -> None:
    call = Call(total=5.0)
    assert (call.attempts, call.retries, call.deadline) == (0, 0, 5.0)
    assert call.refreshed is False and call.resent is False


def test_a_retry_after_of_exactly_the_bound_is_honoured() -> None:
    policy = RetryPolicy(max_retry_after=10.0)
    assert policy.delay(0, retry_after=10.0) == 10.0
    assert policy.delay(0, retry_after=10.5) is None


def test_the_backoff_is_drawn_from_the_callers_random_source() -> None:
    policy = RetryPolicy(base=1.0, cap=1.0)
    expected = random.Random(3).uniform(0.0, 1.0)
    assert policy.delay(0, rng=random.Random(3)) == expected
    decision = decide(Outcome(503), Call(), policy, now=0.0, rng=random.Random(3))
    assert decision == Decision("retry", expected)


def test_a_401_is_refreshed_only_when_the_caller_says_it_can_be() -> None:
    assert decide(Outcome(401), Call(), RetryPolicy(), now=0.0) == Decision("raise")
    assert decide(Outcome(401), Call(), RetryPolicy(), now=0.0, refreshable=True) == REFRESH


def test_a_stale_connection_is_resent_once_then_retried() -> None:
    call = Call()
    assert decide(Outcome(stale=True), call, RetryPolicy(), now=0.0) == RESEND
    call.apply(RESEND)
    assert decide(Outcome(stale=True), call, RetryPolicy(), now=0.0).action == "retry"


def test_a_wait_that_would_end_at_the_deadline_is_not_taken() -> None:
    call = Call(total=5.0, now=0.0)
    assert decide(Outcome(503, retry_after=5.0), call, RetryPolicy(), now=0.0).action == "raise"
    assert decide(Outcome(503, retry_after=4.9), call, RetryPolicy(), now=0.0).action == "retry"
