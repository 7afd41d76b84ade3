"""Live stream events: the listing of booked events, and playback addresses."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any, Literal, Unpack, get_args, overload

from asyncsports import _request as q
from asyncsports._request import Param, Request, RequestOptions
from asyncsports._watch import Change, Tracker
from asyncsports.models import Event, Playback
from asyncsports.paging import AsyncList, Page, ResumeToken
from asyncsports.raw import RawRecord
from asyncsports.resources._base import Resource

PATH = "/api/v2/streaming/events"
Restriction = Literal["whitelist", "blacklist"]
"""The spec's ``restrictions`` values; any other str is sent as given."""
RESTRICTIONS: tuple[str, ...] = get_args(Restriction)
MAX_PAGE_SIZE = 500


def list_request(
    *,
    live: bool | None = None,
    vendor_data_id: bool | None = None,
    restrictions: Restriction | str | None = None,
    sub_restrictions: Restriction | str | None = None,
    page_size: int | None = None,
) -> tuple[Request, bool]:
    """The listing request, and whether it is paged (only with restrictions)."""
    params: list[Param] = []
    params += q.narrowing("live", live, "live")
    params += q.narrowing("vendor_data_id", vendor_data_id, "vendorDataID")
    if restrictions is not None:
        params.append(("restrictions", q.open_choice("restrictions", restrictions, RESTRICTIONS)))
    if sub_restrictions is not None:
        params.append(
            ("subRestrictions", q.open_choice("sub_restrictions", sub_restrictions, RESTRICTIONS))
        )
    if page_size is not None:
        params.append(("page.size", q.integer("page_size", page_size, low=1, high=MAX_PAGE_SIZE)))
    paged = restrictions is not None or sub_restrictions is not None
    return Request(PATH, tuple(params), host="streaming"), paged


class EventsResource(Resource):
    """``client.events``: live stream events on the streaming host."""

    @overload
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
        raw: Literal[False] = False,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[Event]: ...
    @overload
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
        raw: Literal[True],
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[RawRecord[Event]]: ...
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
        raw: bool = False,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[Event] | AsyncList[RawRecord[Event]]:
        """Future and live events; only the live ones with ``live=True``.

        ``live=False`` is no live filter, the same as None (and as in ``fixtures.list``).
        ``vendor_data_id=True`` adds each event's id in the data service.

        With ``restrictions`` or ``sub_restrictions`` (``"whitelist"`` or ``"blacklist"``)
        each event carries its country (and US state) lists, and the listing is paged by
        ``page_size`` (at most 500). ``raw=True``: each as a ``RawRecord(event, json)``.
        ``extra_query``, ``extra_headers``: see :class:`~asyncsports.RequestOptions`.
        """
        req, paged = list_request(
            live=live,
            vendor_data_id=vendor_data_id,
            restrictions=restrictions,
            sub_restrictions=sub_restrictions,
            page_size=page_size,
        )
        req = q.options(req, extra)
        if not paged:
            # An unpaged listing has no use for lookahead, but checks it all the same.
            q.integer("lookahead", lookahead, low=0, high=64)
            return self._body_list(req, list[Event] | Event, _as_list, resume, raw)

        async def fetch(number: int) -> Page[Any]:
            page = req.with_params(("page.page", str(number)))
            return Page(await self._records(page, list[Event] | Event, _as_list, raw))

        return AsyncList.paged(
            fetch,
            page_size or MAX_PAGE_SIZE,
            resume,
            lookahead=lookahead,
            listing=req.fingerprint(),
        )

    @overload
    def watch(
        self,
        *,
        interval: float = 30.0,
        jitter: float = 0.1,
        raw: Literal[False] = False,
        **extra: Unpack[RequestOptions],
    ) -> AsyncGenerator[Change[Event], None]: ...
    @overload
    def watch(
        self,
        *,
        interval: float = 30.0,
        jitter: float = 0.1,
        raw: Literal[True],
        **extra: Unpack[RequestOptions],
    ) -> AsyncGenerator[Change[RawRecord[Event]], None]: ...
    async def watch(
        self,
        *,
        interval: float = 30.0,
        jitter: float = 0.1,
        raw: bool = False,
        **extra: Unpack[RequestOptions],
    ) -> AsyncGenerator[Change[Any], None]:
        """Poll the live-only listing and yield what goes live and what ends.

        ``Change("live", event)``: the event is live, request its playback address now.
        ``Change("ended", event)``: it left the live listing, stop requesting. Runs until
        the caller stops iterating; a poll that fails for a passing reason is logged and
        the next one tried. The spec suggests polling about every 30 seconds; ``jitter``
        spreads the interval so that many watchers drift apart. ``raw=True``: each change
        carries a ``RawRecord(event, json)``. ``extra_query``, ``extra_headers``: see :class:`~asyncsports.RequestOptions`.
        """
        req, _ = list_request(live=True)
        req = q.options(req, extra)
        key = _raw_event_id if raw else _event_id
        tracker: Tracker[Any] = Tracker(key, presence=True)
        polls = self._polls(req, list[Event] | Event, _as_list, interval, jitter, raw)
        async with aclosing(polls):
            async for events in polls:
                for change in tracker.seen(events):
                    yield change

    @overload
    async def playback(
        self, event_id: int, *, raw: Literal[False] = False, **extra: Unpack[RequestOptions]
    ) -> Playback: ...
    @overload
    async def playback(
        self, event_id: int, *, raw: Literal[True], **extra: Unpack[RequestOptions]
    ) -> RawRecord[Playback]: ...
    async def playback(
        self, event_id: int, *, raw: bool = False, **extra: Unpack[RequestOptions]
    ) -> Playback | RawRecord[Playback]:
        """The playback (HLS) address of a live event (``raw=True``: with the body as sent).

        ``extra_query``, ``extra_headers``: see :class:`~asyncsports.RequestOptions`.
        """
        req = Request(f"{PATH}/{q.integer('event_id', event_id, low=0)}/stream", host="streaming")
        req = q.options(req, extra)
        if raw:
            return await self._one_raw(req, Playback)
        playback: Playback = await self._one(req, Playback)
        return playback


def _as_list(body: list[Event] | Event) -> list[Event]:
    return body if isinstance(body, list) else [body]


def _event_id(event: Event) -> int:
    return event.id


def _raw_event_id(record: RawRecord[Event]) -> int:
    return record.value.id
