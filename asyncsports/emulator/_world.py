"""The catalogue of the data service: competitions, seasons, teams, venues, squads, fixtures.

Built lazily per sport and small at any scale (competitions x seasons x teams); fixtures
are not stored at all: :meth:`World.fixture` makes fixture ``i`` of a season on demand,
as a pure function of the seed, the season and ``i``.

Schedules: a season's fixtures start ``gap`` seconds apart from ``first`` (strictly
increasing, which the listing relies on to page without sorting). The current season (the
last one of each competition) is packed around ``now``: fixture ``n // 2`` starts fifteen
minutes after it, one an hour either side, so a test sees fixtures complete, live and
about to start. Earlier seasons are spread over their dates and long finished.
"""

from __future__ import annotations

import calendar
import datetime as dt
import random

from asyncsports.emulator._ids import Coord, IdCodec, Kind, key, rng, uuid_from
from asyncsports.emulator._names import CITIES, COUNTRIES, FIRST_NAMES, LAST_NAMES, NICKNAMES
from asyncsports.emulator._records import (
    BIG_SEASON,
    Competition,
    Fixture,
    Location,
    Player,
    Scale,
    Season,
    Team,
    Venue,
    fixture_bits,
)
from asyncsports.emulator._sports import SPORTS, SportRules

_DAY = 86400

__all__ = ["World"]


def _season_years(rules: SportRules, now: dt.datetime) -> int:
    if rules.split_season:
        return now.year if now.month >= 8 else now.year - 1
    return now.year


def _epoch(year: int, month: int, day: int) -> int:
    return calendar.timegm((year, month, day, 0, 0, 0))


