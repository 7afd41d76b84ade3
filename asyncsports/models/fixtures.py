"""Fixtures (api-spec 2.1) and the paged list envelope."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Final

from msgspec import Struct, field

from asyncsports.models._types import Location, Ref, flag, utc

__all__ = [
    "Category",
    "Club",
    "Competition",
    "CoverageLevel",
    "Fixture",
    "FixturePage",
    "FixtureStatus",
    "FixtureType",
    "Pageable",
    "Rule",
    "Season",
    "SortState",
    "Stage",
    "Team",
    "Tour",
    "Venue",
]


class FixtureStatus:
    """Known ``Fixture.status`` values as the service writes them (the field is a plain str)."""

    SCHEDULED: Final = "Scheduled"
    LIVE: Final = "Live"
    COMPLETED: Final = "Completed"
    POSTPONED: Final = "Postponed"


class FixtureType:
    """Known ``Fixture.type`` values (the field is a plain str)."""

    OFFICIAL: Final = "Official"
    SIMULATION: Final = "Simulation"
    TRAINING: Final = "Training"


class CoverageLevel:
    """Known ``Fixture.coverage_level`` texts (the field is a plain str)."""

    NO_COVERAGE: Final = "No Coverage"
    IN_VENUE: Final = "In Venue"
    LOW_LATENCY_STREAM: Final = "Low Latency Stream"
    STANDARD_STREAM: Final = "Standard Stream"
    VIDEO_POSTMATCH: Final = "Video (Postmatch)"


class Club(Ref, gc=False, kw_only=True):
    """A team's club: ``{id, name}``."""


class Category(Struct, gc=False, kw_only=True):
    """A team's or competition's category: ``{id: int, name}``."""

    id: int
    name: str | None = None


class Tour(Struct, gc=False, kw_only=True):
    """A competition's tour: ``{id: int, name}``."""

    id: int
    name: str | None = None


class Team(Struct, gc=False, kw_only=True, rename="camel"):
    """One side of a fixture. ``home_team`` is a bool (read from a boolean or its text)."""

    id: uuid.UUID
    name: str | None = None
    club: Club | None = None
    category: Category | None = None
    _home_team: bool | str | None = field(name="homeTeam", default=None)

    home_team = flag("_home_team")


class Competition(Struct, gc=False, kw_only=True, rename="camel"):
    """A competition; ``type``, ``latest_comment`` and ``comment_count`` come with volleyball."""

    id: uuid.UUID
    name: str | None = None
    type: str | None = None
    category: Category | None = None
    tour: Tour | None = None
    location: Location | None = None
    latest_comment: str | None = None
    comment_count: int | None = None


class Season(Struct, gc=False, kw_only=True, rename="camel"):
    """A season of a competition. ``start_date_utc``/``end_date_utc`` are aware UTC."""

    id: uuid.UUID
    name: str | None = None
    _start_date_utc: datetime | None = field(name="startDateUTC", default=None)
    _end_date_utc: datetime | None = field(name="endDateUTC", default=None)
    competition: Competition | None = None
    sport: str | None = None

    start_date_utc = utc("_start_date_utc")
    end_date_utc = utc("_end_date_utc")


class Stage(Struct, gc=False, kw_only=True, rename="camel"):
    """A stage of a season. ``start_date_utc``/``end_date_utc`` are aware UTC."""

    id: uuid.UUID
    name: str | None = None
    season: Season | None = None
    _start_date_utc: datetime | None = field(name="startDateUTC", default=None)
    _end_date_utc: datetime | None = field(name="endDateUTC", default=None)

    start_date_utc = utc("_start_date_utc")
    end_date_utc = utc("_end_date_utc")


class Venue(Struct, gc=False, kw_only=True):
    """Where a fixture is played."""

    id: uuid.UUID
    name: str | None = None
    location: Location | None = None


class Rule(Struct, gc=False, kw_only=True):
    """One rule of a fixture: its name (``"ExtraTime"``, ``"PeriodLength"``...) and its value
    as the service writes it (text such as ``"true"``, ``"45"`` or ``"null"``)."""

    rule: str | None = None
    value: str | int | float | bool | None = None


class Fixture(Struct, gc=False, kw_only=True, rename="camel"):
    """A fixture. ``start_date_utc`` is aware UTC; ``fixture_deleted`` means disregard it.

    ``status``, ``collection_status``, ``type`` and ``coverage_level`` are the service's
    text (see :class:`FixtureStatus`, :class:`~asyncsports.models.CollectionStatus`,
    :class:`FixtureType`, :class:`CoverageLevel`); any value decodes. ``rules`` lists the
    fixture's rules (soccer: extra time, period length, shootout...): see :meth:`rule`.
    ``update_count`` counts the fixture's major updates (a new date, a change of teams).
    """

    id: uuid.UUID
    name: str | None = None
    status: str | None = None
    collection_status: str | None = None
    type: str | None = None
    coverage_level: str | None = None
    _start_date_utc: datetime | None = field(name="startDateUTC", default=None)
    teams: list[Team] = []
    stage: Stage | None = None
    venue: Venue | None = None
    sport: str | None = None
    fixture_deleted: bool = False
    rules: list[Rule] | dict[str, Any] = []
    update_count: int | None = None

    start_date_utc = utc("_start_date_utc")

    def rule(self, name: str) -> Any:
        """The value of the rule ``name`` as the service wrote it, or None if it is not given.

        The service lists rules as ``[{"rule": name, "value": text}]``; an object mapping
        names to values is read the same way.
        """
        rules = self.rules
        if isinstance(rules, dict):
            return rules.get(name)
        for r in rules:
            if r.rule == name:
                return r.value
        return None


class SortState(Struct, gc=False, kw_only=True):
    """The sort flags of a page: ``{empty, unsorted, sorted}``."""

    empty: bool | None = None
    unsorted: bool | None = None
    sorted: bool | None = None


class Pageable(Struct, gc=False, kw_only=True, rename="camel"):
    """Which page was asked for: number, size, sort, offset."""

    page_number: int | None = None
    page_size: int | None = None
    sort: SortState | None = None
    offset: int | None = None
    paged: bool | None = None
    unpaged: bool | None = None


class FixturePage(Struct, gc=False, kw_only=True, rename="camel"):
    """The paged list envelope (api-spec 2.1); ``number`` is the 0-based page index.

    Page metadata the service leaves out is ``None``.
    """

    content: list[Fixture] = []
    pageable: Pageable | None = None
    last: bool | None = None
    first: bool | None = None
    total_pages: int | None = None
    total_elements: int | None = None
    size: int | None = None
    number: int | None = None
    number_of_elements: int | None = None
    sort: SortState | None = None
    empty: bool | None = None
