"""Fixture lists: filter, sort and page over seasons of any size without holding them.

A season's fixtures start at strictly increasing times, so in start-time order fixture
``i`` is simply position ``i``; in name order they group by team pair (pair ``i % P``),
so position ``k`` of a pair is ``pair + k * P``. Either way a season is an indexable
sequence in the wanted order, and several seasons are merged lazily (``heapq.merge``)
on integer keys. Filters narrow each season to an index range where they can (dates,
status through start times) and test the rest per fixture on its hash bits.

Paging keeps checkpoints: the per-season positions at which a page started. A walk over
pages in order, or several pages in flight at once, costs about one pass over the result
instead of one pass per page; totals are counted once per query and remembered.
"""

from __future__ import annotations

import bisect
import heapq
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from asyncsports.emulator._records import (
    Fixture,
    Season,
    coverage_of,
    fixture_bits,
    is_deleted,
    status_of,
    type_of,
)
from asyncsports.emulator._world import World

__all__ = ["DEFAULT_SORT", "Filters", "Listing", "Listings", "SortKey"]

SortKey = tuple[str, bool]
"""A sort field (``name`` or ``startTime``) and whether it is descending."""

DEFAULT_SORT: tuple[SortKey, ...] = (("startTime", False), ("name", False))
_CACHE_QUERIES = 64
_CACHE_CHECKPOINTS = 20_000


@dataclass(frozen=True, slots=True)
class Filters:
    """The filters of a fixture list. ``None`` means not filtered on that field.

    Dates are epoch seconds: ``date_from`` the start of the first day, ``date_until`` the
    start of the day after the last one (so both ends are inclusive days).
    """

    statuses: frozenset[str] | None = None
    date_from: int | None = None
    date_until: int | None = None
    types: frozenset[str] | None = None
    coverages: frozenset[str] | None = None
    include_deleted: bool = True

    @property
    def per_fixture(self) -> bool:
        """Whether some fixtures of an index range may still fail the filters."""
        return (
            self.statuses is not None
            or self.types is not None
            or self.coverages is not None
            or not self.include_deleted
        )

    def index_range(self, season: Season, now: float) -> tuple[int, int]:
        """The index range that holds every match (exact for dates)."""
        lo, hi = 0, season.n
        if self.date_from is not None:
            lo = max(lo, season.first_at_or_after(self.date_from))
        if self.date_until is not None:
            hi = min(hi, season.first_at_or_after(self.date_until))
        if self.statuses is not None and len(self.statuses) == 1:
            (only,) = self.statuses
            longest = season.rules.duration + 1024
            if only == "scheduled":
                lo = max(lo, season.first_at_or_after(now + 1e-6))
            elif only == "live":
                lo = max(lo, season.first_at_or_after(now - longest))
                hi = min(hi, season.first_at_or_after(now + 1e-6))
            elif only == "completed":
                hi = min(hi, season.first_at_or_after(now - season.rules.duration + 1e-6))
        return lo, max(lo, hi)

    def accepts(self, season: Season, i: int, now: float) -> bool:
        """Whether fixture ``i`` passes the per-fixture filters."""
        bits = fixture_bits(season, i)
        if not self.include_deleted and is_deleted(bits):
            return False
        if self.types is not None and type_of(bits) not in self.types:
            return False
        if self.coverages is not None and coverage_of(bits) not in self.coverages:
            return False
        return self.statuses is None or (
            status_of(season, season.start_of(i), bits, now) in self.statuses
        )


class _Order:
    """One season's index range in the wanted order, as an indexable sequence."""

    def __init__(
        self, season: Season, lo: int, hi: int, sort: Sequence[SortKey], number: int
    ) -> None:
        self.season = season
        self.number = number
        self.lo = lo
        self.hi = hi
        self.size = hi - lo
        self.name_first = sort[0][0] == "name"
        desc = dict(sort)
        self.name_desc = desc["name"]
        self.time_desc = desc["startTime"]
        if self.name_first:
            p = len(season.pairs)
            slots = sorted(range(p), key=season.pair_rank.__getitem__, reverse=self.name_desc)
            self.slots: list[tuple[int, int]] = []  # (first index, count) per pair slot
            self.offsets: list[int] = []
            total = 0
            for q in slots:
                first = lo + (q - lo) % p
                count = (hi - 1 - first) // p + 1 if first < hi else 0
                if count:
                    self.slots.append((first, count))
                    self.offsets.append(total)
                    total += count

    def indices(self, start: int) -> Iterator[int]:
        """Fixture indexes from position ``start`` on."""
        if not self.name_first:
            if self.time_desc:
                yield from range(self.hi - 1 - start, self.lo - 1, -1)
            else:
                yield from range(self.lo + start, self.hi)
            return
        p = len(self.season.pairs)
        s = bisect.bisect_right(self.offsets, start) - 1
        if s < 0:
            return
        skip = start - self.offsets[s]
        for first, count in self.slots[s:]:
            if self.time_desc:
                yield from range(first + (count - 1 - skip) * p, first - 1, -p)
            else:
                yield from range(first + skip * p, first + count * p, p)
            skip = 0

    def keyed(self, start: int) -> Iterator[tuple[int, int, int, int]]:
        """``(key1, key2, season number, index)`` from position ``start`` on, for merging."""
        season, number = self.season, self.number
        first, gap, pairs, rank = season.first, season.gap, len(season.pairs), season.pair_rank
        name_sign = -1 if self.name_desc else 1
        time_sign = -1 if self.time_desc else 1
        for i in self.indices(start):
            t = time_sign * (first + i * gap)
            r = name_sign * rank[i % pairs]
            yield (r, t, number, i) if self.name_first else (t, r, number, i)


