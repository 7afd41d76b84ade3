"""Fixtures: list (paged, filtered, sorted) and get."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from typing import Literal, Unpack, get_args

from asyncsports._http import request as arg
from asyncsports._http.request import Param, Request, RequestOptions
from asyncsports._http.sports import Sport, sport_path
from asyncsports.models import Fixture, FixturePage
from asyncsports.paging import AsyncList, Page, ResumeToken
from asyncsports.resources._base import Body, Resource, open_filter, renamed, traced

Status = Literal["scheduled", "live", "completed", "postponed"]
"""The ``status`` filter values of the spec; the service may know more (any str is sent)."""
FixtureType = Literal["official", "simulation", "training"]
"""The ``type`` filter values of the spec; any other str is sent as given."""
CoverageLevel = Literal[
    "noCoverage", "inVenue", "lowLatencyStream", "standardStream", "video(postmatch)"
]
"""The ``coverage_level`` filter values of the spec; any other str is sent as given."""
SortField = Literal["name", "startTime"]
STATUSES: tuple[str, ...] = get_args(Status)
TYPES: tuple[str, ...] = get_args(FixtureType)
COVERAGE_LEVELS: tuple[str, ...] = get_args(CoverageLevel)
SORT_FIELDS: tuple[str, ...] = get_args(SortField)
DEFAULT_SIZE = 20
MAX_SIZE = 1000


def _listing(base: str, season_id: uuid.UUID | str | None, params: list[Param]) -> Request:
    """The first-page request of a listing of all fixtures of a sport or of one season's
    (``page`` is added per page)."""
    if season_id is None:
        return Request(f"{base}/fixtures", tuple(params), route="/{sport}/fixtures")
    path = f"{base}/seasons/{arg.uuid_id('season_id', season_id)}/fixtures"
    return Request(path, tuple(params), route="/{sport}/seasons/{seasonId}/fixtures")


def _dates(date_from: dt.date | str | None, date_to: dt.date | str | None) -> list[Param]:
    """``dateFrom`` and ``dateTo``, checked to be in order when both are given."""
    params: list[Param] = []
    if date_from is not None:
        params.append(("dateFrom", arg.date("date_from", date_from)))
    if date_to is not None:
        params.append(("dateTo", arg.date("date_to", date_to)))
    if len(params) == 2 and params[0][1] > params[1][1]:
        raise ValueError(f"date_from: {params[0][1]} is after date_to {params[1][1]}")
    return params


def _deleted(include_deleted: bool | None, base: str) -> list[Param]:
    """``includeDeleted``; basketball's also as ``includeDelete``, the spelling of one of
    its descriptions (both are sent)."""
    if include_deleted is None:
        return []
    flag = arg.boolean("include_deleted", include_deleted)
    if base == "/basketball":
        return [("includeDeleted", flag), ("includeDelete", flag)]
    return [("includeDeleted", flag)]


def to_page(body: FixturePage | list[Fixture]) -> Page[Fixture]:
    """A decoded fixture body as a Page: an envelope, or a bare array that is everything."""
    if isinstance(body, list):
        return Page(body, whole=True)
    return Page(body.content, body.number, body.total_pages, body.last)


class FixturesResource(Resource):
    """``client.fixtures``: competition fixtures."""

    @traced
    def list(
        self,
        sport: Sport | str,
        *,
        season_id: uuid.UUID | str | None = None,
        live: bool | None = None,
        status: Status | str | None = None,
        date_from: dt.date | str | None = None,
        date_to: dt.date | str | None = None,
        type: FixtureType | str | None = None,
        coverage_level: CoverageLevel | str | None = None,
        sort: str | Sequence[str] | None = None,
        page_size: int | None = None,
        include_deleted: bool | None = None,
        resume: ResumeToken | str | None = None,
        concurrency: int = 1,
        lookahead: int = 1,
        size: int | None = None,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[Fixture]:
        """Fixtures of ``sport`` (of one season if ``season_id``), walked page by page.

        Filters take the spec's values in any case or response spelling
        (``status="Completed"``, ``coverage_level="In Venue"``), and any other value as
        given, for the service to judge (``status="suspended"``); ``sort`` is
        ``"startTime,desc"`` or a sequence of such, applied in order. ``page_size``: records a
        page, at most 1,000 (default 20; ``size`` is its deprecated old name). ``live=True``
        lists only live fixtures; ``live=False`` is no live filter, the same as None (and
        the same as in ``events.list``): it does not mean "only fixtures not live".

        The next ``lookahead`` pages are fetched while the caller works on the current
        one, while that pays (a caller that spends under a tenth of a page's round trip on
        a page gets its pages fetched in its own task); once the total is known up to
        ``concurrency`` pages are in flight at once.
        ``resume`` takes a ``resume_token`` of an earlier listing with the same arguments
        (a token of another listing is a ValueError).
        ``extra_query``, ``extra_headers``: see :class:`~asyncsports.RequestOptions`. ``extra_query={"subscribed": "true"}`` sends what the
        vendor's own consumer sends, which the spec omits.
        """
        base = sport_path(sport)
        size = renamed("page_size", page_size, "size", size)
        params: list[Param] = [
            ("paged", "true"),
            *arg.narrowing("live", live, "live"),
            *open_filter("status", status, STATUSES, "status"),
            *_dates(date_from, date_to),
            *open_filter("type", type, TYPES, "type"),
            *open_filter("coverage_level", coverage_level, COVERAGE_LEVELS, "coverageLevel"),
            *(
                []
                if sort is None
                else arg.sort_params("sort", sort, wire="sort", fields=SORT_FIELDS)
            ),
            *(
                []
                if size is None
                else [("size", arg.integer("page_size", size, low=1, high=MAX_SIZE))]
            ),
            *_deleted(include_deleted, base),
        ]
        req = arg.options(_listing(base, season_id, params), extra)
        size = size or DEFAULT_SIZE
        return self._paged(
            req, "page", _PAGE, to_page, size, resume, concurrency, lookahead, "content"
        )

    @traced
    async def get(
        self,
        sport: Sport | str,
        fixture_id: uuid.UUID | str,
        **extra: Unpack[RequestOptions],
    ) -> Fixture:
        """One fixture by id.

        ``extra_query``, ``extra_headers``: see :class:`~asyncsports.RequestOptions`.
        """
        path = f"{sport_path(sport)}/fixtures/{arg.uuid_id('fixture_id', fixture_id)}"
        req = arg.options(Request(path, route="/{sport}/fixtures/{fixtureId}"), extra)
        return await self._one(req, _FIXTURE)


_PAGE: Body[FixturePage | list[Fixture]] = Body(FixturePage | list[Fixture])
_FIXTURE: Body[Fixture] = Body(Fixture)
