"""The aiohttp application: routes, and the pipeline every request goes through.

Pipeline: count the request, apply the server-side rate limit, pick a fault (added
latency, an error status, or body effects for later), check the caller (Accept and
bearer token for the data service and the snooker proxy; operatorId, auth and
timestamp for the events listing), run the handler, write the reply.

The events listing lives under ``/streaming`` on the same port, so ``streaming_url`` is
``{base_url}/streaming`` and the listing is ``{streaming_url}/api/v2/streaming/events``.
"""

from __future__ import annotations

import asyncio
import collections
import email.utils
import http
import logging
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web

from asyncsports.auth import stream_token
from asyncsports.emulator._api_data import DataApi
from asyncsports.emulator._api_events import EventsApi
from asyncsports.emulator._api_snooker import SnookerApi
from asyncsports.emulator._clock import Clock
from asyncsports.emulator._control import clock_routes
from asyncsports.emulator._events import EventSchedule
from asyncsports.emulator._faults import Fault, Faults, RateLimiter
from asyncsports.emulator._http import HttpError, Reply, send, text_reply
from asyncsports.emulator._world import World

__all__ = ["SERVER_LOG", "STREAMING_PREFIX", "Access", "RequestRecord", "Service"]

STREAMING_PREFIX = "/streaming"
SERVER_LOG = logging.getLogger("asyncsports.emulator.server")
"""The logger of the emulator's aiohttp servers (in place of ``aiohttp.server``): a
request they cannot handle (a request line over 8 KiB) is its HTTP error response, and
its traceback goes to no one's stderr unless the application sets up logging (the
command: --verbose). The NullHandler keeps Python's last-resort handler from printing it."""
SERVER_LOG.addHandler(logging.NullHandler())
MISSING_ACCEPT = "Request is missing required HTTP header 'Accept'"
MISSING_TOKEN = "The resource requires authentication, which was not supplied with the request"
INVALID_AUTH = "The supplied authentication is invalid"
TOKEN_LIFETIME_MS = 30_000

Handler = Callable[[web.Request, Fault | None], Reply]


@dataclass
class Access:
    """Who may call: the bearer token, the Accept vendor, the streaming credentials."""

    token: str
    vendor: str
    operator_id: int
    stream_secret: str
    static_stream_auth: tuple[str, int] | None


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One request as the emulator saw it."""

    route: str
    method: str
    path_qs: str
    status: int


def _accepts(header: str, vendor: str) -> bool:
    """Whether an Accept header names the vendor's media type, version 1 (or none)."""
    want = f"application/vnd.{vendor}.dde.api+json".lower()
    for item in header.split(","):
        media, *params = (p.strip() for p in item.split(";"))
        if media.lower() != want:
            continue
        versions = [p.partition("=")[2].strip() for p in params if p.lower().startswith("version")]
        if not versions or versions[0] == "1":
            return True
    return False


def _page(request: web.Request) -> int:
    value = request.query.get("page", request.query.get("page.page", "0"))
    return int(value) if value.isdigit() else 0


