"""Handlers of the live stream events listing (api-spec 4.8) and its playback address."""

from __future__ import annotations

from typing import Any
from xml.sax.saxutils import escape

from aiohttp import web
from multidict import MultiMapping

from asyncsports.emulator._clock import Clock
from asyncsports.emulator._events import EventSchedule, StreamEvent
from asyncsports.emulator._faults import Fault
from asyncsports.emulator._http import HttpError, Reply, boolean, integer, json_reply
from asyncsports.emulator._wire import plus0000

__all__ = ["EventsApi"]

MAX_PAGE_SIZE = 500


def _restriction(query: MultiMapping[str], name: str) -> str | None:
    value = query.get(name)
    if value is not None and value.lower() not in ("whitelist", "blacklist"):
        raise HttpError(400, f"{name}: expected whitelist or blacklist, got {value!r}")
    return None if value is None else value.lower()


def _xml(tag: str, value: Any) -> str:
    if isinstance(value, dict):
        inner = "".join(_xml(k, v) for k, v in value.items())
    elif isinstance(value, list):
        inner = "".join(_xml("item", v) for v in value)
    elif isinstance(value, bool):
        inner = "true" if value else "false"
    else:
        inner = escape(str(value))
    return f"<{tag}>{inner}</{tag}>"


class EventsApi:
    """The events listing: future and live events, filtered, optionally paged."""

    def __init__(self, schedule: EventSchedule, clock: Clock) -> None:
        self._schedule = schedule
        self._clock = clock

    def _record(
        self, e: StreamEvent, vendor: bool, restrictions: str | None, sub: str | None
    ) -> dict[str, Any]:
        rec: dict[str, Any] = {
            "id": e.id,
            "title": e.title,
            "tournament": {
                "id": e.tournament[0],
                "name": e.tournament[1],
                "property": {
                    "id": e.property[0],
                    "name": e.property[1],
                    "sport": {"id": e.sport[0], "name": e.sport[1]},
                },
            },
            "updatedAt": plus0000(e.updated),
            "startDate": plus0000(e.start),
            "endDate": plus0000(e.end),
        }
        if vendor and e.vendor_id is not None:
            rec["vendorDataID"] = e.vendor_id
        mode = sub or restrictions
        if mode is not None:
            white = mode == "whitelist"
            rec["restrictionRequest"] = mode
            rec["countryList"] = list(e.allowed if white else e.blocked)
            if sub is not None:
                rec["subDivisionList"] = list(e.allowed_states if white else e.blocked_states)
        return rec

    def listing(self, request: web.Request, fault: Fault | None) -> Reply:
        """``/api/v2/streaming/events``."""
        q = request.query
        size = integer(q, "page.size", low=1)
        if size is not None and size > MAX_PAGE_SIZE:
            raise HttpError(400, f"page.size must not exceed {MAX_PAGE_SIZE}")
        page = integer(q, "page.page", low=0) or 0
        fmt = q.get("format", "json").lower()
        if fmt not in ("json", "xml"):
            raise HttpError(400, f"format: expected json or xml, got {fmt!r}")
        restrictions = _restriction(q, "restrictions")
        sub = _restriction(q, "subRestrictions")
        # As on the fixtures listing: true or false in any case, anything else a 400;
        # live=false is no filter at all (the flag only narrows), like leaving it out.
        live = bool(boolean(q, "live"))
        vendor = bool(boolean(q, "vendorDataID"))
        events = self._schedule.listing(self._clock.time(), live)
        if restrictions is not None or sub is not None:
            size = size or MAX_PAGE_SIZE
            if fault is not None and fault.repeat_page:
                page -= 1  # the fault only takes requests for pages after the first
            events = events[page * size : (page + 1) * size]
        records = [self._record(e, vendor, restrictions, sub) for e in events]
        if fmt == "xml":
            body = "".join(_xml("event", r) for r in records)
            return Reply(f"<events>{body}</events>".encode(), content_type="application/xml")
        return json_reply(records)

    def playback(self, request: web.Request, fault: Fault | None) -> Reply:
        """``/api/v2/streaming/events/{id}/stream``: the HLS address of a live event."""
        ident = request.match_info["event_id"]
        event = self._schedule.by_id(int(ident)) if ident.isdigit() else None
        if event is None:
            raise HttpError(404, f"Event not found: {ident}")
        if not event.live(self._clock.time()):
            raise HttpError(400, f"Event {event.id} is not live")
        base = f"{request.url.origin()}/streaming/hls/{event.id}"
        return json_reply({"eventId": event.id, "hlsUrl": f"{base}/master.m3u8"})
