"""Handlers of the sports data service (api-spec 4.2 to 4.6)."""

from __future__ import annotations

import calendar
import datetime as dt
import itertools
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from aiohttp import web

from asyncsports.emulator._aggregates import standings, statistics
from asyncsports.emulator._clock import Clock
from asyncsports.emulator._faults import Fault
from asyncsports.emulator._http import HttpError, Reply, boolean, choice, date, integer, json_reply
from asyncsports.emulator._ids import key, uuid_from
from asyncsports.emulator._listing import Filters, Listings, SortKey
from asyncsports.emulator._records import (
    BIG_SEASON,
    COVERAGES,
    STATUSES,
    TYPES,
    Fixture,
    Season,
    Team,
)
from asyncsports.emulator._sports import SportRules
from asyncsports.emulator._timeline import Action, timeline
from asyncsports.emulator._wire import (
    ActionWriter,
    FixtureWriter,
    encode,
    envelope,
    json_array,
    ref,
    squad_player,
)
from asyncsports.emulator._world import World

__all__ = ["DataApi"]

MAX_PAGE_SIZE = 1000
_SORT_FIELDS = ("name", "startTime")
_DAY = 86400


def _day_start(day: dt.date) -> int:
    return calendar.timegm(day.timetuple())


def parse_sort(values: list[str]) -> tuple[SortKey, ...]:
    """``sort=<field>[,asc|desc]`` parameters, in order."""
    out: list[SortKey] = []
    for value in values:
        name, _, direction = value.partition(",")
        direction = direction.lower() or "asc"
        if name not in _SORT_FIELDS or direction not in ("asc", "desc"):
            raise HttpError(400, f"sort: expected name or startTime[,asc|desc], got {value!r}")
        if any(name == n for n, _ in out):
            raise HttpError(400, f"sort: {name} given twice")
        out.append((name, direction == "desc"))
    return tuple(out)


def parse_filters(query: Any) -> Filters:
    """The filters of api-spec 4.2 (``includeDelete`` is basketball's spelling)."""
    statuses = choice(query, "status", STATUSES)
    if boolean(query, "live"):  # live=false is no filter, as on the events listing
        statuses = frozenset({"live"}) & (statuses or frozenset({"live"}))
    day_from, day_to = date(query, "dateFrom"), date(query, "dateTo")
    include = boolean(query, "includeDeleted")
    if include is None:
        include = boolean(query, "includeDelete")
    return Filters(
        statuses=statuses,
        date_from=None if day_from is None else _day_start(day_from),
        date_until=None if day_to is None else _day_start(day_to) + _DAY,
        types=choice(query, "type", TYPES),
        coverages=choice(query, "coverageLevel", COVERAGES),
        include_deleted=True if include is None else include,
    )


