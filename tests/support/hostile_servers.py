"""A minimal websocket server over asyncio streams, for live feed tests that need the bytes.

:func:`raw_server` runs ``script(conn)`` for each connection: a :class:`Conn` reads the
upgrade request, answers it (whole, dripped, refused or redirected), reads the token
message, and sends frames by hand (records, pings, fragments, close frames), or ends the
connection as a hostile server would (a TCP reset, a half frame then EOF, a stall).
:class:`Timeline` is a real fixture's REST timeline, each record served as a live packet
(``fixtureSeqNum`` renumbered per connection, as the vendor documents).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import re
import socket
import struct
import time
import urllib.parse
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from asyncsports import Client
from asyncsports.live import Feed

GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
TEXT, CONTINUATION, CLOSE, PING = 0x1, 0x0, 0x8, 0x9
BAD_TOKEN = "{The supplied authentication is invalid}"  # the vendor's text, braces and all
WAYS = ["feed", "merged"]
Way = Literal["feed", "merged"]
Numbering = Literal["restart", "continue"]
_SEQ = re.compile(rb'"fixtureSeqNum":\s*\d+')
_GONE = (ConnectionError, asyncio.IncompleteReadError, OSError, asyncio.LimitOverrunError)


@dataclass
class Timeline:
    """A fixture's records as its REST list has them: the JSON of each, as sent."""

    sport: str
    fixture_id: uuid.UUID
    records: list[bytes]

    @classmethod
    async def of(cls, client: Client, sport: str, fixture_id: uuid.UUID) -> Timeline:
        raw = await client.with_json.actions.list(sport, fixture_id).collect()
        records = [bytes(r.json) for r in raw]
        assert all(len(_SEQ.findall(r)) == 1 for r in records)
        return cls(sport, fixture_id, records)

    def __len__(self) -> int:
        return len(self.records)

    def packet(self, index: int, seq: int) -> bytes:
        """Record ``index`` as a live packet numbered ``seq``."""
        return _SEQ.sub(b'"fixtureSeqNum":%d' % seq, self.records[index], count=1)

    @property
    def path(self) -> str:
        return f"/{self.sport}/fixtures/{self.fixture_id}/actions"


def accept_key(key: str) -> str:
    return base64.b64encode(hashlib.sha1(key.encode() + GUID).digest()).decode()


def frame(opcode: int, payload: bytes = b"", fin: bool = True) -> bytes:
    """A server's frame (unmasked)."""
    head = (0x80 if fin else 0) | opcode
    n = len(payload)
    if n < 126:
        return struct.pack("!BB", head, n) + payload
    if n < 1 << 16:
        return struct.pack("!BBH", head, 126, n) + payload
    return struct.pack("!BBQ", head, 127, n) + payload


def close_frame(code: int) -> bytes:
    return frame(CLOSE, struct.pack("!H", code))


