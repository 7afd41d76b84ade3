"""The client's rate limit: GCRA with no burst, as a pure step and a small async pacer.

``rate_limit=R`` means at most R requests in any one-second window, sliding, which is
how a server that counts requests per second sees them. A leaky bucket of capacity R
(what aiolimiter does) lets R go at once and R more as it drains, about 2R in one
sliding second; the generic cell rate algorithm with no burst tolerance instead spaces
requests ``interval`` apart, so R + 1 requests never fit in one second.

:func:`turn` is the whole algorithm; :class:`Pacer` only reads the clock and sleeps.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["MARGIN", "Limiter", "Pacer", "spacing", "turn"]

MARGIN = 0.02
"""Seconds added to each one-second window: requests go ``(1 + MARGIN) / R`` apart.

The client counts when it sends; the server counts when a request arrives, and one
request can take a few milliseconds longer than another to get there (a new connection,
a busy loop). 20 ms a window absorbs that at the cost of 2% of the budget.
"""


def spacing(rate: float, margin: float = MARGIN) -> float:
    """Seconds between two requests at ``rate`` requests per second (> 0)."""
    if not math.isfinite(rate) or rate <= 0:
        raise ValueError(f"rate: must be a finite number > 0, got {rate}")
    return (1.0 + margin) / rate


def turn(tat: float, now: float, interval: float) -> tuple[float, float]:
    """One GCRA step with no burst: ``(when this request may go, the next tat)``.

    ``tat`` is the theoretical arrival time, the earliest the next request may go
    (start with ``-inf``). A request asked for at ``now`` goes at ``max(tat, now)``,
    and the one after it ``interval`` later.
    """
    at = tat if tat > now else now
    return at, at + interval


class Limiter(Protocol):
    """What the session asks of a rate limiter: a turn per request, and a pause to share."""

    async def wait(self) -> None:
        """Wait for the caller's turn."""

    async def pause(self, seconds: float) -> None:
        """Hold the limiter's other users for ``seconds`` after a 429 (the session holds its own)."""


class Pacer:
    """Gives each caller its turn, ``interval`` apart, first come first served.

    ``await pacer.wait()`` reserves the next turn and sleeps until it; a caller
    cancelled while waiting gives its turn back when no later one was reserved.
    """

    def __init__(
        self, rate: float, *, margin: float = MARGIN, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = rate
        self.interval = spacing(rate, margin)
        self._clock = clock
        self._tat = -math.inf

    @property
    def next_turn(self) -> float:
        """The clock reading from which the next request may go (-inf: now)."""
        return self._tat

    async def wait(self) -> None:
        """Wait for this caller's turn."""
        now = self._clock()
        at, self._tat = turn(self._tat, now, self.interval)
        if at <= now:
            return
        try:
            await asyncio.sleep(at - now)
        except asyncio.CancelledError:
            if self._tat == at + self.interval:
                self._tat = at
            raise

    async def pause(self, seconds: float) -> None:
        """Nothing to pass on: one client's pause is its session's own."""
