"""The benchmark server's streams host: live action feeds replayed from stored packets.

Like the REST cache in :mod:`benchmarks.harness.server`, it lets the emulator render once and then
only copies bytes, so that its CPU is not what a benchmark measures. At start it takes the
first ``k`` packets of a fixture's live actions feed from the emulator (``emu.live_url``,
``speed=fast``: the packets the emulator's streams host sends, decimals quoted and
``fixtureSeqNum`` counting from 1). It serves them on the streams host's path,
``/{sport}/fixtures/{fixtureId}/actions``, to any fixture id (each packet's ``fixtureId``
rewritten to the one asked for), with the emulator's handshake: the first message must be
``{"authToken": "<token>"}``, answered by ``{"type":"authorised"}`` (or the invalid-auth
text and a 1008 close).

Each packet's ``traceId`` holds the server's send time, ``time.monotonic()`` in seconds
(CLOCK_MONOTONIC: the same clock in every process of the machine), taken just before the
frame is written: a consumer in another process subtracts it from its own clock to get the
delivery latency.

How packets are pushed (``/_bench/live/config`` sets it for the connections that follow):

- ``speed=fast`` in the query: all ``count`` packets back to back, the last marked
  ``finished``, framed here and written 64 KiB at a time (so that the client, not the
  server, is the bottleneck), then a normal close (1000);
- otherwise ``rate`` packets a second per connection (0: none, the feed stays idle),
  from one ticker every ``tick`` seconds that serves a slice of the connections in turn,
  so that 500 connections at 10 a second get 50 packets every 10 ms, spread out, rather
  than 500 at once. After ``count`` packets (the last finished), a normal close.

A ``startPosition`` skips that many packets; ``fixtureSeqNum`` goes on from it (the
emulator's ``live_seq="fixture"``): the benchmarks never reconnect, this only keeps a
resume well-formed. Control routes (plain HTTP on the same port): ``/_bench/live/config``
(``rate``, ``count``, ``tick``; answers the configuration) and ``/_bench/live/stats``
(``open``: authorised connections open now, ``connections``: accepted in all, ``sent``:
packets sent).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import asdict, dataclass

import aiohttp
import msgspec
from aiohttp import WSMsgType, web

__all__ = ["LiveCache", "LiveConfig", "render_packets"]

ACK = b'{"type":"authorised"}'
INVALID_AUTH = "{The supplied authentication is invalid}"
_STAMP = "@@sent@@"  # where the send time goes, in a packet's template
_PIECE = 64 * 1024


async def render_packets(
    live_url: str, sport: str, fixture_id: str, token: str, k: int
) -> list[bytes]:
    """The first ``k`` packets of a fixture's live actions feed, as the emulator sends them."""
    url = f"{live_url}/{sport}/fixtures/{fixture_id}/actions?speed=fast"
    out: list[bytes] = []
    async with aiohttp.ClientSession() as http, http.ws_connect(url) as ws:
        await ws.send_bytes(msgspec.json.encode({"authToken": token}))
        async for msg in ws:
            if msg.type is not WSMsgType.TEXT or '"fixtureAction"' not in msg.data:
                continue  # the acknowledgement, a heartbeat
            out.append(msg.data.encode())
            if len(out) == k:
                break
    if len(out) < k:
        raise RuntimeError(f"the emulator's feed gave {len(out)} packets, {k} asked for")
    return out


def _frame(payload: bytes) -> bytes:
    """``payload`` as one final, unmasked websocket text frame (RFC 6455, 5.2)."""
    n = len(payload)
    if n < 126:
        return bytes((0x81, n)) + payload
    if n < 1 << 16:
        return bytes((0x81, 126)) + n.to_bytes(2, "big") + payload
    return bytes((0x81, 127)) + n.to_bytes(8, "big") + payload


@dataclass
class LiveConfig:
    """How the connections that follow are pushed."""

    rate: float = 10.0  # packets a second per connection (0: idle)
    count: int = 0  # packets per connection (0: all stored)
    tick: float = 0.01  # seconds between the ticker's turns


class _Template:
    """One packet with a hole for the send time: ``head + stamp + tail``."""

    __slots__ = ("head", "tail")

    def __init__(self, packet: bytes, finished: bool = False) -> None:
        doc = msgspec.json.decode(packet)
        doc["traceId"] = _STAMP
        if finished:
            doc["finished"] = True
        head, _, tail = msgspec.json.encode(doc).partition(_STAMP.encode())
        self.head, self.tail = head, tail


class _Conn:
    __slots__ = ("fid", "next", "ws")

    def __init__(self, ws: web.WebSocketResponse, fid: bytes, start: int) -> None:
        self.ws = ws
        self.fid = fid
        self.next = start


