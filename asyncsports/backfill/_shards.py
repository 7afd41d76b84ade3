"""Sharded backfills, the pure parts: units of work, their names, and lease arithmetic.

A sharded job splits a backfill (:class:`asyncsports.backfill.Scope`) into *work units*
that any number of workers claim from the database (:class:`asyncsports.store.Shards`):

- ``list SPORT`` or ``list SPORT/seasons/ID``: walk one fixture listing (a sport x season),
  writing its pages and planning a ``fixture`` unit per started fixture it lists;
- ``fixture ID``: that fixture's actions and statistics, written in one transaction.

A worker holds a unit under a *lease* that it renews while it works; a unit whose lease
has lapsed (its worker died) may be claimed by another. No I/O here.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from asyncsports._wire import defaults
from asyncsports.backfill import Scope, listing_key, started

__all__ = [
    "LEASE",
    "ShardUnit",
    "fixture_units",
    "lapsed",
    "listing_units",
    "parse_unit",
    "poll_every",
    "renew_every",
    "scope_from_json",
    "scope_to_json",
]

LEASE = defaults.LEASE
"""Seconds a claim lasts unless renewed: how long a dead worker's units wait."""


@dataclass(frozen=True, slots=True)
class ShardUnit:
    """A unit of a sharded job, which one worker claims at a time: ``kind`` ``list`` (a listing) or ``fixture``, its sport, and its
    season (a listing's, if asked per season) or fixture id."""

    kind: str
    sport: str
    season: str | None = None
    fixture: str | None = None

    @property
    def stored(self) -> tuple[str, str, str | None]:
        """The unit as the job table keeps it: name, sport, season (the listing's, or
        the fixture's)."""
        return self.name, self.sport, self.season

    @property
    def name(self) -> str:
        """The unit's name in the job table (its primary key within the job)."""
        if self.kind == "list":
            return f"list {listing_key(self.sport, self.season)}"
        return f"fixture {self.fixture}"


def listing_units(scope: Scope) -> list[ShardUnit]:
    """The units a job starts with: one per fixture listing of the scope."""
    return [ShardUnit("list", sport, season) for sport, season in scope.listings()]


def fixture_units(rows: Iterable[Sequence[Any]]) -> list[ShardUnit]:
    """The ``fixture`` units a page of fixture rows plans: one per started fixture.

    Rows are the sink's (``id, sport, season_id, start, status, name, deleted, json``).
    """
    return [
        ShardUnit("fixture", row[1], row[2], row[0])
        for row in rows
        if started(row[4], bool(row[6]))
    ]


def parse_unit(name: str, sport: str, season: str | None) -> ShardUnit:
    """The unit of a stored name (with the sport and season stored beside it)."""
    kind, _, rest = name.partition(" ")
    if kind == "list":
        return ShardUnit("list", sport, season)
    if kind == "fixture" and rest:
        return ShardUnit("fixture", sport, season, rest)
    raise ValueError(f"not a unit name: {name!r}")


def lapsed(until: dt.datetime | None, now: dt.datetime) -> bool:
    """Whether a lease that ran ``until`` has lapsed at ``now`` (no lease: it has)."""
    return until is None or until <= now


def renew_every(lease: float) -> float:
    """Seconds between renewals: three chances to renew before the lease lapses."""
    if not lease > 0 or math.isinf(lease):
        raise ValueError(f"lease: must be a positive number of seconds, got {lease}")
    return lease / 3


def poll_every(lease: float, idle: int) -> float:
    """Seconds an idle worker waits before looking for units again, after ``idle``
    empty looks: from 20 ms, doubling, to at most a quarter second (and a third of the
    lease). Short: a listing's next page plans new units at any moment, and the last
    unit done ends every worker; a look is one cheap indexed query."""
    return min(0.02 * 2.0 ** min(idle, 10), renew_every(lease), 0.25)


def scope_to_json(scope: Scope) -> dict[str, Any]:
    """The scope as JSON-ready values (stored with the job: workers read it)."""
    return {
        "sports": list(scope.sports),
        "seasons": list(scope.seasons),
        "date_from": scope.date_from.isoformat() if scope.date_from else None,
        "date_to": scope.date_to.isoformat() if scope.date_to else None,
        "page_size": scope.page_size,
    }


def scope_from_json(data: dict[str, Any]) -> Scope:
    """The scope :func:`scope_to_json` stored."""

    def day(value: str | None) -> dt.date | None:
        return dt.date.fromisoformat(value) if value else None

    return Scope(
        sports=tuple(data["sports"]),
        seasons=tuple(data["seasons"]),
        date_from=day(data["date_from"]),
        date_to=day(data["date_to"]),
        page_size=int(data["page_size"]),
    )
