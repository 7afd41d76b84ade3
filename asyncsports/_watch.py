"""What changed between two polls: pure diffing for the live watchers, and poll pacing.

The watchers (``client.actions.follow`` and ``client.events.watch``) poll a listing; these
functions decide what each new poll means. No I/O.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

__all__ = ["Change", "Tracker", "jittered"]

T = TypeVar("T")
Kind = Literal["new", "update", "live", "ended"]


@dataclass(frozen=True, slots=True)
class Change(Generic[T]):
    """One change seen by a watcher.

    ``kind`` is ``"new"`` or ``"update"`` for actions (an update is a later version of an
    action already yielded), ``"live"`` or ``"ended"`` for stream events.
    """

    kind: Kind
    record: T


class Tracker(Generic[T]):
    """Remembers the last version of each record by key and reports what differs.

    ``seen(records)`` returns a ``"new"`` change for each unseen key and an ``"update"``
    change for each key whose record is no longer equal to the one remembered; with
    ``gone=True`` it also returns an ``"ended"`` change (carrying the last version) for
    each remembered key missing from ``records``, and new keys come as ``"live"``.
    ``key`` maps a record to its identity (``lambda a: a.fixture_action.action_id``).
    """

    def __init__(self, key: Callable[[T], Hashable], *, presence: bool = False) -> None:
        if not callable(key):
            raise TypeError(f"key: expected a callable record -> hashable key, got {key!r}")
        self._key = key
        self._presence = presence
        self.known: dict[Hashable, T] = {}

    def seen(self, records: Iterable[T]) -> list[Change[T]]:
        """The changes since the previous call, in the order of ``records`` (ended ones last)."""
        key = self._key
        known = self.known
        changes: list[Change[T]] = []
        now: dict[Hashable, T] = {}
        for record in records:
            k = key(record)
            if self._presence:
                if k not in known and k not in now:
                    changes.append(Change("live", record))
                now[k] = record
                continue
            old = known.get(k)
            if old is None:
                changes.append(Change("new", record))
            elif old != record:
                changes.append(Change("update", record))
            known[k] = record
        if self._presence:
            changes += [Change("ended", old) for k, old in known.items() if k not in now]
            self.known = now
        return changes


def jittered(interval: float, jitter: float, rng: random.Random | None = None) -> float:
    """``interval`` spread by up to ``jitter`` (a fraction) either way, never negative.

    Many pollers started together drift apart instead of hitting the service in step.
    """
    spread = interval * jitter
    return max(0.0, (rng or random).uniform(interval - spread, interval + spread))
