"""The catalogue's records and the per-fixture attribute bits: plain values, no building.

:class:`~asyncsports.emulator._world.World` builds these; a fixture's type, coverage,
status and quirks are pure functions of its 64 attribute bits and its season.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from asyncsports.emulator._ids import MASK64, mix64
from asyncsports.emulator._sports import SportRules

__all__ = [
    "BIG_SEASON",
    "COVERAGES",
    "STATUSES",
    "TYPES",
    "Competition",
    "Fixture",
    "Location",
    "Player",
    "Scale",
    "Season",
    "Team",
    "Venue",
]

BIG_SEASON = 255
"""Season index of the benchmark seasons (a huge fixture list, a huge timeline)."""


_PLAIN_BITS = MASK64
"""Attribute bits of a fixture that is official, not deleted and not postponed."""


@dataclass(frozen=True, slots=True)
class Scale:
    """How much data there is. Every count is per parent (teams per competition...)."""

    competitions: int = 2
    seasons: int = 2
    teams: int = 8
    fixtures_per_season: int = 24
    actions_per_fixture: int = 120
    big_fixture_list: int = 0
    big_timeline: int = 0

    def __post_init__(self) -> None:
        checks = (
            ("competitions", self.competitions, 1, 63),
            ("seasons", self.seasons, 1, BIG_SEASON - 1),
            ("teams", self.teams, 2, 200),
            ("fixtures_per_season", self.fixtures_per_season, 0, 1 << 32),
            ("actions_per_fixture", self.actions_per_fixture, 0, 1 << 32),
            ("big_fixture_list", self.big_fixture_list, 0, 1 << 32),
            ("big_timeline", self.big_timeline, 0, 1 << 32),
        )
        for name, value, low, high in checks:
            if not low <= value <= high:
                raise ValueError(f"{name} must be within {low}..{high}, got {value}")


@dataclass(frozen=True, slots=True, eq=False)
class Location:
    """A place as the wire writes it; ``None`` parts render as empty objects or are left out."""

    name: str | None
    country: str | None
    continent: str | None
    empty: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class Venue:
    """A team's home ground."""

    id: str
    name: str
    location: Location
    lat: float
    lon: float


@dataclass(frozen=True, slots=True, eq=False)
class Team:
    """A team of a competition (for snooker: one player)."""

    id: str
    name: str
    index: int
    club_id: str
    club_name: str
    category: tuple[int, str]
    venue: Venue
    colour: tuple[int, int, int]


@dataclass(frozen=True, slots=True, eq=False)
class Player:
    """A squad member. ``last_name`` is None for one-name players."""

    id: str
    full_name: str
    first_name: str
    last_name: str | None
    shirt: str
    location: Location
    verified: bool


@dataclass(frozen=True, slots=True, eq=False)
class Competition:
    """A competition of one sport, with its teams (the same every season)."""

    rules: SportRules
    index: int
    id: str
    name: str
    category: tuple[int, str]
    tour: tuple[int, str]
    location: Location
    teams: tuple[Team, ...]
    kind: str
    latest_comment: str
    comment_count: int
    has_standings: bool


