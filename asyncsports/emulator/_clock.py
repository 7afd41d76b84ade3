"""The emulator's clock: frozen unless the caller advances it (or asks it to run)."""

from __future__ import annotations

import datetime as dt
import math
import time
from collections.abc import Callable

__all__ = ["Clock"]


class Clock:
    """Time as the emulator sees it.

    Frozen by default, so that tests decide when things happen: ``advance(60)`` moves a
    minute on, and fixtures, timelines, statistics and stream events follow. With
    ``running=True`` it also follows the wall clock from ``start`` (the standalone server);
    ``speed=X`` runs it X times faster than the wall clock (0: frozen), and
    :attr:`speed` can be changed at any moment without a jump.
    """

    def __init__(
        self, start: dt.datetime, *, running: bool = False, speed: float | None = None
    ) -> None:
        if start.tzinfo is None:
            raise ValueError("start must be timezone-aware")
        self._base = start.timestamp()
        self._offset = 0.0
        self._speed = _checked(speed) if speed is not None else 1.0 if running else 0.0
        self._t0 = time.monotonic()
        self._watchers: list[Callable[[], None]] = []

    @property
    def running(self) -> bool:
        """Whether the clock follows the wall clock between advances (at any speed > 0)."""
        return self._speed > 0

    @property
    def speed(self) -> float:
        """Clock seconds per wall-clock second: 1 real time, 0 frozen, 60 a minute a second."""
        return self._speed

    @speed.setter
    def speed(self, value: float) -> None:
        value = _checked(value)
        # Fold the time run so far into the offset: a new speed never makes the clock jump.
        mono = time.monotonic()
        self._offset += self._speed * (mono - self._t0)
        self._t0 = mono
        self._speed = value
        self._notify()

    def time(self) -> float:
        """Seconds since the Unix epoch (what ``time.time()`` would say)."""
        t = self._base + self._offset
        if self._speed:
            t += self._speed * (time.monotonic() - self._t0)
        return t

    def until(self, when: float) -> float | None:
        """Wall-clock seconds until :meth:`time` reads ``when`` (0 if past; None if frozen).

        Only a guess when someone moves the clock in between: watchers hear of that.
        """
        left = when - self.time()
        if left <= 0:
            return 0.0
        return left / self._speed if self._speed else None

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
        """Call ``callback()`` after each :meth:`advance`, :meth:`set` or new speed; returns the undo.

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


def _checked(speed: float) -> float:
    if isinstance(speed, bool) or not isinstance(speed, int | float):
        raise TypeError(f"speed: expected a number, got {speed!r}")
    if not math.isfinite(speed) or speed < 0:
        raise ValueError(f"speed: must be a finite number >= 0 (0 freezes), got {speed}")
    return float(speed)
