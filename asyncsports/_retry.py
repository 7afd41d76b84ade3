"""When to retry a request and how long to wait: a pure policy, no I/O.

Exponential backoff with full jitter (delay = uniform(0, min(cap, base * 2**n))), unless
the server said when to come back: a ``Retry-After`` of seconds or an HTTP date is then
honoured up to ``max_retry_after``.
"""

from __future__ import annotations

import email.utils
import random
from dataclasses import dataclass

__all__ = ["RETRY_STATUSES", "RetryPolicy", "parse_retry_after"]

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
"""Statuses worth another attempt. 400, 401, 403 and 404 never are."""


def parse_retry_after(value: str | None, now: float) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP date), or None.

    ``now`` is the current Unix time, used for the date form. Negative waits become 0.
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        seconds = when.timestamp() - now
    if seconds != seconds or seconds == float("inf"):  # NaN or infinite
        return None
    return max(0.0, seconds)


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
        if self.max_retries < 0:
            raise ValueError(f"max_retries: must be >= 0, got {self.max_retries}")
        if self.base < 0 or self.cap < 0 or self.max_retry_after < 0:
            raise ValueError("base, cap and max_retry_after must be >= 0")

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
