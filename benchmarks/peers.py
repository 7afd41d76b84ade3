"""The peer asyncsports is measured against: the same records as pydantic v2 models,
mirroring api-spec 2.1 (Fixture, the paged envelope) and 2.3 (Action).

They mirror asyncsports.models field for field and type for type (UUIDs, datetimes,
optional fields, nested records), with two differences, both in pydantic's favour:
asyncsports keeps an action's ``metadata`` as raw JSON and decodes it into a typed Struct
on access, where these models take it as ``dict[str, Any]`` (pydantic's cheapest faithful
form); and they leave naive datetimes naive (asyncsports makes them aware, on access).
"""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from pydantic.alias_generators import to_camel

__all__ = ["PYDANTIC_ACTIONS", "PYDANTIC_PAGE", "PAction", "PFixturePage"]


class _Model(BaseModel):
    # Wire names are camelCase; unknown fields are ignored, as asyncsports ignores them.
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class PRef(_Model):
    id: uuid.UUID
    name: str | None = None


class PCategory(_Model):
    id: int
    name: str | None = None


class PNamed(_Model):
    name: str | None = None


class PLocation(_Model):
    name: str | None = None
    country: PNamed | None = None
    continent: PNamed | None = None


class PTeam(_Model):
    id: uuid.UUID
    name: str | None = None
    club: PRef | None = None
    category: PCategory | None = None
    home_team: bool | None = None


class PCompetition(_Model):
    id: uuid.UUID
    name: str | None = None
    type: str | None = None
    category: PCategory | None = None
    tour: PCategory | None = None
    location: PLocation | None = None
    latest_comment: str | None = None
    comment_count: int | None = None


class PSeason(_Model):
    id: uuid.UUID
    name: str | None = None
    start_date_utc: datetime | None = Field(default=None, alias="startDateUTC")
    end_date_utc: datetime | None = Field(default=None, alias="endDateUTC")
    competition: PCompetition | None = None
    sport: str | None = None


class PStage(_Model):
    id: uuid.UUID
    name: str | None = None
    season: PSeason | None = None
    start_date_utc: datetime | None = Field(default=None, alias="startDateUTC")
    end_date_utc: datetime | None = Field(default=None, alias="endDateUTC")


class PVenue(_Model):
    id: uuid.UUID
    name: str | None = None
    location: PLocation | None = None


class PFixture(_Model):
    id: uuid.UUID
    name: str | None = None
    status: str | None = None
    collection_status: str | None = None
    type: str | None = None
    coverage_level: str | None = None
    start_date_utc: datetime | None = Field(default=None, alias="startDateUTC")
    teams: list[PTeam] = []
    stage: PStage | None = None
    venue: PVenue | None = None
    sport: str | None = None
    fixture_deleted: bool = False


class PSort(_Model):
    empty: bool | None = None
    unsorted: bool | None = None
    sorted: bool | None = None


class PPageable(_Model):
    page_number: int | None = None
    page_size: int | None = None
    sort: PSort | None = None
    offset: int | None = None
    paged: bool | None = None
    unpaged: bool | None = None


class PFixturePage(_Model):
    content: list[PFixture] = []
    pageable: PPageable | None = None
    last: bool | None = None
    first: bool | None = None
    total_pages: int | None = None
    total_elements: int | None = None
    size: int | None = None
    number: int | None = None
    number_of_elements: int | None = None
    sort: PSort | None = None
    empty: bool | None = None


class PFixtureAction(_Model):
    action_id: uuid.UUID
    fixture_id: uuid.UUID
    fixture_seq_num: int | None = None
    timeline_sequence: float | None = None
    fixture_action_type: str | None = None
    fixture_action_type_id: int | None = None
    fixture_action_sub_type: str | None = None
    fixture_action_sub_type_id: int | None = None
    period: int | None = None
    clock_time: str | None = None
    timestamp: datetime | None = None
    send_type: str | None = None
    send_type_id: int | None = None
    team: PRef | None = None
    player: PRef | None = None
    metadata: dict[str, Any] | None = None


class PPeriod(_Model):
    id: int
    type: str | None = None
    label: str | None = None
    start: datetime | None = None
    end: datetime | None = None
    away_team_score: int | None = None
    home_team_score: int | None = None
    away_team_period_score: int | None = None
    home_team_period_score: int | None = None


class PFixtureSummary(_Model):
    is_tied: bool | None = None
    away_team_score: int | None = None
    home_team_score: int | None = None
    current_period: int | None = None
    current_status: str | None = None
    current_clock_time: str | None = None
    periods: list[PPeriod] = []
    is_home_team_in_possesion: bool | None = None


class PAction(_Model):
    fixture_action: PFixtureAction
    fixture_summary: PFixtureSummary | None = None
    version: int | None = None
    finished: bool = False


PYDANTIC_PAGE: TypeAdapter[PFixturePage] = TypeAdapter(PFixturePage)
PYDANTIC_ACTIONS: TypeAdapter[list[PAction]] = TypeAdapter(list[PAction])
