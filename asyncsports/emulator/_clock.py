"""The emulator's clock: frozen unless the caller advances it (or asks it to run)."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable

__all__ = ["Clock"]


class Clock:
    """Time as the emulator sees it.

    Frozen by default, so that tests decide when things happen: ``advance(60)`` moves a
    minute on, and fixtures, timelines, statistics and stream events follow. With
    ``running=True`` it also follows the wall clock from ``start`` (the standalone server).
    """

    def __init__(self, start: dt.datetime, *, running: bool = False) -> None:
        if start.tzinfo is None:
            raise ValueError("start must be timezone-aware")
        self._base = start.timestamp()
        self._offset = 0.0
        self._running = running
        self._t0 = time.monotonic()
        self._watchers: list[Callable[[], None]] = []

    @property
    def running(self) -> bool:
        """Whether the clock follows the wall clock between advances."""
        return self._running

    def time(self) -> float:
        """Seconds since the Unix epoch (what ``time.time()`` would say)."""
        t = self._base + self._offset
        if self._running:
            t += time.monotonic() - self._t0
        return t

    def time_ms(self) -> int:
        """Milliseconds since the Unix epoch."""
        return int(self.time() * 1000)

    def now(self) -> dt.datetime:
        """The current time as an aware UTC datetime."""
        return dt.datetime.fromtimestamp(self.time(), dt.UTC)

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward."""
        if seconds < 0:
            raise ValueError("the clock only moves forward")
        self._offset += seconds
        self._notify()

    def set(self, when: dt.datetime) -> None:
        """Move the clock to ``when`` (aware), forward or back."""
        if when.tzinfo is None:
            raise ValueError("when must be timezone-aware")
        self._offset += when.timestamp() - self.time()
        self._notify()

    def watch(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback()`` after each :meth:`advance` or :meth:`set`; returns the undo.

        The live feeds use it to notice a moved clock at once. The callback runs in the
        caller's thread: one that touches an event loop must hand over thread-safely.
        """
        self._watchers.append(callback)

        def unwatch() -> None:
            if callback in self._watchers:
                self._watchers.remove(callback)

        return unwatch

    def _notify(self) -> None:
        for callback in tuple(self._watchers):
            callback()
