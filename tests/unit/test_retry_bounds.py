"""The retry policy's argument checks and a call's budget reset, to the message.

Each test here kills a mutant that the suite let live (benchmarks/results/mutation.md):
a check loosened from ``or`` to ``and``, a message dropped, a flag not cleared.
"""

from __future__ import annotations

import pytest

from asyncsports._wire.retry import REFRESH, RESEND, Call, Decision, RetryPolicy


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
