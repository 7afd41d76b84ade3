import email.utils
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from asyncsports._retry import RETRY_STATUSES, RetryPolicy, parse_retry_after


def test_retry_after_seconds_and_http_date() -> None:
    assert parse_retry_after("3", now=0) == 3.0
    assert parse_retry_after(" 1.5 ", now=0) == 1.5
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 20, usegmt=True)
    assert parse_retry_after(date, now=now) == pytest.approx(20, abs=1)
    past = email.utils.formatdate(now - 100, usegmt=True)
    assert parse_retry_after(past, now=now) == 0.0


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
