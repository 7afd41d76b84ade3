"""The mirror's reads: each turns one task into the rows to write (and what it leads to).

A job asks the client and returns a :class:`Done`: the writes and marks to commit in one
transaction, the tasks it calls for, and when to run again if not at its own cadence.
No database and no scheduling here: the mirror commits and plans.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from asyncsports.client import Client
from asyncsports.errors import NotFoundError
from asyncsports.models import Action, Fixture, Statistics, Tournament
from asyncsports.raw import RawRecord
from asyncsports.store import (
    EventRow,
    Row,
    Write,
    action_row,
    event_row,
    fixture_row,
    squad_row,
    standings_row,
    statistics_row,
    tournament_row,
)

from ._keys import Final, Key, Live, Mark, NoStandings, Owed, Snooker, Squads, Standings
from ._plan import near_window, wanted, window

__all__ = ["ActionFeed", "Done", "Jobs", "Next", "StatisticsFeed"]

T = TypeVar("T")
Dates = tuple[dt.date, dt.date]


class ActionFeed(Protocol):
    """Where live actions come from when not from polling: the seam for ``client.live``.

    Called as ``feed(sport, fixture_id, start_position)``, it yields the fixture's actions
    as they happen, skipping the first ``start_position`` of the timeline, and ends when
    the fixture is over. ``client.live.actions(sport, fixture_id,
    start_position=n)`` with raw records is meant to be one.
    """

    def __call__(
        self, sport: str, fixture_id: str, start_position: int
    ) -> AsyncIterator[RawRecord[Action]]: ...


class StatisticsFeed(Protocol):
    """Where a live fixture's statistics come from while it is live: the seam for
    ``client.live.statistics(sport, fixture_id, start_position=n)`` with raw records. Each
    packet replaces the fixture's row; the REST packet is read once when it ends."""

    def __call__(
        self, sport: str, fixture_id: str, start_position: int
    ) -> AsyncIterator[RawRecord[Statistics]]: ...


@dataclass(frozen=True, slots=True)
class Next:
    """A task a job calls for: ``kind``, ``args``, and ``delay`` seconds from now."""

    key: Key
    kind: str
    args: tuple[str, ...]
    delay: float = 0.0


@dataclass(slots=True)
class Done:
    """What a job did: ``writes``, ``marks``, ``unmarks`` and live feeds' ``positions`` to
    commit together, ``follow`` (tasks to plan), ``stop`` (task keys to drop), ``again``
    (seconds until this task runs again, None: its cadence), ``resource`` (for the
    metrics) and ``status`` (HTTP-like)."""

    resource: str
    writes: list[Write] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)
    unmarks: list[Mark] = field(default_factory=list)
    positions: dict[str, int] = field(default_factory=dict)
    follow: list[Next] = field(default_factory=list)
    stop: list[Live] = field(default_factory=list)
    again: float | None = None
    status: int = 200


def _year(now: float) -> Dates:
    """A year back to a year ahead of ``now`` (UTC dates)."""
    today = dt.datetime.fromtimestamp(now, dt.UTC).date()
    return today - dt.timedelta(days=365), today + dt.timedelta(days=365)