class DataApi:
    """Fixtures, squads, actions, standings and statistics."""

    def __init__(self, world: World, clock: Clock) -> None:
        self.world = world
        self.clock = clock
        self.listings = Listings(world)
        self._fixture_json = FixtureWriter()
        # Statistics and standings are cheap at the default scale but take seconds over a
        # million-action timeline or a million-fixture season: remember recent ones.
        self._packets: OrderedDict[tuple[str, float], bytes] = OrderedDict()

    # ------------------------------------------------------------------ lookups

    def _sport(self, request: web.Request) -> SportRules:
        sport = request.match_info["sport"]
        rules = self.world.rules(sport)
        if rules is None or request.path.startswith("/v2/") != (sport == "volleyball"):
            raise HttpError(404, f"No such sport path: {request.path}")
        return rules

    def _season(self, request: web.Request, rules: SportRules, *, stage: bool = False) -> Season:
        ident = request.match_info["stage_id" if stage else "season_id"]
        find = self.world.stage if stage else self.world.season
        season = find(ident, rules.name)
        if season is None:
            raise HttpError(404, f"{'Stage' if stage else 'Season'} not found: {ident}")
        return season

    def _fixture(self, request: web.Request) -> Fixture:
        rules = self._sport(request)
        ident = request.match_info["fixture_id"]
        fixture = self.world.fixture_by_id(ident, rules.name)
        if fixture is None:
            raise HttpError(404, f"Fixture not found: {ident}")
        return fixture

    def timeline(self, f: Fixture) -> Iterator[Action]:
        """Every action of ``f``'s timeline, in order (also what its live feed sends)."""
        squads = tuple(self.world.squad(t, f.season.rules.name) for t in (f.home, f.away))
        return timeline(f, squads, f.season.actions or self.world.scale.actions_per_fixture)

    # ------------------------------------------------------------------ fixtures

    def fixtures(self, request: web.Request, fault: Fault | None) -> Reply:
        """``/{sport}/fixtures`` and ``/{sport}/seasons/{seasonId}/fixtures``."""
        rules = self._sport(request)
        if "season_id" in request.match_info:
            seasons: tuple[Season, ...] = (self._season(request, rules),)
        else:
            seasons = self.world.seasons(rules.name)
        q = request.query
        filters = parse_filters(q)
        sort = parse_sort(q.getall("sort", []))
        size = integer(q, "size", low=1, high=MAX_PAGE_SIZE) or 20
        page = integer(q, "page", low=0) or 0
        paged = rules.name == "volleyball" or bool(boolean(q, "paged"))
        now = self.clock.time()
        listing = self.listings.get(seasons, filters, sort, now)
        write = self._fixture_json
        if not paged:
            return Reply(json_array(write(f, now) for f in listing))
        if fault is not None and fault.repeat_page:
            page -= 1  # the fault only takes requests for pages after the first
        items = [write(f, now) for f in listing.page(page * size, size)]
        return Reply(envelope(items, page, size, listing.count(), bool(sort)))

    def fixture(self, request: web.Request, fault: Fault | None) -> Reply:
        """``/{sport}/fixtures/{fixtureId}``."""
        return Reply(self._fixture_json(self._fixture(request), self.clock.time()))

    # ------------------------------------------------------------------ actions, statistics

    def actions(self, request: web.Request, fault: Fault | None) -> Reply:
        """``/{sport}/fixtures/{fixtureId}/actions``: the timeline up to the clock's time."""
        f = self._fixture(request)
        now_ms = self.clock.time_ms()
        sent = itertools.takewhile(lambda a: a.ts_ms <= now_ms, self.timeline(f))
        return Reply(json_array(map(ActionWriter(f.id, f.home.id), sent)))

    def statistics(self, request: web.Request, fault: Fault | None) -> Reply:
        """``/{sport}/fixtures/{fixtureId}/statistics``: 404 until the fixture has ended."""
        f = self._fixture(request)
        if f.status(self.clock.time()) != "completed":
            raise HttpError(404, f"No statistics yet: fixture {f.id} has not ended")
        return Reply(self._packet((f.id, 0.0), lambda: statistics(f, self.timeline(f))))

    def _packet(self, cache_key: tuple[str, float], make: Callable[[], object]) -> bytes:
        body = self._packets.get(cache_key)
        if body is None:
            body = self._packets[cache_key] = encode(make())
            if len(self._packets) > 64:
                self._packets.popitem(last=False)
        return body

    # ------------------------------------------------------------------ squads, standings

    def _squad(self, season: Season, team: Team) -> dict[str, Any]:
        players = self.world.squad(team, season.rules.name)
        return {
            "id": uuid_from(key(self.world.seed, "squad", season.id, team.id)),
            "season": ref(season),
            "team": ref(team),
            "players": [squad_player(p) for p in players],
        }

    def season_squads(self, request: web.Request, fault: Fault | None) -> Reply:
        """``/{sport}/seasons/{seasonId}/squads``."""
        season = self._season(request, self._sport(request))
        return json_reply([self._squad(season, t) for t in season.competition.teams])

    def team_squads(self, request: web.Request, fault: Fault | None) -> Reply:
        """``/{sport}/squads/{teamId}``: the team's squad in each season."""
        rules = self._sport(request)
        ident = request.match_info["team_id"]
        team = self.world.team(ident, rules.name)
        if team is None:
            raise HttpError(404, f"Team not found: {ident}")
        seasons = [
            s
            for s in self.world.seasons(rules.name)
            if s.index != BIG_SEASON and any(t is team for t in s.competition.teams)
        ]
        return json_reply([self._squad(s, team) for s in seasons])

    def standings(self, request: web.Request, fault: Fault | None) -> Reply:
        """``/{sport}/seasons/{seasonId}/standings`` and ``/{sport}/stages/{stageId}/standings``."""
        rules = self._sport(request)
        season = self._season(request, rules, stage="stage_id" in request.match_info)
        if not season.competition.has_standings:
            raise HttpError(404, f"Standings are not available for {season.competition.name}")
        now = self.clock.time()
        return Reply(self._packet((season.id, now), lambda: standings(self.world, season, now)))
