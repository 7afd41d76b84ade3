"""Fixtures: list (paged, filtered, sorted) and get."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Sequence
from typing import Literal, Unpack, get_args

from asyncsports._http import request as q
from asyncsports._http.request import Param, Request, RequestOptions
from asyncsports._http.sports import Sport, sport_path
from asyncsports.models import Fixture, FixturePage
from asyncsports.paging import AsyncList, Page, ResumeToken
from asyncsports.resources._base import Body, Resource, open_filter, traced

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


def list_request(
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
    size: int | None = None,
    include_deleted: bool | None = None,
) -> Request:
    """The first-page request of a fixture listing (``page`` is added per page).

    The filters are open: a value of the spec in any spelling is sent in the wire
    spelling, any other as given.
    """
    base = sport_path(sport)
    if season_id is not None:
        path = f"{base}/seasons/{q.uuid_id('season_id', season_id)}/fixtures"
    else:
        path = f"{base}/fixtures"
    params: list[Param] = [("paged", "true")]
    params += q.narrowing("live", live, "live")
    params += open_filter("status", status, STATUSES, "status")
    if date_from is not None:
        params.append(("dateFrom", q.date("date_from", date_from)))
    if date_to is not None:
        params.append(("dateTo", q.date("date_to", date_to)))
    if date_from is not None and date_to is not None and params[-2][1] > params[-1][1]:
        raise ValueError(f"date_from: {params[-2][1]} is after date_to {params[-1][1]}")
    params += open_filter("type", type, TYPES, "type")
    params += open_filter("coverage_level", coverage_level, COVERAGE_LEVELS, "coverageLevel")
    if sort is not None:
        params.extend(q.sort_params("sort", sort, wire="sort", fields=SORT_FIELDS))
    if size is not None:
        params.append(("size", q.integer("size", size, low=1, high=MAX_SIZE)))
    if include_deleted is not None:
        flag = q.boolean("include_deleted", include_deleted)
        params.append(("includeDeleted", flag))
        if base == "/basketball":
            # One basketball description spells it includeDelete: send both.
            params.append(("includeDelete", flag))
    route = "/{sport}/seasons/{seasonId}/fixtures" if season_id is not None else "/{sport}/fixtures"
    return Request(path, tuple(params), route=route)


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
        size: int | None = None,
        include_deleted: bool | None = None,
        resume: ResumeToken | str | None = None,
        concurrency: int = 1,
        lookahead: int = 1,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[Fixture]:
        """Fixtures of ``sport`` (of one season if ``season_id``), walked page by page.

        Filters take the spec's values in any case or response spelling
        (``status="Completed"``, ``coverage_level="In Venue"``), and any other value as
        given, for the service to judge (``status="suspended"``); ``sort`` is
        ``"startTime,desc"`` or a sequence of such, applied in order. ``size`` is the page size (default 20). ``live=True``
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
        req = list_request(
            sport,
            season_id=season_id,
            live=live,
            status=status,
            date_from=date_from,
            date_to=date_to,
            type=type,
            coverage_level=coverage_level,
            sort=sort,
            size=size,
            include_deleted=include_deleted,
        )
        req = q.options(req, extra)

        return AsyncList.paged(
            self._pages(req, "page", _PAGE, to_page, key="content"),
            size or DEFAULT_SIZE,
            resume,
            concurrency=concurrency,
            lookahead=lookahead,
            listing=req.fingerprint(),
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
        path = f"{sport_path(sport)}/fixtures/{q.uuid_id('fixture_id', fixture_id)}"
        req = q.options(Request(path, route="/{sport}/fixtures/{fixtureId}"), extra)
        return await self._one(req, _FIXTURE)


_PAGE: Body[FixturePage | list[Fixture]] = Body(FixturePage | list[Fixture])
_FIXTURE: Body[Fixture] = Body(Fixture)