class Jobs:
    """The reads, on one client; ``clock()`` is the service's time (epoch seconds)."""

    def __init__(
        self,
        client: Client,
        *,
        clock: Callable[[], float],
        back: int,
        ahead: int,
        every: dict[str, float],
        marks: Callable[[], Mapping[str, float]],
    ) -> None:
        self.client = client
        self.clock = clock
        self.back = back
        self.ahead = ahead
        self.every = every
        self.marks = marks  # the marks as committed so far (by their text)

    async def _dated(
        self, dates: Callable[[float], Dates], read: Callable[[Dates], Awaitable[T]]
    ) -> T:
        """``read`` the ``dates`` around now; again, once, if they moved while it was read:
        its answer told the service's date (the first of a run does), or midnight passed."""
        asked = dates(self.clock())
        result = await read(asked)
        now = dates(self.clock())
        return result if now == asked else await read(now)

    async def fixtures(self, sport: str, which: str) -> Done:
        """A fixture listing (``near`` or ``window``), and what each fixture calls for."""

        def dates(now: float) -> Dates:
            return near_window(now) if which == "near" else window(now, self.back, self.ahead)

        def read(span: Dates) -> Awaitable[list[RawRecord[Fixture]]]:
            return self.client.with_json.fixtures.list(
                sport, date_from=span[0], date_to=span[1], include_deleted=True, page_size=100
            ).collect()

        done = Done("fixtures")
        try:
            records = await self._dated(dates, read)
        except NotFoundError:
            done.status = 404  # a sport the service does not have: nothing to follow
            return done
        rows = [fixture_row(sport, f, json) for f, json in records]
        done.writes.append(Write("fixtures", rows))
        marks = self.marks()
        seasons: dict[str, None] = {}
        for row in rows:
            fid, season = row.id, row.season_id
            if season is not None:
                seasons[season] = None
            need = wanted(row.status, bool(row.deleted), str(Final(fid)) in marks)
            if need == "live":
                done.follow.append(Next(Live(fid), "live", (sport, fid, season or "")))
            else:
                done.stop.append(Live(fid))
            if need == "final":
                done.follow.append(Next(Final(fid), "final", (sport, fid, season or "")))
        for season in seasons:
            done.follow.append(Next(Squads(sport, season), "squads", (sport, season)))
        return done

    async def actions(self, sport: str, fid: str, season: str) -> Done:
        """A live fixture's actions, polled: the timeline as it stands. The record that
        closes the fixture calls for its final read at once, before the listing says so."""
        done = Done("actions")
        rows, finished = await self._timeline(sport, fid)
        done.writes.append(Write("actions", rows, ("fixture_id", fid)))
        if finished and str(Final(fid)) not in self.marks():
            done.follow.append(Next(Final(fid), "final", (sport, fid, season)))
        return done

    async def _timeline(self, sport: str, fid: str) -> tuple[list[Row], bool]:
        """The timeline's rows, and whether it holds the record that closes the fixture."""
        try:
            actions = await self.client.with_json.actions.list(sport, fid).collect()
        except NotFoundError:
            return [], False  # a sport without timelines
        # A timeline may hold an action more than once (a later version of it): the last
        # one is the action as it stands, and the only one kept (as the backfill does).
        rows = {a.fixture_action.action_id: action_row(sport, fid, a, j) for a, j in actions}
        return list(rows.values()), any(a.finished for a, _ in actions)

    async def final(self, sport: str, fid: str, season: str) -> Done:
        """An ended fixture: its whole timeline and its statistics, once."""
        done = Done("final")
        actions, _ = await self._timeline(sport, fid)
        done.writes.append(Write("actions", actions, ("fixture_id", fid)))
        try:
            packet, json = await self.client.with_json.statistics.get(sport, fid)
        except NotFoundError:
            # Not there yet: keep the timeline, ask again later.
            done.status, done.again = 404, self.every["retry"]
            return done
        done.writes.append(Write("statistics", [statistics_row(sport, fid, packet, json)]))
        done.marks.append(Final(fid))
        done.stop.append(Live(fid))
        if season and str(NoStandings(season)) not in self.marks():
            # Committed with the fixture's end, so that a restart still reads them; and
            # coalesced: the fixtures ending about together are followed by one read.
            done.marks.append(Owed(sport, season))
            delay = self.every["fixtures"]
            done.follow.append(Next(Standings(season), "standings", (sport, season), delay))
        return done

    async def standings(self, sport: str, season: str) -> Done:
        """A season's standings (after a match of it ended)."""
        done = Done("standings", unmarks=[Owed(sport, season)])
        try:
            packets = await self.client.with_json.standings.get(sport, season_id=season)
        except NotFoundError:
            done.status = 404
            done.marks.append(NoStandings(season))  # a competition without standings
            return done
        rows = [standings_row(sport, season, p, json) for p, json in packets]
        done.writes.append(Write("standings", rows, ("season_id", season)))
        return done

    async def squads(self, sport: str, season: str) -> Done:
        """A season's squads (daily)."""
        done = Done("squads", marks=[Squads(sport, season)])
        try:
            squads = await self.client.with_json.squads.list(sport, season_id=season).collect()
        except NotFoundError:
            done.status = 404
            return done
        rows = [squad_row(sport, season, s, json) for s, json in squads]
        done.writes.append(Write("squads", rows, ("season_id", season)))
        return done

    async def events(self, live_before: Sequence[Row]) -> Done:
        """The live stream events that are live now; those that left the list end."""
        done = Done("events")
        events = await self.client.with_json.events.list(live=True).collect()
        rows = [event_row(e, json, True) for e, json in events]
        listed = {r.id for r in rows}
        before = [EventRow(*r) for r in live_before]
        ended = [r._replace(live=0) for r in before if r.live and r.id not in listed]
        done.writes.append(Write("events", rows + ended))
        return done

    async def snooker(self) -> Done:
        """Snooker tournaments from a year back to a year ahead (daily)."""

        def read(span: Dates) -> Awaitable[list[RawRecord[Tournament]]]:
            return self.client.with_json.snooker.tournaments(start=span[0], end=span[1]).collect()

        done = Done("snooker", marks=[Snooker()])
        rows = [tournament_row(t, json) for t, json in await self._dated(_year, read)]
        done.writes.append(Write("snooker_tournaments", rows))
        return done
