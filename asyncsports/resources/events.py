"""Live stream events: the listing of booked events, and playback addresses."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterable
from contextlib import aclosing
from typing import Any, Literal, Unpack, get_args

from asyncsports._http import request as arg
from asyncsports._http.request import Param, Request, RequestOptions
from asyncsports._iter.watch import Change, Tracker
from asyncsports.models import Event, Playback
from asyncsports.paging import AsyncList, Page, ResumeToken
from asyncsports.resources._base import Body, Resource, open_filter, traced

PATH = "/api/v2/streaming/events"
Restriction = Literal["whitelist", "blacklist"]
"""The spec's ``restrictions`` values; any other str is sent as given."""
RESTRICTIONS: tuple[str, ...] = get_args(Restriction)
MAX_PAGE_SIZE = 500


def _listing(params: Iterable[Param]) -> Request:
    """The events listing with ``params``."""
    return Request(PATH, tuple(params), host="streaming", route=PATH)


class EventsResource(Resource):
    """``client.events``: live stream events on the streaming host."""

    @traced
    def list(
        self,
        *,
        live: bool | None = None,
        vendor_data_id: bool | None = None,
        restrictions: Restriction | str | None = None,
        sub_restrictions: Restriction | str | None = None,
        page_size: int | None = None,
        resume: ResumeToken | str | None = None,
        lookahead: int = 1,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[Event]:
        """Future and live events; only the live ones with ``live=True``.

        ``live=False`` is no live filter, the same as None (and as in ``fixtures.list``).
        ``vendor_data_id=True`` adds each event's id in the data service.

        With ``restrictions`` or ``sub_restrictions`` (``"whitelist"`` or ``"blacklist"``)
        each event carries its country (and US state) lists, and the listing is paged by
        ``page_size`` (at most 500).
        ``extra_query``, ``extra_headers``: see :class:`~asyncsports.RequestOptions`.
        """
        params: list[Param] = [
            *arg.narrowing("live", live, "live"),
            *arg.narrowing("vendor_data_id", vendor_data_id, "vendorDataID"),
            *open_filter("restrictions", restrictions, RESTRICTIONS, "restrictions"),
            *open_filter("sub_restrictions", sub_restrictions, RESTRICTIONS, "subRestrictions"),
        ]
        if page_size is not None:
            params.append(
                ("page.size", arg.integer("page_size", page_size, low=1, high=MAX_PAGE_SIZE))
            )
        req = arg.options(_listing(params), extra)
        if restrictions is None and sub_restrictions is None:
            # Unpaged (the service pages only with restrictions): no use for lookahead,
            # checked all the same.
            arg.integer("lookahead", lookahead, low=0, high=64)
            return self._body_list(req, _EVENTS, _as_list, resume)
        size = page_size or MAX_PAGE_SIZE
        return self._paged(req, "page.page", _EVENTS, _page, size, resume, 1, lookahead)

    @traced
    async def watch(
        self,
        *,
        interval: float = 30.0,
        jitter: float = 0.1,
        **extra: Unpack[RequestOptions],
    ) -> AsyncGenerator[Change[Event], None]:
        """Poll the live-only listing and yield what goes live and what ends.

        ``Change("live", event)``: the event is live, request its playback address now.
        ``Change("ended", event)``: it left the live listing, stop requesting. Runs until
        the caller stops iterating; a poll that fails for a passing reason is logged and
        the next one tried. The spec suggests polling about every 30 seconds; ``jitter``
        spreads the interval so that many watchers drift apart. ``extra_query``,
        ``extra_headers``: see :class:`~asyncsports.RequestOptions`.
        """
        req = arg.options(_listing(arg.narrowing("live", True, "live")), extra)
        value = self._value()
        tracker: Tracker[Any] = Tracker(lambda r: value(r).id, presence=True)
        polls = self._polls(req, _EVENTS, _as_list, interval, jitter)
        async with aclosing(polls):
            async for events in polls:
                for change in tracker.seen(events):
                    yield change

    @traced
    async def playback(self, event_id: int, **extra: Unpack[RequestOptions]) -> Playback:
        """The playback (HLS) address of a live event.

        ``extra_query``, ``extra_headers``: see :class:`~asyncsports.RequestOptions`.
        """
        path = f"{PATH}/{arg.integer('event_id', event_id, low=0)}/stream"
        req = Request(path, host="streaming", route=PATH + "/{eventId}/stream")
        req = arg.options(req, extra)
        return await self._one(req, _PLAYBACK)


def _as_list(body: list[Event] | Event) -> list[Event]:
    return body if isinstance(body, list) else [body]


def _page(body: list[Event] | Event) -> Page[Event]:
    return Page(_as_list(body))


_EVENTS: Body[list[Event] | Event] = Body(list[Event] | Event)
_PLAYBACK: Body[Playback] = Body(Playback)
