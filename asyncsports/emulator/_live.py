"""The live feeds: the streams host's websockets for actions and statistics.

Served on a port of their own (``emu.live_url``, ``ws://host:port``), as the vendor's
streams host is a host of its own. Paths: ``/{sport}/fixtures/{fixtureId}/actions`` and
``.../statistics``, the same under ``/media``, volleyball as ``/v2/volleyball``. Query:
``startPosition`` (records to skip from the fixture's start) and ``speed`` (``fast`` or
``normal``; only for a fixture that is over when the socket connects).

One connection: accept, read the first message (``{"authToken": "..."}``, the data
token), acknowledge with ``{"type": "authorised"}`` (or answer the invalid-auth text and
close 1008), then send each record whose time the clock has reached, in order, waking at
once when a test moves the clock (:meth:`Clock.watch`) and on time when the clock runs.
Nothing for ``heartbeat`` real seconds: a ``{"type": "heartbeat", ...}`` message. The
record that finishes the fixture is followed by a normal close (1000). Every choice the
vendor's text leaves open is in docs/wire.md, "Live feeds".

The action packets are the REST actions list's records, written by the same
:class:`ActionWriter`, with two changes the vendor documents for the websockets: decimal
numbers are quoted, and ``fixtureAction.fixtureSeqNum`` counts the connection's packets
(from 1, or from ``startPosition + 1`` with ``seq="fixture"``). A statistics packet is sent
after every record that changes the aggregates (one with a team, lineups aside) and after
the finishing record: the REST statistics packet over the records so far (``finished``
false and the record's ``timestamp`` until the last), plus a top-level ``fixtureSeqNum``.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import msgspec
from aiohttp import WSMsgType, web

from asyncsports.emulator._aggregates import statistics
from asyncsports.emulator._api_data import DataApi
from asyncsports.emulator._clock import Clock
from asyncsports.emulator._faults import Faults, LiveFault
from asyncsports.emulator._options import DIALECTS
from asyncsports.emulator._records import Fixture
from asyncsports.emulator._sports import LINEUPS
from asyncsports.emulator._timeline import Action
from asyncsports.emulator._wire import ActionWriter, encode, iso_ms
from asyncsports.emulator._world import World

__all__ = [
    "CLOSE_AUTH",
    "CLOSE_FAULT",
    "CLOSE_OVER",
    "CLOSE_SHUTDOWN",
    "DIALECTS",
    "INVALID_AUTH_TEXT",
    "LiveApi",
    "LiveConfig",
]

INVALID_AUTH_TEXT = "{The supplied authentication is invalid}"
"""What a bad token gets: the service's text in braces, which is not JSON."""
CLOSE_OVER = 1000
"""Normal close: the fixture's last record was sent."""
CLOSE_SHUTDOWN = 1001
"""Going away: the emulator is closing."""
CLOSE_AUTH = 1008
"""Policy violation: a bad or missing token (after the invalid-auth text)."""
CLOSE_FAULT = 1011
"""Internal error: the ``close`` fault (closed right after accepting)."""
AUTH_TIMEOUT = 10.0
"""Real seconds to wait for the token message before closing 1008."""
ACK = '{"type":"authorised"}'

_DECODE = msgspec.json.Decoder(float_hook=str)  # decimals come back as their text
_FEEDS = ("actions", "statistics")


@dataclass
class LiveConfig:
    """Knobs of the live feeds: heartbeat interval, fixtureSeqNum policy, acknowledgement,
    dialect."""

    heartbeat: float = 20.0
    seq: str = "connection"
    ack: bool = True
    dialect: str = "emulator"

    def __post_init__(self) -> None:
        if self.dialect not in DIALECTS:
            raise ValueError(f"live_dialect must be one of {DIALECTS}, got {self.dialect!r}")
        if self.heartbeat <= 0:
            raise ValueError("live_heartbeat must be positive")
        if self.seq not in ("connection", "fixture"):
            raise ValueError("live_seq must be 'connection' or 'fixture'")


