"""What the mirror follows and when, as pure functions and one pure scheduler (no I/O).

Cadences are seconds of real time (the rate budget is real time, whatever the service's
clock says). The defaults follow the service's advice (api-spec 8) where it gives one and
docs/wire.md "The mirror" where it does not.

Priorities (lower first): live data, then near fixtures and what a fixture's end calls
for, then the rest. The scheduler hands out the due task of the best rank: its priority,
one level better for each near-fixtures cadence it has waited (so nothing starves). The
client's rate limit then spaces the requests, so what the budget cannot cover waits at
the back, and :meth:`Plan.late` says how far behind it is.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from asyncsports._wire import defaults

from ._keys import Key

__all__ = [
    "DEFAULT_EVERY",
    "PRIORITY",
    "Plan",
    "Task",
    "near_window",
    "parse_every",
    "wanted",
    "window",
]

DEFAULT_EVERY = defaults.DEFAULT_EVERY
"""Seconds between two runs of each kind of work (``--every kind=seconds``)."""

PRIORITY: dict[str, int] = {
    "live": 0,
    "events": 1,
    "fixtures": 1,
    "final": 1,
    "standings": 2,
    "window": 2,
    "backlog": 3,
    "squads": 3,
    "snooker": 3,
}
"""Lower goes first: live data, then near fixtures, then the rest."""

_REPEATING = ("live", "fixtures", "window", "events", "squads", "snooker")


def parse_every(items: Iterable[str]) -> dict[str, float]:
    """``["fixtures=10", "squads=3600"]`` as a mapping; ValueError says what is wrong."""
    out: dict[str, float] = {}
    for item in items:
        for part in item.split(","):
            name, sep, value = part.partition("=")
            name = name.strip()
            if not sep or name not in DEFAULT_EVERY:
                raise ValueError(
                    f"--every: expected kind=seconds with kind one of "
                    f"{', '.join(DEFAULT_EVERY)}; got {part!r}"
                )
            try:
                seconds = float(value)
            except ValueError:
                raise ValueError(f"--every {name}: expected seconds, got {value!r}") from None
            if not math.isfinite(seconds) or seconds <= 0:
                raise ValueError(f"--every {name}: must be > 0 seconds, got {value!r}")
            out[name] = seconds
    return out


def window(now: float, back: int, ahead: int) -> tuple[dt.date, dt.date]:
    """The dates (UTC) from ``back`` days before ``now`` (epoch) to ``ahead`` days after."""
    today = dt.datetime.fromtimestamp(now, dt.UTC).date()
    return today - dt.timedelta(days=back), today + dt.timedelta(days=ahead)


def near_window(now: float) -> tuple[dt.date, dt.date]:
    """Yesterday to tomorrow (UTC): the fixtures re-read most often."""
    return window(now, 1, 1)


def wanted(status: str | None, deleted: bool, finished: bool) -> str | None:
    """What a fixture calls for: ``"live"`` (follow its actions), ``"final"`` (read its
    actions and statistics once, it has ended), or None (nothing: not started, deleted,
    or already read in full)."""
    if deleted:
        return None
    s = (status or "").lower()
    if s == "completed":
        return None if finished else "final"
    if s in ("", "scheduled", "postponed"):
        return None
    return "live"  # live, and whatever a service adds between the start and the end


@dataclass(slots=True)
class Task:
    """One piece of work: ``kind`` (a key of :data:`PRIORITY`), its ``args``, and when."""

    key: Key
    kind: str
    args: tuple[str, ...] = ()
    every: float | None = None  # None: once, then dropped
    priority: int = 0
    due: float = 0.0
    started: float = -math.inf  # when its last run started
    ran: int = 0
    running: bool = False
    extra: dict[str, str] = field(default_factory=dict)


class Plan:
    """The tasks and when each is due, on any monotonic clock the caller passes in."""

    def __init__(self, every: Mapping[str, float] | None = None) -> None:
        self.every = {**DEFAULT_EVERY, **(every or {})}
        self.tasks: dict[Key, Task] = {}

    def add(
        self,
        key: Key,
        kind: str,
        args: tuple[str, ...] = (),
        *,
        at: float,
        priority: int | None = None,
    ) -> Task:
        """Schedule ``key`` at ``at`` unless it is already planned (then it is kept)."""
        task = self.tasks.get(key)
        if task is not None:
            return task
        every = self.every.get(kind) if kind in _REPEATING else None
        rank = PRIORITY[kind] if priority is None else priority
        task = Task(key, kind, args, every, rank, at)
        self.tasks[key] = task
        return task

    def drop(self, key: Key) -> None:
        """Forget ``key`` (a run in progress finishes; it is not rescheduled)."""
        self.tasks.pop(key, None)

    def rank(self, task: Task, now: float) -> int:
        """A task's priority now: one level better for each near-fixtures cadence it has
        waited since it was due, so that nothing starves when live work fills the budget."""
        return task.priority - int(max(0.0, now - task.due) / self.every["fixtures"])

    def take(self, now: float) -> Task | None:
        """The due task of the best rank (then the longest due), marked running; None when
        nothing is due."""
        best: Task | None = None
        key = (0, 0.0)
        for t in self.tasks.values():
            if t.running or t.due > now:
                continue
            mine = (self.rank(t, now), t.due)
            if best is None or mine < key:
                best, key = t, mine
        if best is not None:
            best.running, best.started = True, now
        return best

    def finish(self, task: Task, now: float, *, again: float | None = None) -> None:
        """A run of ``task`` ended at ``now``: due again after its cadence (or ``again``
        seconds), or dropped when it runs once."""
        task.running = False
        task.ran += 1
        wait = again if again is not None else task.every
        if wait is None:
            if self.tasks.get(task.key) is task:
                del self.tasks[task.key]
            return
        task.due = now + wait

    def wait(self, now: float) -> float | None:
        """Seconds until the next task not running is due (0: one is); None: none planned."""
        dues = [t.due for t in self.tasks.values() if not t.running]
        return max(0.0, min(dues) - now) if dues else None

    def depth(self, now: float) -> int:
        """Tasks due and waiting for a worker."""
        return sum(1 for t in self.tasks.values() if not t.running and t.due <= now)

    def late(self, now: float) -> list[tuple[Task, float]]:
        """Repeating tasks waiting longer than their own cadence: the budget is too small."""
        return [
            (t, now - t.due)
            for t in self.tasks.values()
            if not t.running and t.every is not None and now - t.due > t.every
        ]

    def running(self) -> int:
        """Tasks being run now."""
        return sum(1 for t in self.tasks.values() if t.running)