@dataclass
class Conn:
    """One connection to a :func:`raw_server`, as its script sees it."""

    index: int  # 0 for the first connection the server accepted
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    opened: float = field(default_factory=time.monotonic)
    ended: float | None = None  # when the client was seen gone (EOF, reset), or we ended it
    path: str = ""
    query: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    token: str | None = None
    next: int = 0  # the next record this connection sends
    seq: int = 0  # the last fixtureSeqNum it sent
    numbering: Numbering = "restart"
    notes: list[str] = field(default_factory=list)

    @property
    def start(self) -> int:
        """The connection's ``startPosition``."""
        return int(self.query.get("startPosition", "0"))

    @property
    def lasted(self) -> float:
        return (self.ended or time.monotonic()) - self.opened

    # ------------------------------------------------------------------ the handshake

    async def request(self) -> None:
        """Read the upgrade request (request line and headers)."""
        head = await self.reader.readuntil(b"\r\n\r\n")
        line, *rest = head.decode("latin-1").split("\r\n")
        target = line.split(" ")[1]
        url = urllib.parse.urlsplit(target)
        self.path = url.path
        self.query = dict(urllib.parse.parse_qsl(url.query))
        for h in rest:
            if ":" in h:
                k, v = h.split(":", 1)
                self.headers[k.strip().lower()] = v.strip()

    def _switching(self) -> bytes:
        key = accept_key(self.headers["sec-websocket-key"])
        return (
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Accept: {key}\r\n\r\n"
        ).encode()

    async def upgrade(self) -> None:
        """Read the request and switch protocols."""
        await self.request()
        self.writer.write(self._switching())
        await self.writer.drain()

    async def accept(self, numbering: Numbering = "restart") -> str:
        """Upgrade, then read the token message; ``numbering``: how this connection's
        packets count (``restart``: from 1; ``continue``: the fixture's sequence)."""
        await self.upgrade()
        self.next = self.start
        self.numbering = numbering
        self.seq = 0 if numbering == "restart" else self.start
        while True:
            got = await self.read_frame()
            if got is None:
                raise ConnectionResetError("no token: the client went")
            opcode, payload = got
            if opcode == TEXT:
                self.token = _token(payload)
                return self.token or ""

    async def refuse(self, status: int, reason: str, headers: dict[str, str] | None = None) -> None:
        """Answer the upgrade with an HTTP status and close."""
        await self.request()
        body = f"{status} {reason}".encode()
        lines = [f"HTTP/1.1 {status} {reason}", f"Content-Length: {len(body)}"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        lines += ["Content-Type: text/plain", "Connection: close", "", ""]
        self.writer.write("\r\n".join(lines).encode() + body)
        await self.writer.drain()
        self.writer.close()
        await self.gone()

    async def drip(self, every: float = 0.05) -> None:
        """Answer the upgrade one header byte at a time, ``every`` seconds, for ever (an
        endless header after the status line), until the client goes."""
        await self.request()
        watch = asyncio.ensure_future(self.gone())
        try:
            endless = b"HTTP/1.1 101 Switching Protocols\r\nX-Drip: "
            i = 0
            while not watch.done():
                byte = endless[i : i + 1] if i < len(endless) else b"a"
                i += 1
                self.writer.write(byte)
                await self.writer.drain()
                await asyncio.wait([watch], timeout=every)
        except _GONE:
            pass
        finally:
            watch.cancel()
            self.ended = self.ended or time.monotonic()

    # ------------------------------------------------------------------ frames

    async def read_frame(self) -> tuple[int, bytes] | None:
        """The client's next frame (unmasked), or None at EOF."""
        try:
            b0, b1 = await self.reader.readexactly(2)
            n = b1 & 0x7F
            if n == 126:
                (n,) = struct.unpack("!H", await self.reader.readexactly(2))
            elif n == 127:
                (n,) = struct.unpack("!Q", await self.reader.readexactly(8))
            mask = await self.reader.readexactly(4) if b1 & 0x80 else b"\0\0\0\0"
            data = await self.reader.readexactly(n)
        except _GONE:
            self.ended = self.ended or time.monotonic()
            return None
        payload = bytes(c ^ mask[i % 4] for i, c in enumerate(data))
        return b0 & 0x0F, payload

    def write(self, data: bytes) -> None:
        if not self.writer.is_closing():
            self.writer.write(data)

    async def send(self, data: bytes, opcode: int = TEXT) -> None:
        self.write(frame(opcode, data))
        await self.writer.drain()

    async def records(self, timeline: Timeline, count: int | None = None) -> int:
        """Send the next ``count`` records (all the rest if None); returns how many."""
        end = len(timeline) if count is None else min(len(timeline), self.next + count)
        sent = 0
        while self.next < end:
            self.seq += 1
            self.write(frame(TEXT, timeline.packet(self.next, self.seq)))
            self.next += 1
            sent += 1
        await self.writer.drain()
        return sent

    async def duplicate(self, timeline: Timeline) -> None:
        """The last record sent, again, with its fixtureSeqNum."""
        if self.next > self.start:
            await self.send(timeline.packet(self.next - 1, self.seq))

    def restart(self) -> None:
        """Number again from the connection's start (what follows repeats its records)."""
        self.next = self.start
        self.seq = 0 if self.numbering == "restart" else self.start

    # ------------------------------------------------------------------ ends

    async def close(self, code: int, wait: float = 2.0) -> None:
        """Send a close frame with ``code``, wait (a bounded time) for the client's, close."""
        self.write(close_frame(code))
        with contextlib.suppress(*_GONE):
            await self.writer.drain()
            async with asyncio.timeout(wait):
                while (got := await self.read_frame()) is not None and got[0] != CLOSE:
                    pass
        self.writer.close()
        self.ended = self.ended or time.monotonic()

    def reset(self) -> None:
        """A TCP reset: no close frame, no FIN."""
        sock = self.writer.get_extra_info("socket")
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.writer.transport.abort()
        self.ended = self.ended or time.monotonic()

    async def cut(self, timeline: Timeline) -> None:
        """Half of the next record's frame, then EOF: no close frame."""
        whole = frame(TEXT, timeline.packet(self.next, self.seq + 1))
        self.write(whole[: len(whole) // 2])
        with contextlib.suppress(*_GONE):
            await self.writer.drain()
        self.writer.close()
        self.ended = self.ended or time.monotonic()

    async def stall(self) -> None:
        """Send nothing more; read (and answer a close) until the client goes."""
        while (got := await self.read_frame()) is not None:
            if got[0] == CLOSE:
                self.write(frame(CLOSE, got[1][:2]))
                with contextlib.suppress(*_GONE):
                    await self.writer.drain()
                break
        self.writer.close()
        self.ended = self.ended or time.monotonic()

    linger = stall  # after the finishing record: wait for the client's close

    async def gone(self) -> None:
        """Until the client closes its side (read and dropped meanwhile)."""
        with contextlib.suppress(*_GONE):
            while await self.reader.read(65536):
                pass
        self.ended = self.ended or time.monotonic()

    async def flood(self, chunk: bytes, limit: float = 15.0) -> None:
        """Never read again; write ``chunk`` over and over until the client goes (its reset
        fails a write) or ``limit`` seconds pass."""
        sock = self.writer.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        transport: Any = self.writer.transport  # a socket transport: it reads too
        transport.pause_reading()
        with contextlib.suppress(*_GONE, TimeoutError):
            async with asyncio.timeout(limit):
                while not self.writer.is_closing():
                    self.writer.write(chunk)
                    await self.writer.drain()
        self.ended = self.ended or time.monotonic()
        self.writer.transport.abort()

    async def ping_flood(self, limit: float = 15.0) -> None:
        """Pings (125 bytes each) as fast as the client reads them, never reading its pongs."""
        await self.flood(frame(PING, b"p" * 125) * 256, limit)

    async def empty_fragments(self, limit: float = 15.0) -> None:
        """A text message begun (no fin) and continued by empty fragments, for ever."""
        self.write(frame(TEXT, b"", fin=False))
        await self.flood(frame(CONTINUATION, b"", fin=False) * 32768, limit)


def _token(payload: bytes) -> str | None:
    try:
        return str(json.loads(payload)["authToken"])
    except (ValueError, KeyError, TypeError):
        return None


Script = Callable[[Conn], Awaitable[None]]


@dataclass
class RawServer:
    url: str  # ws://127.0.0.1:port
    conns: list[Conn]

    @property
    def starts(self) -> list[int]:
        return [c.start for c in self.conns]


@contextlib.asynccontextmanager
async def raw_server(script: Script) -> AsyncIterator[RawServer]:
    """A loopback server running ``script`` for each connection (its errors of a gone
    client ignored); yields it once listening. Every connection is dropped at the end."""
    conns: list[Conn] = []
    tasks: set[asyncio.Task[Any]] = set()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        conn = Conn(len(conns), reader, writer)
        conns.append(conn)
        task = asyncio.current_task()
        assert task is not None
        tasks.add(task)
        try:
            await script(conn)
        except _GONE:
            conn.ended = conn.ended or time.monotonic()
        finally:
            writer.transport.abort()
            tasks.discard(task)

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield RawServer(f"ws://127.0.0.1:{port}", conns)
    finally:
        server.close()
        for task in list(tasks):
            task.cancel()
        for conn in conns:
            conn.writer.transport.abort()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()


def serve_rest(timeline: Timeline) -> Script:
    """A well-behaved server: every record from ``startPosition``, then wait for the close."""

    async def script(conn: Conn) -> None:
        await conn.accept()
        await conn.records(timeline)
        await conn.linger()

    return script


# ---------------------------------------------------------------------- reading a feed both ways


@dataclass
class Read:
    """What a feed delivered, and the error it ended with (None: it ended)."""

    records: list[Any]
    error: BaseException | None
    position: int
    finished: bool
    connections: int


async def read(client: Client, feed: Feed[Any], way: Way, pace: bool = False) -> Read:
    """Every record of ``feed``, iterated (``feed``) or through ``client.live.merge`` of it
    alone (``merged``: pushed by picows); an error is caught and returned. ``pace``: the
    consumer gives the event loop a turn after each record, as one that awaits its own
    I/O does (what arrives meanwhile is handled between two records)."""
    got: list[Any] = []
    error: BaseException | None = None
    try:
        if way == "feed":
            async with feed:
                async for r in feed:
                    got.append(r)
                    if pace:
                        await asyncio.sleep(0)
        else:
            async with client.live.merge([feed]) as m:
                async for _, r in m:
                    got.append(r)
                    if pace:
                        await asyncio.sleep(0)
    except Exception as exc:
        error = exc
    return Read(got, error, feed.position, feed.finished, feed.connections)