@dataclass(slots=True)
class _State:
    count: int | None = None
    offsets: list[int] = field(default_factory=list)
    cursors: dict[int, tuple[int, ...]] = field(default_factory=dict)


class Listing:
    """The fixtures of some seasons that pass ``filters``, in ``sort`` order."""

    def __init__(
        self,
        world: World,
        seasons: Sequence[Season],
        filters: Filters,
        sort: Sequence[SortKey],
        now: float,
        state: _State | None = None,
    ) -> None:
        self._world = world
        self._filters = filters
        self._now = now
        full = list(sort) + [d for d in DEFAULT_SORT if d[0] not in dict(sort)]
        self._orders = []
        for number, season in enumerate(seasons):
            lo, hi = filters.index_range(season, now)
            self._orders.append(_Order(season, lo, hi, full, number))
        self._state = state if state is not None else _State()

    def count(self) -> int:
        """How many fixtures pass the filters (counted once, then remembered)."""
        if self._state.count is None:
            f, now = self._filters, self._now
            if not f.per_fixture:
                total = sum(o.size for o in self._orders)
            else:
                total = sum(
                    1
                    for o in self._orders
                    for i in range(o.lo, o.hi)
                    if f.accepts(o.season, i, now)
                )
            self._state.count = total
        return self._state.count

    def __iter__(self) -> Iterator[Fixture]:
        """Every matching fixture in order."""
        for season, i in self._walk([0] * len(self._orders)):
            yield self._world.fixture(season, i)

    def page(self, offset: int, size: int) -> list[Fixture]:
        """Up to ``size`` fixtures from position ``offset`` of the result."""
        state = self._state
        at = bisect.bisect_right(state.offsets, offset) - 1
        if at >= 0:
            done = state.offsets[at]
            pos = list(state.cursors[done])
        elif len(self._orders) == 1 and not self._filters.per_fixture:
            done, pos = offset, [min(offset, self._orders[0].size)]
        else:
            done, pos = 0, [0] * len(self._orders)
        out: list[Fixture] = []
        if done == offset:
            self._remember(offset, pos)
        for season, i in self._walk(pos):
            done += 1
            if done > offset:
                out.append(self._world.fixture(season, i))
                if len(out) == size:
                    self._remember(offset + size, pos)
                    break
            elif done == offset:
                self._remember(offset, pos)
        return out

    def _remember(self, offset: int, pos: list[int]) -> None:
        """Note that the element at ``offset`` is the next one after the cursors ``pos``."""
        state = self._state
        if offset not in state.cursors and len(state.offsets) < _CACHE_CHECKPOINTS:
            bisect.insort(state.offsets, offset)
            state.cursors[offset] = tuple(pos)

    def _walk(self, pos: list[int]) -> Iterator[tuple[Season, int]]:
        """Matching fixtures from the per-season positions ``pos`` on, advancing ``pos``."""
        f, now = self._filters, self._now
        test = f.per_fixture
        orders = self._orders
        live = [o for o in orders if pos[o.number] < o.size]
        if len(live) == 1:
            o = live[0]
            season, number = o.season, o.number
            for i in o.indices(pos[number]):
                pos[number] += 1
                if not test or f.accepts(season, i, now):
                    yield season, i
            return
        for _, _, number, i in heapq.merge(*(o.keyed(pos[o.number]) for o in live)):
            season = orders[number].season
            pos[number] += 1
            if not test or f.accepts(season, i, now):
                yield season, i


class Listings:
    """Remembers totals and page checkpoints of recent queries (least recently used go)."""

    def __init__(self, world: World) -> None:
        self._world = world
        self._states: OrderedDict[tuple[object, ...], _State] = OrderedDict()

    def get(
        self, seasons: Sequence[Season], filters: Filters, sort: Sequence[SortKey], now: float
    ) -> Listing:
        """A listing whose counts and checkpoints are shared with equal earlier queries."""
        # Status depends on the clock; other filters do not, so their state outlives it.
        moment = now if filters.statuses is not None else None
        cache_key = (tuple(s.id for s in seasons), filters, tuple(sort), moment)
        state = self._states.get(cache_key)
        if state is None:
            state = self._states[cache_key] = _State()
            if len(self._states) > _CACHE_QUERIES:
                self._states.popitem(last=False)
        else:
            self._states.move_to_end(cache_key)
        return Listing(self._world, seasons, filters, sort, now, state)
