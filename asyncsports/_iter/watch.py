"""What the live watchers share: diffing one poll against the last, and the polling loop.

The watchers (``client.actions.follow`` and ``client.events.watch``) poll a listing;
:class:`Tracker` decides what each new poll means (pure), :func:`polls` paces the polls
and rides out passing failures. The requests themselves go through the session.
"""

from __future__ import annotations

import logging
import random
from collections.abc import AsyncGenerator, Awaitable, Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

import anyio

from asyncsports._http import request as arg
from asyncsports.errors import RateLimitError, ServerError, TransportError

__all__ = ["Change", "Tracker", "jittered", "polls"]

log = logging.getLogger("asyncsports")

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


async def polls(
    fetch: Callable[[], Awaitable[T]], what: str, interval: float, jitter: float
) -> AsyncGenerator[T, None]:
    """``await fetch()`` every ``interval`` seconds (spread by ``jitter``), forever.

    A poll that fails for a passing reason (a connection failure or timeout, a 5xx or a
    429, after the session's own retries) is logged and skipped, so a watcher that
    polls all day rides out the service's bad minutes; other errors are raised.
    """
    arg.seconds("interval", interval)
    arg.seconds("jitter", jitter)
    while True:
        try:
            yield await fetch()
        except (TransportError, ServerError, RateLimitError) as exc:
            log.warning("poll of %s failed, polling on: %s", what, exc)
        await anyio.sleep(jittered(interval, jitter))
