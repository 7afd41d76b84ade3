"""The floor: what a hand-written client would decode a fixture page into.

Bare msgspec Structs with ``gc=False`` mirroring asyncsports.models' Fixture and its
paged envelope (api-spec 2.1) field for field and type for type. This module imports
nothing but msgspec, so that the process measuring the floor holds only what the floor
and asyncsports need (see benchmarks/README.md on why that matters).
"""

from __future__ import annotations

import uuid
from datetime import datetime

import msgspec

__all__ = ["FFixture", "FloorPage"]


class FRef(msgspec.Struct, gc=False, kw_only=True):
    id: uuid.UUID
    name: str | None = None


class FCategory(msgspec.Struct, gc=False, kw_only=True):
    id: int
    name: str | None = None


class FNamed(msgspec.Struct, gc=False, kw_only=True):
    name: str | None = None


class FLocation(msgspec.Struct, gc=False, kw_only=True):
    name: str | None = None
    country: FNamed | None = None
    continent: FNamed | None = None


class FTeam(msgspec.Struct, gc=False, kw_only=True, rename="camel"):
    id: uuid.UUID
    name: str | None = None
    club: FRef | None = None
    category: FCategory | None = None
    home_team: bool | None = None


class FCompetition(msgspec.Struct, gc=False, kw_only=True, rename="camel"):
    id: uuid.UUID
    name: str | None = None
    type: str | None = None
    category: FCategory | None = None
    tour: FCategory | None = None
    location: FLocation | None = None
    latest_comment: str | None = None
    comment_count: int | None = None


class FSeason(msgspec.Struct, gc=False, kw_only=True, rename="camel"):
    id: uuid.UUID
    name: str | None = None
    start_date_utc: datetime | None = msgspec.field(name="startDateUTC", default=None)
    end_date_utc: datetime | None = msgspec.field(name="endDateUTC", default=None)
    competition: FCompetition | None = None
    sport: str | None = None


class FStage(msgspec.Struct, gc=False, kw_only=True, rename="camel"):
    id: uuid.UUID
    name: str | None = None
    season: FSeason | None = None
    start_date_utc: datetime | None = msgspec.field(name="startDateUTC", default=None)
    end_date_utc: datetime | None = msgspec.field(name="endDateUTC", default=None)


class FVenue(msgspec.Struct, gc=False, kw_only=True):
    id: uuid.UUID
    name: str | None = None
    location: FLocation | None = None


class FFixture(msgspec.Struct, gc=False, kw_only=True, rename="camel"):
    id: uuid.UUID
    name: str | None = None
    status: str | None = None
    collection_status: str | None = None
    type: str | None = None
    coverage_level: str | None = None
    start_date_utc: datetime | None = msgspec.field(name="startDateUTC", default=None)
    teams: list[FTeam] = []
    stage: FStage | None = None
    venue: FVenue | None = None
    sport: str | None = None
    fixture_deleted: bool = False


class FSort(msgspec.Struct, gc=False, kw_only=True):
    empty: bool | None = None
    unsorted: bool | None = None
    sorted: bool | None = None


class FPageable(msgspec.Struct, gc=False, kw_only=True, rename="camel"):
    page_number: int | None = None
    page_size: int | None = None
    sort: FSort | None = None
    offset: int | None = None
    paged: bool | None = None
    unpaged: bool | None = None


class FloorPage(msgspec.Struct, gc=False, kw_only=True, rename="camel"):
    content: list[FFixture] = []
    pageable: FPageable | None = None
    last: bool | None = None
    first: bool | None = None
    total_pages: int | None = None
    total_elements: int | None = None
    size: int | None = None
    number: int | None = None
    number_of_elements: int | None = None
    sort: FSort | None = None
    empty: bool | None = None
