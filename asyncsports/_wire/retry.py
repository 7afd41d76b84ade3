"""When to retry a request and how long to wait: pure decisions, no I/O.

One call (a whole body, a streamed body resumed after it broke off, later a websocket
reconnect) is one :class:`Call`: its attempts, its retries and its deadline. After each
failed attempt the session describes what happened as an :class:`Outcome` and asks
:func:`decide`, which answers with a :class:`Decision`: retry after so many seconds
(and whether the whole client pauses), refresh the token and try at once, or raise.

Backoff is exponential with full jitter (``uniform(0, min(cap, base * 2**n))``), unless
the server said when to come back: a ``Retry-After`` of seconds or an HTTP date is then
honoured up to ``max_retry_after``.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Literal

from asyncsports._wire.clock import http_date

__all__ = [
    "RETRY_STATUSES",
    "Call",
    "Decision",
    "Outcome",
    "RetryPolicy",
    "decide",
    "parse_retry_after",
]

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
"""Statuses worth another attempt. 400, 401, 403 and 404 never are."""


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date), or None.

    ``now`` is the current Unix time, used for the date form. A negative delay, a date
    in the past, NaN or infinity is None: the normal backoff applies, so that a server
    cannot turn the retries into a loop with no wait.
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        when = http_date(text)
        if when is None:
            return None
        seconds = when - now
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return seconds


def _finite(name: str, value: float, *, low: float = 0.0) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name}: expected a number, got {type(value).__name__}")
    if not math.isfinite(value) or value < low:
        raise ValueError(f"{name}: expected a finite number >= {low:g}, got {value!r}")


@dataclass(frozen=True)
class RetryPolicy:
    """How many times to retry and how long to wait before each retry.

    ``max_retries`` retries follow the first attempt. ``base`` and ``cap`` shape the
    exponential backoff; ``max_retry_after`` bounds a server's ``Retry-After``: a longer
    demand is not waited for, the error is raised instead.
    """

    max_retries: int = 3
    base: float = 0.5
    cap: float = 30.0
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        if isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int):
            raise TypeError(f"max_retries: expected an int, got {self.max_retries!r}")
        if self.max_retries < 0:
            raise ValueError(f"max_retries: must be >= 0, got {self.max_retries}")
        _finite("base", self.base)
        _finite("cap", self.cap)
        _finite("max_retry_after", self.max_retry_after)

    def backoff(self, retry: int, rng: random.Random | None = None) -> float:
        """Full-jitter delay before retry number ``retry`` (0 for the first retry)."""
        ceiling = min(self.cap, self.base * (2.0 ** min(retry, 62)))
        return (rng or random).uniform(0.0, ceiling)

    def delay(
        self,
        retry: int,
        retry_after: float | None = None,
        rng: random.Random | None = None,
    ) -> float | None:
        """Seconds to wait before retry number ``retry``, or None when not to retry.

        None when the retries are used up or the server asks for longer than
        ``max_retry_after``.
        """
        if retry >= self.max_retries:
            return None
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        return self.backoff(retry, rng)


class Call:
    """The state of one call across its attempts: attempts sent, retries, refresh, deadline.

    ``deadline`` is on the clock passed as ``now`` (the session uses ``time.monotonic``);
    None means no deadline.
    """

    __slots__ = ("attempts", "deadline", "refreshed", "resent", "retries")

    def __init__(self, total: float | None = None, now: float = 0.0) -> None:
        self.attempts = 0
        self.retries = 0
        self.refreshed = False
        self.resent = False
        self.deadline = None if total is None else now + total

    def left(self, now: float) -> float | None:
        """Seconds left before the deadline at ``now``, or None without one."""
        return None if self.deadline is None else max(0.0, self.deadline - now)

    def reset(self) -> None:
        """Start the budget afresh (a live connection that delivered a record earns it)."""
        self.retries = 0
        self.refreshed = False
        self.resent = False

    def apply(self, decision: Decision) -> None:
        """Count ``decision`` against the budget (a retry, or the one token refresh)."""
        if decision.action == "retry":
            self.retries += 1
        elif decision.action == "refresh":
            self.refreshed = True
        elif decision.action == "resend":
            self.resent = True


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one failed attempt came to.

    ``status`` is the HTTP status of an error response, None when no complete answer
    came (a connection failure, a timeout, a body that broke off). ``retry_after`` is
    the server's ``Retry-After`` in seconds. ``final`` marks a failure no retry can mend
    (a bad certificate or address, a body over the size limit). ``stale`` marks a
    pooled connection the server had closed before the request reached it: sent again
    at once, once per call, as RFC 9112 allows for a GET.
    """

    status: int | None = None
    retry_after: float | None = None
    final: bool = False
    stale: bool = False


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do after a failed attempt.

    ``"retry"`` after ``wait`` seconds (with ``pause`` the whole client waits, not only
    this call: the server said 429); ``"refresh"`` the token and try again at once;
    ``"resend"`` at once on a fresh connection (the pooled one was stale); ``"raise"``
    the attempt's error.
    """

    action: Literal["retry", "refresh", "resend", "raise"]
    wait: float = 0.0
    pause: bool = False


RAISE = Decision("raise")
REFRESH = Decision("refresh")
RESEND = Decision("resend")


def decide(
    outcome: Outcome,
    call: Call,
    policy: RetryPolicy,
    *,
    now: float,
    refreshable: bool = False,
    rng: random.Random | None = None,
) -> Decision:
    """The next step of ``call`` after ``outcome``, under ``policy``, at time ``now``.

    A 401 refreshes a refreshable token once per call; a stale pooled connection is
    replaced at once, once per call (neither counts as a retry). Statuses outside
    :data:`RETRY_STATUSES` and final failures raise. Otherwise the call retries after
    the policy's delay, unless its retries are used up or the wait would pass its deadline.
    """
    status = outcome.status
    if status == 401 and refreshable and not call.refreshed:
        return REFRESH
    if outcome.stale and not call.resent:
        return RESEND
    if outcome.final or (status is not None and status not in RETRY_STATUSES):
        return RAISE
    wait = policy.delay(call.retries, outcome.retry_after, rng)
    if wait is None:
        return RAISE
    left = call.left(now)
    if left is not None and wait >= left:
        return RAISE
    return Decision("retry", wait, pause=status == 429)
