"""The bookkeeping of many live feeds merged into one iterator (sans I/O)."""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Sequence
from typing import Generic, TypeVar

from asyncsports._wire.live.messages import Record

# --------------------------------------------------------------------------- merging

K = TypeVar("K", bound=Hashable)


class MergeBook(Generic[K]):
    """Many feeds, one consumer: records in arrival order, each feed's order kept.

    ``push`` a feed's delivered records; it answers whether that feed must stop reading its
    socket (its share of the buffer, ``per_feed`` records, is full). ``pop`` hands out the
    oldest record and its feed's key; a paused feed whose buffer fell to half is listed
    by :meth:`resumable`. Memory is bounded by ``per_feed`` (plus one delivery's records)
    per feed. :meth:`position` is the resume point of a feed: records the consumer took,
    so a merge stopped with records still buffered loses none of them.
    """

    __slots__ = ("_buffered", "_paused", "_queue", "_taken", "per_feed")

    def __init__(self, per_feed: int = 64) -> None:
        if per_feed < 1:
            raise ValueError(f"per_feed: must be >= 1, got {per_feed}")
        self.per_feed = per_feed
        self._queue: deque[tuple[K, Record]] = deque()
        self._buffered: dict[K, int] = {}
        self._taken: dict[K, int] = {}
        self._paused: set[K] = set()

    def add(self, key: K, start_position: int = 0) -> None:
        """Follow a feed whose consumer has taken ``start_position`` records already."""
        if key in self._taken:
            raise ValueError(f"feed {key!r} is merged already")
        self._taken[key] = start_position
        self._buffered[key] = 0

    def push(self, key: K, records: tuple[Record, ...]) -> bool:
        """Buffer ``records`` of feed ``key``; True when that feed must pause reading."""
        full = False
        for record in records:
            full = self.push_one(key, record)
        return full

    def push_one(self, key: K, record: Record) -> bool:
        """:meth:`push` of one record (a live packet's usual delivery)."""
        self._queue.append((key, record))
        n = self._buffered[key] = self._buffered[key] + 1
        if n >= self.per_feed:
            self._paused.add(key)
            return True
        return False

    def pop(self) -> tuple[K, Record] | None:
        """The oldest buffered record and its feed, or None when none is buffered."""
        try:
            item = self._queue.popleft()
        except IndexError:
            return None
        key = item[0]
        self._buffered[key] -= 1
        self._taken[key] += 1
        return item

    def resumable(self) -> Sequence[K]:
        """Paused feeds whose buffer fell to half ``per_feed`` or below: resume them now."""
        if not self._paused:
            return ()  # asked after every record: nothing made while no feed is paused
        ready = [k for k in self._paused if self._buffered[k] <= self.per_feed // 2]
        self._paused.difference_update(ready)
        return ready

    def paused(self, key: K) -> bool:
        """Whether feed ``key`` is paused."""
        return key in self._paused

    def buffered(self, key: K | None = None) -> int:
        """Records buffered for feed ``key`` (all feeds when None)."""
        return len(self._queue) if key is None else self._buffered[key]

    def position(self, key: K) -> int:
        """Records of feed ``key`` the consumer took: its ``start_position`` to resume."""
        return self._taken[key]

    def remove(self, key: K) -> list[Record]:
        """Stop following ``key``; its buffered records (not taken) are dropped and returned."""
        kept: deque[tuple[K, Record]] = deque()
        dropped: list[Record] = []
        for item in self._queue:
            if item[0] == key:
                dropped.append(item[1])
            else:
                kept.append(item)
        self._queue = kept
        del self._buffered[key], self._taken[key]
        self._paused.discard(key)
        return dropped