@dataclass(frozen=True, slots=True, eq=False)
class Season:
    """A season (with its one stage) and its fixture schedule."""

    competition: Competition
    index: int
    id: str
    name: str
    start: int
    end: int
    stage_id: str
    stage_name: str
    group_id: str
    group_name: str | None
    n: int
    first: int
    gap: int
    pairs: tuple[tuple[int, int], ...]
    pair_rank: tuple[int, ...]
    key: int
    actions: int

    @property
    def rules(self) -> SportRules:
        """The sport's rules."""
        return self.competition.rules

    def start_of(self, i: int) -> int:
        """Start time (epoch seconds) of fixture ``i``."""
        return self.first + i * self.gap

    def first_at_or_after(self, t: float) -> int:
        """The smallest fixture index starting at or after ``t`` (within 0..n)."""
        i = -int((self.first - t) // self.gap)  # ceil((t - first) / gap)
        return min(max(i, 0), self.n)


@dataclass(frozen=True, slots=True, eq=False)
class Fixture:
    """Fixture ``index`` of ``season``. Attributes come from the 64 ``bits`` of its hash."""

    season: Season
    index: int
    id: str
    start: int
    home: Team
    away: Team
    bits: int

    @property
    def end(self) -> int:
        """When the closing record is sent (epoch seconds)."""
        return fixture_end(self.season, self.start, self.bits)

    @property
    def deleted(self) -> bool:
        """fixtureDeleted."""
        return is_deleted(self.bits)

    @property
    def postponed(self) -> bool:
        """Postponed fixtures never start."""
        return is_postponed(self.bits)

    @property
    def type(self) -> str:
        """Filter value of the type: official, simulation or training."""
        return type_of(self.bits)

    @property
    def coverage(self) -> str:
        """Filter value of the coverage level."""
        return coverage_of(self.bits)

    def flag(self, name: str) -> bool:
        """Per-fixture quirks (one fixture in eight each): ``v1_colours``, ``tiny_sequence``,
        ``null_first_names``, ``overnight`` (a cue-sport shot time past a day),
        ``suspended`` (collection suspended between the first two periods)."""
        shift = _FLAGS[name]
        return (self.bits >> shift) & 7 == 0

    @property
    def update_count(self) -> int:
        """Major updates of the fixture (``updateCount``): 0 mostly; a postponement adds one."""
        return max(0, ((self.bits >> 57) & 7) - 5) + self.postponed

    def status(self, now: float) -> str:
        """Filter value of the status at ``now``."""
        return status_of(self.season, self.start, self.bits, now)

    def periods(self) -> list[tuple[int, int]]:
        """Home and away points per period (the result the timeline is written to reach)."""
        return self.season.rules.period_scores(random.Random(mix64(self.season.key ^ ~self.index)))


_FLAGS = {
    "v1_colours": 42,
    "tiny_sequence": 45,
    "null_first_names": 48,
    "overnight": 51,
    "suspended": 54,
}
_TYPES = ((13, "training"), (38, "simulation"), (256, "official"))
_COVERAGE = (
    (26, "noCoverage"),
    (128, "inVenue"),
    (176, "lowLatencyStream"),
    (224, "standardStream"),
    (256, "video(postmatch)"),
)
STATUSES = ("scheduled", "live", "completed", "postponed")
TYPES = tuple(name for _, name in _TYPES)
COVERAGES = tuple(name for _, name in _COVERAGE)
# One entry per byte value: the listing tests these for every fixture it scans.
_TYPE_OF_BYTE = tuple(next(n for bound, n in _TYPES if v < bound) for v in range(256))
_COVERAGE_OF_BYTE = tuple(next(n for bound, n in _COVERAGE if v < bound) for v in range(256))


def fixture_bits(season: Season, i: int) -> int:
    """The attribute bits of fixture ``i`` (cheap: the listing filters on them)."""
    return _PLAIN_BITS if season.actions else mix64(season.key ^ i)


def is_deleted(bits: int) -> bool:
    """Whether these bits mark a deleted fixture (about 3 in 100)."""
    return bits & 0xFF < 8


def is_postponed(bits: int) -> bool:
    """Whether these bits mark a postponed fixture (about 2 in 100)."""
    return (bits >> 8) & 0xFF < 6


def type_of(bits: int) -> str:
    """Filter value of the type."""
    return _TYPE_OF_BYTE[(bits >> 16) & 0xFF]


def coverage_of(bits: int) -> str:
    """Filter value of the coverage level."""
    return _COVERAGE_OF_BYTE[(bits >> 24) & 0xFF]


def fixture_end(season: Season, start: int, bits: int) -> int:
    """When the fixture's closing record is sent: the sport's duration and up to 17 minutes."""
    return start + season.rules.duration + ((bits >> 32) & 0x3FF)


def status_of(season: Season, start: int, bits: int, now: float) -> str:
    """Filter value of the status at ``now``."""
    if is_postponed(bits):
        return "postponed"
    if now < start:
        return "scheduled"
    return "live" if now < fixture_end(season, start, bits) else "completed"