class World:
    """The data service's catalogue for one seed, anchored at the emulator's start time."""

    def __init__(self, seed: int, now: dt.datetime, scale: Scale) -> None:
        self.seed = seed
        self.now = now
        self.scale = scale
        self.codec = IdCodec(seed)
        self._competitions: dict[str, tuple[Competition, ...]] = {}
        self._seasons: dict[str, tuple[Season, ...]] = {}
        self._ranks: dict[str, dict[str, int]] = {}
        self._squads: dict[str, tuple[Player, ...]] = {}

    # ----------------------------------------------------------------- lookups

    @staticmethod
    def rules(sport: str) -> SportRules | None:
        """The rules of a sport by wire name, None for an unknown one."""
        return SPORTS.get(sport)

    def competitions(self, sport: str) -> tuple[Competition, ...]:
        """The competitions of a sport."""
        if sport not in self._competitions:
            self._competitions[sport] = self._make_competitions(SPORTS[sport])
        return self._competitions[sport]

    def seasons(self, sport: str) -> tuple[Season, ...]:
        """Every season of a sport, benchmark seasons included, in a fixed order."""
        if sport not in self._seasons:
            comps = self.competitions(sport)
            seasons = [self._make_season(c, s) for c in comps for s in range(self.scale.seasons)]
            rules = SPORTS[sport]
            if self.scale.big_fixture_list and sport == "basketball":
                seasons.append(self._make_big(comps[0], self.scale.big_fixture_list, 0))
            if self.scale.big_timeline and sport == "american-football":
                seasons.append(self._make_big(comps[0], 1, self.scale.big_timeline))
            self._seasons[rules.name] = tuple(seasons)
        return self._seasons[sport]

    def lookup(self, text: str, kind: Kind, sport: str | None = None) -> Coord | None:
        """The coordinates of an id of ``kind`` (in ``sport`` if given), else None."""
        coord = self.codec.decode(text)
        if coord is None or coord.kind != kind:
            return None
        names = list(SPORTS)
        if coord.sport >= len(names) or (sport is not None and names[coord.sport] != sport):
            return None
        return coord

    def season(self, text: str, sport: str | None = None) -> Season | None:
        """The season (or, with ``Kind.STAGE`` ids, use :meth:`stage`) with this id."""
        return self._season_at(self.lookup(text, Kind.SEASON, sport))

    def stage(self, text: str, sport: str | None = None) -> Season | None:
        """The season whose stage has this id."""
        return self._season_at(self.lookup(text, Kind.STAGE, sport))

    def team(self, text: str, sport: str | None = None) -> Team | None:
        """The team with this id."""
        coord = self.lookup(text, Kind.TEAM, sport)
        if coord is None:
            return None
        comps = self.competitions(list(SPORTS)[coord.sport])
        if coord.comp >= len(comps) or coord.number >= len(comps[coord.comp].teams):
            return None
        return comps[coord.comp].teams[coord.number]

    def fixture_by_id(self, text: str, sport: str | None = None) -> Fixture | None:
        """The fixture with this id."""
        coord = self.lookup(text, Kind.FIXTURE, sport)
        season = self._season_at(coord)
        if coord is None or season is None or coord.number >= season.n:
            return None
        return self.fixture(season, coord.number)

    def _season_at(self, coord: Coord | None) -> Season | None:
        if coord is None:
            return None
        for season in self.seasons(list(SPORTS)[coord.sport]):
            if season.competition.index == coord.comp and season.index == coord.season:
                return season
        return None

    def fixture(self, season: Season, i: int) -> Fixture:
        """Fixture ``i`` of ``season``."""
        home, away = season.pairs[i % len(season.pairs)]
        teams = season.competition.teams
        rules = season.rules
        fid = self.codec.encode(Kind.FIXTURE, rules.code, season.competition.index, season.index, i)
        return Fixture(
            season, i, fid, season.start_of(i), teams[home], teams[away], fixture_bits(season, i)
        )

    def name_rank(self, sport: str) -> dict[str, int]:
        """Rank of every possible fixture name of a sport in sorted order."""
        if sport not in self._ranks:
            names = sorted(
                {
                    f"{a.name} v {b.name}"
                    for c in self.competitions(sport)
                    for a in c.teams
                    for b in c.teams
                    if a is not b
                }
            )
            self._ranks[sport] = {name: rank for rank, name in enumerate(names)}
        return self._ranks[sport]

    def squad(self, team: Team, sport: str) -> tuple[Player, ...]:
        """The players of a team (the same in every season)."""
        if team.id not in self._squads:
            self._squads[team.id] = self._make_squad(team, SPORTS[sport])
        return self._squads[team.id]

    # ------------------------------------------------------------------ making

    def _make_squad(self, team: Team, rules: SportRules) -> tuple[Player, ...]:
        if rules.individual:
            first, _, last = team.name.partition(" ")
            loc = self._nationality(rng(self.seed, "nat", team.id))
            return (
                Player(
                    uuid_from(key(self.seed, "player", team.id)),
                    team.name,
                    first,
                    last,
                    "1",
                    loc,
                    True,
                ),
            )
        r = rng(self.seed, "squad", team.id)
        numbers = r.sample(range(1, 100), rules.squad_size)
        # Some quirks are pinned to slots, so that every squad list shows them.
        odd = team.index % 2
        players = []
        for slot, number in enumerate(numbers):
            first, last = r.choice(FIRST_NAMES), r.choice(LAST_NAMES)
            mononym = _pinned(r.random(), slot == 0 and team.index % 3 == 0, 0.08)
            underscore = _pinned(r.random(), slot == 1 and odd == 1, 0.05)
            nationality = self._nationality(r, pin=slot == 2 + odd)
            players.append(
                Player(
                    id=uuid_from(key(self.seed, "player", team.id, slot)),
                    full_name=first if mononym else f"{first} {last}",
                    first_name=first,
                    last_name=None if mononym else last,
                    shirt=f"_{number}" if underscore else str(number),
                    location=nationality,
                    verified=r.random() < 0.85,
                )
            )
        return tuple(players)

    def _nationality(self, r: random.Random, pin: bool = False) -> Location:
        """A nationality; one in twenty is ``{}``, one in fifteen has empty country and continent."""
        country = r.choice(COUNTRIES)
        x = r.random()
        if x < 0.05 or (pin and r.random() < 0.5):
            return Location(None, None, None, empty=True)
        if x < 0.12 or pin:
            return Location(None, None, None)
        return Location(None, country.name, country.continent)

    def _make_competitions(self, rules: SportRules) -> tuple[Competition, ...]:
        c_count, t_count = self.scale.competitions, self.scale.teams
        r = rng(self.seed, "teams", rules.name)
        if rules.individual:
            pool = [(f, la) for f in FIRST_NAMES for la in LAST_NAMES]
        else:
            pool = [(c, n) for c in CITIES for n in NICKNAMES]
        if c_count * t_count > len(pool):
            raise ValueError("too many teams for the name pool")
        picks = r.sample(pool, c_count * t_count)
        comps = []
        for c in range(c_count):
            cr = rng(self.seed, "competition", rules.name, c)
            base = rules.competition_names[c % len(rules.competition_names)]
            name = base if c < len(rules.competition_names) else f"{base} {c + 1}"
            category = (1, "Men") if cr.random() < 0.7 else (2, "Women")
            country = cr.choice(COUNTRIES)
            quirk = cr.random()
            location = (
                Location(None, None, None, empty=True)
                if quirk < 0.15
                else Location(None, None, country.continent)
                if quirk < 0.3
                else Location(country.name, country.name, country.continent)
            )
            teams = tuple(
                self._make_team(rules, c, t, picks[c * t_count + t], category)
                for t in range(t_count)
            )
            comps.append(
                Competition(
                    rules=rules,
                    index=c,
                    id=self.codec.encode(Kind.COMPETITION, rules.code, c, 0, 0),
                    name=name,
                    category=category,
                    tour=(100 + c, "International" if cr.random() < 0.3 else "Domestic"),
                    location=location,
                    teams=teams,
                    kind="Cup" if "Cup" in name else "League",
                    latest_comment=cr.choice(("Schedule confirmed", "Venue change", "")),
                    comment_count=cr.randint(0, 12),
                    has_standings=rules.name != "snooker"
                    and not (rules.name == "soccer" and c % 2 == 1),
                )
            )
        return tuple(comps)

    def _make_team(
        self,
        rules: SportRules,
        comp: int,
        index: int,
        words: tuple[str, str],
        category: tuple[int, str],
    ) -> Team:
        r = rng(self.seed, "team", rules.name, comp, index)
        tid = self.codec.encode(Kind.TEAM, rules.code, comp, 0, index)
        city = words[0]
        country = r.choice(COUNTRIES)
        quirk = (r.random(), 0.05, r.random(), 0.15)[index % 4]  # pinned in every fourth team
        location = (
            Location(None, None, None, empty=True)
            if quirk < 0.1
            else Location(city, None, None)
            if quirk < 0.2
            else Location(city, country.name, country.continent)
        )
        venue_name = f"{city} {r.choice(('Arena', 'Stadium', 'Park', 'Centre', 'Hall'))}"
        if rules.individual:
            venue_name = f"{r.choice(CITIES)} Snooker Centre"
        venue = Venue(
            id=uuid_from(key(self.seed, "venue", tid)),
            name=venue_name,
            location=location,
            lat=round(country.lat + r.uniform(-2, 2), 6),
            lon=round(country.lon + r.uniform(-2, 2), 6),
        )
        name = f"{words[0]} {words[1]}"
        club = name if rules.individual else f"{city} {r.choice(('Sports Club', 'Athletic', 'FC'))}"
        return Team(
            id=tid,
            name=name,
            index=index,
            club_id=uuid_from(key(self.seed, "club", tid)),
            club_name=club,
            category=category,
            venue=venue,
            colour=(r.randrange(256), r.randrange(256), r.randrange(256)),
        )

    def _pairs(self, comp: Competition, season_index: int) -> tuple[tuple[int, int], ...]:
        t = len(comp.teams)
        pairs = [(h, a) for h in range(t) for a in range(t) if h != a]
        rng(self.seed, "pairs", comp.id, season_index).shuffle(pairs)
        return tuple(pairs)

    def _season_shell(
        self,
        comp: Competition,
        index: int,
        name: str,
        start: int,
        end: int,
        n: int,
        first: int,
        gap: int,
        actions: int = 0,
    ) -> Season:
        rules = comp.rules
        pairs = self._pairs(comp, index)
        rank = self.name_rank(rules.name)
        names = [f"{comp.teams[h].name} v {comp.teams[a].name}" for h, a in pairs]
        code = (rules.code, comp.index, index)
        return Season(
            competition=comp,
            index=index,
            id=self.codec.encode(Kind.SEASON, *code, 0),
            name=name,
            start=start,
            end=end,
            stage_id=self.codec.encode(Kind.STAGE, *code, 0),
            stage_name="Regular Season",
            group_id=uuid_from(key(self.seed, "group", *code)),
            group_name=None if comp.index % 2 == 0 else f"Group {'ABCD'[index % 4]}",
            n=n,
            first=first,
            gap=gap,
            pairs=pairs,
            pair_rank=tuple(rank[x] for x in names),
            key=key(self.seed, "season", *code),
            actions=actions,
        )

    def _make_season(self, comp: Competition, index: int) -> Season:
        rules = comp.rules
        current = self.scale.seasons - 1
        year = _season_years(rules, self.now) - (current - index)
        if rules.split_season:
            start, end = _epoch(year, 8, 1), _epoch(year + 1, 7, 31)
            name = f"{year}/{year + 1}"
        else:
            start, end = _epoch(year, 1, 1), _epoch(year, 12, 31)
            name = str(year)
        n = self.scale.fixtures_per_season
        span = end - start - 21 * _DAY
        if index == current:
            gap = _minutes(min(3600, span // max(n, 1)))
            now = int(self.now.timestamp()) // 60 * 60
            first = now + 900 - (n // 2) * gap
        else:
            gap = _minutes(span // max(n, 1))
            first = start + 7 * _DAY + 19 * 3600
        return self._season_shell(comp, index, name, start, end, n, first, gap)

    def _make_big(self, comp: Competition, n: int, actions: int) -> Season:
        """A finished benchmark season: ``n`` fixtures a minute apart, ending a day ago."""
        gap = 60 if n > 1 else 3600
        now = int(self.now.timestamp()) // 3600 * 3600
        first = now - 2 * _DAY - n * gap
        name = "Benchmark Timeline" if actions else "Benchmark"
        return self._season_shell(
            comp, BIG_SEASON, name, first - _DAY, now - _DAY, n, first, gap, actions
        )


def _pinned(x: float, pinned: bool, rate: float) -> bool:
    """A quirk that happens at ``rate``, and always where it is pinned."""
    return pinned or x < rate


def _minutes(seconds: int) -> int:
    """Round a gap to whole minutes when it is long enough to look like a schedule."""
    return max(1, seconds // 60 * 60 if seconds >= 120 else seconds)