Make = Callable[[], dict[str, Any]]
"""Makes a packet's record when it is sent (none is built before it is due)."""
Packet = tuple[int, Make]
"""When a record is due (ms of fixture time) and how to make it (decimals quoted)."""


def _quoted(body: bytes) -> dict[str, Any]:
    record: dict[str, Any] = _DECODE.decode(body)
    return record


class LiveApi:
    """The streams host: both feeds, with and without the ``/media`` prefix."""

    def __init__(
        self,
        *,
        world: World,
        clock: Clock,
        faults: Faults,
        data: DataApi,
        token: Callable[[], str],
        requests: collections.Counter[str],
        config: LiveConfig,
    ) -> None:
        self.world = world
        self.clock = clock
        self.faults = faults
        self.data = data
        self.token = token
        self.requests = requests
        self.config = config
        self.sockets: set[web.WebSocketResponse] = set()
        self.sent = 0
        """Data packets sent so far, every connection (heartbeats and duplicates aside)."""

    def app(self) -> web.Application:
        """A new application serving the live feeds."""
        app = web.Application()
        for media in ("", "/media"):
            for v2 in ("", "/v2"):
                for feed in _FEEDS:
                    path = f"{media}{v2}/{{sport}}/fixtures/{{fixture_id}}/{feed}"
                    app.router.add_get(path, self._handler(feed, bool(v2)))
        return app

    async def close(self) -> None:
        """Close every open feed (1001, going away)."""
        for ws in list(self.sockets):
            with contextlib.suppress(Exception):
                await ws.close(code=CLOSE_SHUTDOWN, message=b"emulator closing")

    def _handler(self, feed: str, v2: bool) -> Callable[[web.Request], Any]:
        async def handle(request: web.Request) -> web.StreamResponse:
            return await self._serve(request, feed, v2)

        return handle

    # ------------------------------------------------------------------ request

    def _fixture(self, request: web.Request, v2: bool) -> Fixture | None:
        """The fixture asked for; None for an unknown one the dialect answers on the socket."""
        sport = request.match_info["sport"]
        rules = self.world.rules(sport)
        if rules is None or v2 != (sport == "volleyball"):
            raise web.HTTPNotFound(text=f"No such sport path: {request.path}")
        ident = request.match_info["fixture_id"]
        fixture = self.world.fixture_by_id(ident, rules.name)
        if fixture is None and self.config.dialect == "emulator":
            raise web.HTTPNotFound(text=f"Fixture not found: {ident}")
        return fixture

    @staticmethod
    def _query(request: web.Request) -> tuple[int, str | None]:
        raw = request.query.get("startPosition", "0")
        if not raw.isdigit():
            raise web.HTTPBadRequest(text=f"startPosition: expected an integer >= 0, got {raw!r}")
        speed = request.query.get("speed")
        if speed is not None and speed not in ("fast", "normal"):
            raise web.HTTPBadRequest(text=f"speed: expected fast or normal, got {speed!r}")
        return int(raw), speed

    async def _serve(self, request: web.Request, feed: str, v2: bool) -> web.StreamResponse:
        self.requests["live." + feed] += 1
        fixture = self._fixture(request, v2)
        start, speed = self._query(request)
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self.sockets.add(ws)
        try:
            fault = self.faults.pick_live(feed, request.path)
            if fault is not None and fault.kind == "close":
                await ws.close(code=CLOSE_FAULT, message=b"closed by a fault")
                return ws
            if fault is not None and fault.kind == "close_clean" and fault.after == 0:
                await ws.close(code=CLOSE_OVER, message=b"closed by a fault")
                return ws
            if not await self._authenticate(ws, fault):
                return ws
            if fixture is None:
                # The vendor's way: a warning on a socket that stays open.
                ident = request.match_info["fixture_id"]
                await ws.send_str(_notice(f"No fixture found with id {ident}", "WARN"))
                async for _ in ws:
                    pass
                return ws
            if self.config.dialect == "golf":
                status = {
                    "eventElementType": "Alarm",
                    "alarm": "Feed open",
                    "timestamp": iso_ms(self.clock.time_ms()),
                }
                await ws.send_str(encode(status).decode())
            await _Connection(self, ws, request, fixture, feed, fault).run(start, speed)
        finally:
            self.sockets.discard(ws)
        return ws

    async def _authenticate(self, ws: web.WebSocketResponse, fault: LiveFault | None) -> bool:
        try:
            msg = await ws.receive(timeout=AUTH_TIMEOUT)
        except TimeoutError:
            await ws.close(code=CLOSE_AUTH, message=b"no authToken message")
            return False
        if msg.type not in (WSMsgType.TEXT, WSMsgType.BINARY):
            return False  # the peer closed or the socket failed before a token
        try:
            first = msgspec.json.decode(msg.data)
        except msgspec.DecodeError:
            first = None
        good = (
            isinstance(first, dict)
            and first.get("authToken") == self.token()
            and (fault is None or fault.kind != "bad_auth")
        )
        if not good:
            with contextlib.suppress(Exception):
                if self.config.dialect == "emulator":
                    await ws.send_str(INVALID_AUTH_TEXT)
                else:
                    await ws.send_str(_notice("Invalid authorisation token", "ERROR"))
                await ws.close(code=CLOSE_AUTH, message=b"invalid authentication")
            return False
        if self.config.ack:
            dialect = self.config.dialect
            await ws.send_str(ACK if dialect == "emulator" else _notice("Authorisation accepted"))
        return True

    def status(self) -> str:
        """A status message in the dialect spoken (the ``status`` fault): golf's alarm, else
        the vendor's INFO notice. Neither a record nor a heartbeat."""
        if self.config.dialect == "golf":
            alarm = {
                "eventElementType": "Alarm",
                "alarm": STATUS_TEXT,
                "timestamp": iso_ms(self.clock.time_ms()),
            }
            return encode(alarm).decode()
        return _notice(STATUS_TEXT)

    def heartbeat(self) -> str:
        """A heartbeat message in the dialect spoken, stamped with the emulator's clock."""
        when = iso_ms(self.clock.time_ms())
        if self.config.dialect == "vendor":
            return _notice(f"Heartbeat sent at {when}")
        if self.config.dialect == "golf":
            return encode({"eventElementType": "Heartbeat", "timestamp": when}).decode()
        return encode({"type": "heartbeat", "timestamp": when}).decode()

    # ------------------------------------------------------------------ packets

    def packets(self, fixture: Fixture, feed: str) -> Iterator[Packet]:
        """Every packet of a feed, in order, with the fixture time it is due at."""
        actions = self.data.timeline(fixture)
        if feed == "actions":
            write = ActionWriter(fixture.id, fixture.home.id)
            for a in actions:
                yield a.ts_ms, functools.partial(_action, write, a)
            return
        prefix: list[Action] = []
        for a in actions:
            prefix.append(a)
            if a.finished or (a.team is not None and a.type is not LINEUPS):
                yield a.ts_ms, functools.partial(_stats, fixture, prefix, len(prefix))


