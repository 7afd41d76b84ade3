"""Live stream events (api-spec 2.7) and playback addresses."""

from __future__ import annotations

from datetime import datetime

from msgspec import Struct, field

from asyncsports.models._types import utc

__all__ = ["Event", "EventProperty", "EventSport", "EventTournament", "Playback"]


class EventSport(Struct, gc=False, kw_only=True):
    """The sport of an event's property."""

    id: int
    name: str | None = None


class EventProperty(Struct, gc=False, kw_only=True):
    """The property (rights holder's competition) an event's tournament belongs to."""

    id: int
    name: str | None = None
    sport: EventSport | None = None


class EventTournament(Struct, gc=False, kw_only=True):
    """The tournament of an event."""

    id: int
    name: str | None = None
    property: EventProperty | None = None


class Event(Struct, gc=False, kw_only=True, rename="camel", omit_defaults=True):
    """A booked live video event. ``updated_at``, ``start_date``, ``end_date`` are aware UTC.

    ``vendor_data_id`` (wire ``vendorDataID``, also accepted as ``imgDataID``) is the event's
    id in the data service, present only when requested.
    """

    id: int
    title: str | None = None
    tournament: EventTournament | None = None
    _updated_at: datetime | None = field(name="updatedAt", default=None)
    _start_date: datetime | None = field(name="startDate", default=None)
    _end_date: datetime | None = field(name="endDate", default=None)
    vendor_data_id: str | None = field(name="vendorDataID", default=None)
    _img_data_id: str | None = field(name="imgDataID", default=None)
    restriction_request: str | None = None
    country_list: list[str] = []
    sub_division_list: list[str] = []

    updated_at = utc("_updated_at")
    start_date = utc("_start_date")
    end_date = utc("_end_date")

    def __post_init__(self) -> None:
        if self._img_data_id is not None:
            if self.vendor_data_id is None:
                self.vendor_data_id = self._img_data_id
            self._img_data_id = None


class Playback(Struct, gc=False, kw_only=True, rename="camel"):
    """The playback address of a live event."""

    event_id: int
    hls_url: str