class LiveCache:
    """The streams host of the benchmark server (see the module's docstring)."""

    def __init__(self, token: str, packets: list[bytes], fixture_id: str) -> None:
        if not packets:
            raise ValueError("no packets to serve")
        self.token = token
        self.packets = packets
        self.orig = fixture_id.encode()
        self.config = LiveConfig(count=len(packets))
        self.templates = [_Template(p) for p in packets]
        self.last = _Template(packets[-1], finished=True)
        self.open = self.connections = self.sent = 0
        self._slots: list[list[_Conn]] = []
        self._joined = 0
        self._ticker: asyncio.Task[None] | None = None
        self._closing: set[asyncio.Task[bool]] = set()

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/_bench/live/config", self._config)
        app.router.add_get("/_bench/live/stats", self._stats)
        app.router.add_get("/{sport}/fixtures/{fixture_id}/actions", self._feed)
        app.on_cleanup.append(self._stop)
        return app

    # ------------------------------------------------------------------ packets

    def _packet(self, conn: _Conn, i: int) -> bytes:
        t = self.last if i == self.config.count - 1 else self.templates[i]
        orig, fid = self.orig, conn.fid
        head, tail = t.head.replace(orig, fid), t.tail.replace(orig, fid)
        return b"%s%.6f%s" % (head, time.monotonic(), tail)  # stamped last

    async def _send(self, conn: _Conn) -> bool:
        """Send ``conn``'s next packet; False when it has had them all."""
        i = conn.next
        if i >= self.config.count:
            return False
        conn.next = i + 1
        await conn.ws.send_frame(self._packet(conn, i), WSMsgType.TEXT)
        self.sent += 1
        return conn.next < self.config.count

    async def _flat_out(self, conn: _Conn, request: web.Request) -> None:
        """Every packet left, framed here and written in 64 KiB pieces.

        Framing by hand (a text frame, unmasked as a server's are) and writing many frames
        at once makes the server several times faster per packet than any client, so the
        client always finds packets waiting and its CPU per action is its own, not a share
        of waiting for the server.
        """
        transport = request.transport
        if transport is None:
            return
        count = self.config.count
        piece: list[bytes] = []
        size = 0
        for i in range(conn.next, count):
            piece.append(_frame(self._packet(conn, i)))
            size += len(piece[-1])
            if size >= _PIECE or i == count - 1:
                transport.write(b"".join(piece))
                self.sent += len(piece)
                piece, size = [], 0
                while transport.get_write_buffer_size() > 4 * _PIECE:
                    if transport.is_closing():
                        raise ConnectionResetError("the client went away")
                    await asyncio.sleep(0.001)  # the client reads: wait for room
        conn.next = count

    # ------------------------------------------------------------------ serving

    async def _feed(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(compress=False)
        await ws.prepare(request)
        self.connections += 1
        try:
            first = await ws.receive(timeout=30)
        except TimeoutError:
            await ws.close(code=1008)
            return ws
        if first.type not in (WSMsgType.TEXT, WSMsgType.BINARY):
            return ws
        try:
            good = msgspec.json.decode(first.data).get("authToken") == self.token
        except (msgspec.DecodeError, AttributeError):
            good = False
        if not good:
            await ws.send_str(INVALID_AUTH)
            await ws.close(code=1008)
            return ws
        await ws.send_frame(ACK, WSMsgType.TEXT)
        start = request.query.get("startPosition", "0")
        conn = _Conn(ws, request.match_info["fixture_id"].encode(), int(start))
        self.open += 1
        try:
            with contextlib.suppress(ConnectionError):
                if request.query.get("speed") == "fast":
                    await self._flat_out(conn, request)
                    await ws.close(code=1000, message=b"fixture over")
                else:
                    await self._paced(conn)
        finally:
            self.open -= 1
        return ws

    async def _paced(self, conn: _Conn) -> None:
        """Read until the peer closes, while the ticker sends (rate 0: never)."""
        rate = self.config.rate
        if rate > 0:
            slots = max(1, round(1 / (rate * self.config.tick)))
            if len(self._slots) != slots:
                self._slots = [[] for _ in range(slots)]
            self._slots[self._joined % slots].append(conn)
            self._joined += 1
            if self._ticker is None or self._ticker.done():
                self._ticker = asyncio.create_task(self._tick())
        try:
            async for _ in conn.ws:  # anything the client sends after its token is ignored
                pass
        finally:
            for slot in self._slots:
                with contextlib.suppress(ValueError):
                    slot.remove(conn)

    async def _tick(self) -> None:
        """Every ``tick`` seconds, one packet to each connection of the next slot."""
        loop = asyncio.get_running_loop()
        turn = 0
        due = loop.time()
        while any(self._slots):
            slot = self._slots[turn % len(self._slots)]
            turn += 1
            for conn in list(slot):
                try:
                    more = await self._send(conn)
                except ConnectionError:
                    more = False
                if not more:
                    slot.remove(conn)
                    if not conn.ws.closed:
                        closing = asyncio.create_task(conn.ws.close(code=1000))
                        self._closing.add(closing)
                        closing.add_done_callback(self._closing.discard)
            due += self.config.tick
            now = loop.time()
            if due < now - self.config.tick:
                due = now  # fell behind: no burst to catch up
            await asyncio.sleep(max(0.0, due - now))

    async def _stop(self, app: web.Application) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker

    # ------------------------------------------------------------------ control

    async def _config(self, request: web.Request) -> web.Response:
        q = request.query
        c = self.config
        if "rate" in q:
            c.rate = float(q["rate"])
        if "tick" in q:
            c.tick = float(q["tick"])
        if "count" in q:
            count = int(q["count"]) or len(self.packets)
            if count > len(self.packets):
                raise web.HTTPBadRequest(text=f"count: at most {len(self.packets)} packets stored")
            c.count = count
            self.last = _Template(self.packets[count - 1], finished=True)
        return web.json_response(asdict(c))

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(
            {"open": self.open, "connections": self.connections, "sent": self.sent}
        )
