import email.utils
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from asyncsports._wire.retry import (
    RETRY_STATUSES,
    Call,
    Decision,
    Outcome,
    RetryPolicy,
    decide,
    parse_retry_after,
)


def test_retry_after_seconds_and_http_date() -> None:
    assert parse_retry_after("3", now=0) == 3.0
    assert parse_retry_after(" 1.5 ", now=0) == 1.5
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 20, usegmt=True)
    assert parse_retry_after(date, now=now) == pytest.approx(20, abs=1)
    # A date in the past or a negative delay would retry with no wait at all: the
    # normal backoff applies instead.
    past = email.utils.formatdate(now - 100, usegmt=True)
    assert parse_retry_after(past, now=now) is None
    assert parse_retry_after("-5", now=now) is None
    assert parse_retry_after("0", now=now) == 0.0


@pytest.mark.parametrize("value", [None, "", "soon", "nan", "inf", "Mon, 99 Foo 2020"])
def test_retry_after_garbage_is_ignored(value: str | None) -> None:
    assert parse_retry_after(value, now=0) is None


def test_statuses_that_are_retried() -> None:
    assert {408, 429, 500, 502, 503, 504} == RETRY_STATUSES
    assert not {400, 401, 403, 404} & RETRY_STATUSES


@given(
    retry=st.integers(0, 200),
    base=st.floats(0, 10),
    cap=st.floats(0, 100),
    seed=st.integers(),
)
def test_backoff_is_full_jitter_within_the_capped_exponential(
    retry: int, base: float, cap: float, seed: int
) -> None:
    policy = RetryPolicy(max_retries=1000, base=base, cap=cap)
    delay = policy.delay(retry, rng=random.Random(seed))
    assert delay is not None
    assert 0.0 <= delay <= min(cap, base * 2.0 ** min(retry, 62))


@given(retry=st.integers(0, 10), max_retries=st.integers(0, 10))
def test_no_delay_once_retries_are_used_up(retry: int, max_retries: int) -> None:
    delay = RetryPolicy(max_retries=max_retries).delay(retry)
    assert (delay is None) == (retry >= max_retries)


def test_retry_after_is_honoured_up_to_the_ceiling() -> None:
    policy = RetryPolicy(max_retry_after=10)
    assert policy.delay(0, retry_after=7) == 7
    assert policy.delay(0, retry_after=11) is None


def test_full_jitter_spreads_the_delays() -> None:
    rng = random.Random(1)
    delays = {
        round(RetryPolicy(max_retries=9, base=1, cap=8).delay(3, rng=rng) or 0, 3)
        for _ in range(50)
    }
    assert len(delays) > 40
    with pytest.raises(ValueError):
        RetryPolicy(max_retries=-1)


# decide(): the whole retry logic as a pure function of outcome, call state and policy.

POLICY = RetryPolicy(max_retries=3, base=1.0, cap=8.0, max_retry_after=60.0)


def test_decide_retries_a_retryable_status_within_the_backoff() -> None:
    call = Call()
    d = decide(Outcome(503), call, POLICY, now=0.0, rng=random.Random(0))
    assert d.action == "retry" and 0.0 <= d.wait <= 1.0 and not d.pause


@pytest.mark.parametrize("status", [400, 403, 404, 301, 418])
def test_decide_raises_on_statuses_that_are_not_retried(status: int) -> None:
    assert decide(Outcome(status), Call(), POLICY, now=0.0) == Decision("raise")


def test_decide_refreshes_a_refreshable_token_once_per_call() -> None:
    call = Call()
    first = decide(Outcome(401), call, POLICY, now=0.0, refreshable=True)
    assert first == Decision("refresh")
    call.apply(first)
    assert call.refreshed and call.retries == 0  # a refresh is not a retry
    assert decide(Outcome(401), call, POLICY, now=0.0, refreshable=True).action == "raise"
    assert decide(Outcome(401), Call(), POLICY, now=0.0, refreshable=False).action == "raise"


def test_decide_pauses_the_client_after_a_429_for_its_retry_after() -> None:
    d = decide(Outcome(429, retry_after=7.0), Call(), POLICY, now=0.0)
    assert d == Decision("retry", 7.0, pause=True)
    assert decide(Outcome(429, retry_after=61.0), Call(), POLICY, now=0.0).action == "raise"


def test_decide_never_retries_a_final_failure() -> None:
    assert decide(Outcome(final=True), Call(), POLICY, now=0.0).action == "raise"


def test_decide_retries_a_connection_failure_or_a_broken_body() -> None:
    assert decide(Outcome(), Call(), POLICY, now=0.0).action == "retry"


def test_decide_gives_up_when_the_wait_would_pass_the_deadline() -> None:
    call = Call(total=5.0, now=100.0)
    assert decide(Outcome(503, retry_after=4.0), call, POLICY, now=100.0).action == "retry"
    assert decide(Outcome(503, retry_after=4.0), call, POLICY, now=101.5).action == "raise"
    assert decide(Outcome(), call, POLICY, now=105.0).action == "raise"  # nothing left


@given(
    statuses=st.lists(st.sampled_from([408, 429, 500, 502, 503, 504]), max_size=20),
    max_retries=st.integers(0, 6),
    seed=st.integers(),
)
def test_a_call_retries_at_most_max_retries_times(
    statuses: list[int], max_retries: int, seed: int
) -> None:
    policy = RetryPolicy(max_retries=max_retries, base=0.1, cap=1.0)
    call, rng, retried = Call(), random.Random(seed), 0
    for status in statuses:
        d = decide(Outcome(status), call, policy, now=0.0, rng=rng)
        if d.action == "raise":
            break
        assert d.action == "retry" and d.wait >= 0
        call.apply(d)
        retried += 1
    assert retried == min(len(statuses), max_retries) == call.retries


@pytest.mark.parametrize(
    ("kw", "name"),
    [
        ({"base": float("nan")}, "base"),
        ({"cap": -1}, "cap"),
        ({"max_retry_after": float("inf")}, "max_retry_after"),
    ],
)
def test_a_policy_refuses_numbers_that_are_not_finite_and_positive(
    kw: dict[str, float], name: str
) -> None:
    with pytest.raises(ValueError, match=name):
        RetryPolicy(**kw)  # type: ignore[arg-type]