class Service:
    """The emulated services and everything they share: clock, faults, counters."""

    def __init__(
        self,
        *,
        world: World,
        clock: Clock,
        faults: Faults,
        access: Access,
        feed: str,
        latency: float = 0.0,
        rate_limit: int | None = None,
        rate_clock: Clock,
    ) -> None:
        self.world = world
        self.clock = clock
        self.rate_clock = rate_clock
        self.faults = faults
        self.access = access
        self.feed = feed
        self.latency = latency
        self.limiter: RateLimiter | None = None
        self.limit(rate_limit)
        self.requests: collections.Counter[str] = collections.Counter()
        self.log: collections.deque[RequestRecord] = collections.deque(maxlen=10_000)
        self.data = DataApi(world, clock)
        self.snooker = SnookerApi(world.seed, world.now, clock)
        self.events = EventsApi(EventSchedule(world), clock)

    def limit(self, per_second: int | None) -> None:
        """Allow ``per_second`` requests in any second of ``rate_clock`` (None: no limit)."""
        self.limiter = None if per_second is None else RateLimiter(per_second, self.rate_clock)

    # ------------------------------------------------------------------ routing

    def app(self) -> web.Application:
        """A new application serving all three services."""
        app = web.Application()
        add = app.router.add_get
        d, s, e = self.data, self.snooker, self.events
        stream = f"{STREAMING_PREFIX}/api/v2/streaming/events"
        add(stream, self._route("events", "stream", e.listing))
        add(stream + "/{event_id}/stream", self._route("playback", "stream", e.playback))
        snooker: list[tuple[str, str, Handler]] = [
            ("tournaments", "tournaments", s.tournaments),
            ("matches/{tournament_id}", "matches", s.matches),
            ("matches/external/{external_id}", "matches", s.matches),
            ("ast/{tournament_id}", "ast", s.ast),
            ("ast/external/{external_id}", "ast", s.ast),
            ("tournament-players/{tournament_id}", "tournament-players", s.tournament_players),
            (
                "tournament-players/external/{external_id}",
                "tournament-players",
                s.tournament_players,
            ),
            ("tour-players", "tour-players", s.tour_players),
            ("centuries/{tournament_id}", "centuries", s.centuries),
            ("centuries/external/{external_id}", "centuries", s.centuries),
            (
                "current-tournament-winner/{tournament_id}",
                "current-tournament-winner",
                s.current_winner,
            ),
            (
                "current-tournament-winner/external/{external_id}",
                "current-tournament-winner",
                s.current_winner,
            ),
            (
                "previous-tournament-winner/{tournament_id}",
                "previous-tournament-winner",
                s.previous_winners,
            ),
            (
                "previous-tournament-winner/external/{external_id}",
                "previous-tournament-winner",
                s.previous_winners,
            ),
            ("player-info/{player_id}/{tournament_id}", "player-info", s.player_info),
            ("player-info/external/{external_player}/{external_id}", "player-info", s.player_info),
        ]
        for suffix, name, handler in snooker:
            add(f"/snooker/{self.feed}/{suffix}", self._route(f"snooker.{name}", "data", handler))
        data: list[tuple[str, str, Handler]] = [
            ("/{sport}/fixtures", "fixtures", d.fixtures),
            ("/{sport}/seasons/{season_id}/fixtures", "fixtures", d.fixtures),
            ("/{sport}/fixtures/{fixture_id}", "fixture", d.fixture),
            ("/{sport}/fixtures/{fixture_id}/actions", "actions", d.actions),
            ("/{sport}/fixtures/{fixture_id}/statistics", "statistics", d.statistics),
            ("/{sport}/seasons/{season_id}/squads", "squads", d.season_squads),
            ("/{sport}/squads/{team_id}", "squads", d.team_squads),
            ("/{sport}/seasons/{season_id}/standings", "standings", d.standings),
            ("/{sport}/stages/{stage_id}/standings", "standings", d.standings),
        ]
        for path, name, handler in data:
            route = self._route(name, "data", handler)
            add(path, route)
            add("/v2" + path, route)
        clock_routes(app, self.clock)
        app.router.add_route(
            "*", STREAMING_PREFIX + "/{tail:.*}", self._route("unknown", "stream", _not_found)
        )
        app.router.add_route("*", "/{tail:.*}", self._route("unknown", "data", _not_found))
        app.on_response_prepare.append(self._date)
        return app

    async def _date(self, request: web.Request, response: web.StreamResponse) -> None:
        # The service's Date is its clock: a client that takes "now" from it (the mirror)
        # must see the emulator's time, not the wall clock aiohttp would write.
        response.headers["Date"] = email.utils.formatdate(self.clock.time(), usegmt=True)

    def _route(
        self, name: str, kind: str, handler: Handler
    ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        async def handle(request: web.Request) -> web.StreamResponse:
            return await self._serve(request, name, kind, handler)

        return handle

    # ------------------------------------------------------------------ pipeline

    async def _serve(
        self, request: web.Request, name: str, kind: str, handler: Handler
    ) -> web.StreamResponse:
        self.requests[name] += 1
        fault: Fault | None = None
        try:
            wait = self.limiter.check() if self.limiter is not None else None
            if wait is not None:
                self.faults.injected["rate_limit"] += 1
                retry = {"Retry-After": str(max(1, math.ceil(wait)))}
                raise HttpError(429, "Too Many Requests", headers=retry)
            fault = self.faults.pick(name, request.path, _page(request))
            delay = self.latency + (fault.latency if fault is not None else 0.0)
            if delay > 0:
                await asyncio.sleep(delay)
            if fault is not None and fault.status is not None:
                value = fault.retry_after_header()
                headers = {"Retry-After": value} if value is not None else {}
                raise HttpError(fault.status, http.HTTPStatus(fault.status).phrase, headers=headers)
            if kind == "data":
                self._check_data(request)
            else:
                self._check_stream(request)
            reply = handler(request, fault)
        except HttpError as exc:
            reply = exc.reply
        response = await send(request, reply, fault)
        self.log.append(RequestRecord(name, request.method, request.path_qs, reply.status))
        return response

    def _check_data(self, request: web.Request) -> None:
        accept = request.headers.get("Accept")
        if accept is None:
            raise HttpError(400, MISSING_ACCEPT, reply=text_reply(400, MISSING_ACCEPT))
        if not _accepts(accept, self.access.vendor):
            want = f"application/vnd.{self.access.vendor}.dde.api+json;version=1"
            message = f"Unsupported Accept: expected {want}"
            raise HttpError(400, message, reply=text_reply(400, message))
        scheme, _, token = request.headers.get("Authorization", "").strip().partition(" ")
        if not scheme or (scheme.lower() == "bearer" and not token.strip()):
            raise HttpError(401, MISSING_TOKEN)
        if scheme.lower() != "bearer" or token.strip() != self.access.token:
            headers = {"WWW-Authenticate": 'Bearer error="invalid_token"'}
            # Text in braces that is not JSON, under a JSON media type, as the service does.
            body = Reply(f"{{{INVALID_AUTH}}}".encode(), 401, headers=headers)
            raise HttpError(401, INVALID_AUTH, reply=body)

    def _check_stream(self, request: web.Request) -> None:
        q = request.query
        operator, auth, stamp = q.get("operatorId"), q.get("auth"), q.get("timestamp")
        if not operator or not auth or not stamp:
            raise HttpError(401, "operatorId, auth and timestamp are required")
        access = self.access
        if operator != str(access.operator_id) or not stamp.lstrip("-").isdigit():
            raise HttpError(401, INVALID_AUTH)
        ts = int(stamp)
        if access.static_stream_auth == (auth, ts):
            return
        if auth != stream_token(access.stream_secret, request.remote or "", ts):
            raise HttpError(401, INVALID_AUTH)
        off = ts - self.clock.time_ms()
        # Signed with the emulator's clock or with the real time, as a client of the real
        # service does (StreamingCredentials.from_secret's default): either is accepted.
        real = ts - time.time_ns() // 1_000_000
        # A token lives 30 real seconds: on a clock running X times faster they read 30 X s
        # (else at 600 a token signed by it would be stale 50 ms later, on its way here).
        lifetime = TOKEN_LIFETIME_MS * max(1.0, self.clock.speed)
        if abs(off) > lifetime and abs(real) > TOKEN_LIFETIME_MS:
            raise HttpError(401, _stale(off))


def _stale(off_ms: int) -> str:
    """Why a stream token's timestamp is refused, saying which way it is off."""
    seconds = abs(off_ms) / 1000
    span = f"{seconds / 86400:.1f} days" if seconds >= 86400 else f"{seconds:.0f} s"
    if off_ms < 0:
        return f"The token has expired: its timestamp is {span} behind the server's clock"
    return (
        f"The token's timestamp is {span} ahead of the server's clock (the emulator's "
        "clock, emu.clock, is not the real time: sign with emu.clock.time_ms() or the "
        "real time)"
    )


def _not_found(request: web.Request, fault: Fault | None) -> Reply:
    if request.method not in ("GET", "HEAD"):
        raise HttpError(405, f"Method {request.method} is not allowed")
    raise HttpError(404, f"No such resource: {request.path}")