def _numbered(record: dict[str, Any], feed: str, seq: int) -> dict[str, Any]:
    """``record`` with its ``fixtureSeqNum``: in its action on the actions feed."""
    (record["fixtureAction"] if feed == "actions" else record)["fixtureSeqNum"] = seq
    return record


STATUS_TEXT = "Feed interrupted upstream"
"""The text of the ``status`` fault's message."""
COVERAGE_REASON = ("no signal", 1)
"""The ``reason`` and ``reasonId`` of the ``coverage`` fault's records (the vendor's
example of a suspended collection)."""


def _notice(text: str, level: str = "INFO") -> str:
    """The vendor's non-packet message: ``{"message": text, "level": level}``."""
    return encode({"message": text, "level": level}).decode()


def _action(write: ActionWriter, a: Action) -> dict[str, Any]:
    return _quoted(write(a))


def _stats(fixture: Fixture, actions: list[Action], n: int) -> dict[str, Any]:
    """The statistics packet over the first ``n`` records."""
    last = actions[n - 1]
    packet = statistics(fixture, actions[:n])
    if not last.finished:
        packet["finished"] = False
        packet["timestamp"] = iso_ms(last.ts_ms)
    return _quoted(encode(packet))


class _Connection:
    """One authenticated feed connection: the pacing loop, heartbeats and faults."""

    def __init__(
        self,
        api: LiveApi,
        ws: web.WebSocketResponse,
        request: web.Request,
        fixture: Fixture,
        feed: str,
        fault: LiveFault | None,
    ) -> None:
        self.api = api
        self.ws = ws
        self.request = request
        self.fixture = fixture
        self.feed = feed
        self.fault = fault
        self.loop = asyncio.get_running_loop()
        self.wake = asyncio.Event()
        self.peer_gone = False
        self.produced = 0
        self.held: str | None = None
        self.last_out = self.loop.time()

    def _poke(self) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed
            self.loop.call_soon_threadsafe(self.wake.set)

    async def _read(self) -> None:
        async for _ in self.ws:  # anything after the token is ignored
            pass
        self.peer_gone = True
        self.wake.set()

    async def run(self, start: int, speed: str | None) -> None:
        clock = self.api.clock
        unwatch = clock.watch(self._poke)
        reader = asyncio.create_task(self._read())
        try:
            await self._pump(start, speed)
        except ConnectionError:
            pass  # the peer went away mid-send: nothing to tell anyone
        finally:
            unwatch()
            if not self.ws.closed:
                with contextlib.suppress(Exception):
                    await self.ws.close(code=CLOSE_OVER, message=b"fixture over")
            reader.cancel()
            with contextlib.suppress(BaseException):
                await reader

    async def _pump(self, start: int, speed: str | None) -> None:
        """Send the feed's packets from ``start`` as each falls due, until it is over or
        the peer has gone; between them, what :meth:`_idle` does."""
        timed = self._due(start, speed)
        nxt = next(timed, None)
        seq = start if self.api.config.seq == "fixture" else 0
        while nxt is not None and not self.ws.closed and not self.peer_gone:
            due, make = nxt
            if due > self.api.clock.time_ms():
                await self._idle(due)
                continue
            seq += 1
            record = self._faulted(_numbered(make(), self.feed, seq))
            if not await self._packet(encode(record).decode()):
                return
            nxt = next(timed, None)
            if nxt is None:
                if self.held is not None:
                    await self._send(self.held)
            elif self.produced % 32 == 0:
                await asyncio.sleep(0)

    def _due(self, start: int, speed: str | None) -> Iterator[tuple[float, Make]]:
        """The packets from ``start`` (none past the end, none without a timeline: a
        postponed fixture), each at the clock's millisecond it is due. A fixture already
        over is a replay: ``fast`` sends at once, ``normal`` keeps the gaps from now."""
        now_ms = self.api.clock.time_ms()
        over = self.fixture.status(now_ms / 1000) == "completed"
        source = itertools.islice(self.api.packets(self.fixture, self.feed), start, None)
        first = next(source, None)
        if first is None:
            return
        offset = 0.0
        if over:
            offset = float("-inf") if speed == "fast" else now_ms - first[0]
        for due, make in itertools.chain([first], source):
            yield due + offset, make

    async def _idle(self, due: float) -> None:
        """One step while no packet is due: a held packet goes, or a heartbeat after
        ``heartbeat`` seconds of silence, or a wait for the clock, the peer or the
        heartbeat."""
        if self.held is not None:
            # A reorder whose second packet is not due yet: the held one goes late,
            # before the wait, rather than never (the clock may not move again).
            held, self.held = self.held, None
            await self._send(held)
            return
        heartbeat = self.api.config.heartbeat
        idle = self.loop.time() - self.last_out
        if idle >= heartbeat:
            await self._send(self.api.heartbeat())
            return
        timeout = heartbeat - idle
        until = self.api.clock.until(due / 1000)  # wall-clock seconds, at the clock's speed
        if until is not None:
            timeout = min(timeout, until)
        self.wake.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self.wake.wait()

    def _faulted(self, record: dict[str, Any]) -> dict[str, Any]:
        """The record as a ``lag`` or ``coverage`` fault has it (the next packet's)."""
        fault = self.fault
        if fault is None or fault.kind not in ("lag", "coverage"):
            return record
        i = self.produced
        inside = fault.after <= i < fault.after + fault.count
        action = record.get("fixtureAction")
        if fault.kind == "lag":
            # A live record's time is when it happened: the clock's now, as it is sent.
            behind = fault.seconds * 1000 if inside else 0.0
            stamp = iso_ms(round(self.api.clock.time_ms() - behind))
            if action is not None:
                action["timestamp"] = stamp
            elif "timestamp" in record:  # a statistics packet's, until the last
                record["timestamp"] = stamp
            return record
        summary = record.get("fixtureSummary")
        if inside and summary is not None:
            first = i == fault.after
            summary["collectionStatus"] = "CollectionSuspended" if first else "CollectionDropped"
            summary["reason"], summary["reasonId"] = COVERAGE_REASON
        return record

    async def _before(self, kind: str) -> None:
        """What a ``status`` fault (a status message) or a ``delay`` (silence) does before
        its packet."""
        if kind == "status":
            await self._send(self.api.status())
        elif self.fault is not None:
            await self._delay(self.fault.seconds)

    async def _delay(self, seconds: float) -> None:
        """Silence for ``seconds`` real seconds (the ``delay`` fault), or until the peer
        has gone."""
        deadline = self.loop.time() + seconds
        while not self.ws.closed and not self.peer_gone:
            left = deadline - self.loop.time()
            if left <= 0:
                return
            self.wake.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left):
                    await self.wake.wait()

    async def _send(self, text: str) -> None:
        await self.ws.send_str(text)
        self.last_out = self.loop.time()

    def _storm(self, draw: Callable[[], str | None], i: int) -> tuple[str | None, int]:
        """A per-packet storm's fault for packet ``i``, counted; a reorder completes first."""
        if self.held is not None:
            return "reorder", i - 1  # send this one, then the one held back
        kind = draw()
        if kind is None:
            return None, -1
        self.api.faults.injected["live." + kind] += 1
        return kind, i

    async def _packet(self, text: str) -> bool:
        """Send one data packet through the connection's fault; False: stop the feed."""
        i, self.produced = self.produced, self.produced + 1
        fault = self.fault
        kind = fault.kind if fault is not None else None
        at = fault.after if fault is not None else -1
        if fault is not None and fault.draw is not None:
            kind, at = self._storm(fault.draw, i)
        if kind == "drop" and i == at:
            transport = self.request.transport
            if transport is not None:
                transport.abort()
            return False
        if kind == "close_clean" and i == at:
            await self.ws.close(code=CLOSE_OVER, message=b"closed by a fault")
            return False
        if kind == "stall" and i == at:
            while not self.ws.closed and not self.peer_gone:
                self.wake.clear()
                await self.wake.wait()
            return False
        if kind == "reorder" and i == at:
            self.held = text
            return True
        if kind in ("status", "delay") and i == at:
            await self._before(kind)  # then the packet, as ever, on the same connection
        if kind == "malformed" and i == at:
            text = text[: len(text) // 2]
        await self._send(text)
        self.api.sent += 1
        if kind == "duplicate" and i == at:
            await self._send(text)
        if kind == "reorder" and i == at + 1 and self.held is not None:
            held, self.held = self.held, None
            await self._send(held)
        return True
