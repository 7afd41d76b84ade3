"""Rates as a server sees them: the busiest sliding window of arrivals, and a clock that
notes each time the emulator's limiter reads it (one reading a request)."""

from __future__ import annotations

import bisect

from asyncsports.emulator import DEFAULT_NOW, Clock


def busiest(times: list[float], window: float = 1.0) -> int:
    """The most of ``times`` (ascending) in any half-open window ``[t, t + window)``."""
    return max((bisect.bisect_left(times, t + window) - i for i, t in enumerate(times)), default=0)


class Arrivals(Clock):
    """A running clock that notes each reading: the emulator's limiter reads it once a request."""

    def __init__(self) -> None:
        super().__init__(DEFAULT_NOW, running=True)
        self.seen: list[float] = []

    def time(self) -> float:
        t = super().time()
        self.seen.append(t)
        return t
