"""``Emulator(replay=FILE)``: serve a recording (``Client(record=FILE)``) instead of the world.

The emulator keeps its ports, clock, counters and request log; only the two applications
change. REST: each request is matched by host, path and query (credentials aside, see
:func:`~asyncsports._wire.recording.format.key`) and answered as recorded, the answers to one
key in the order they were recorded, the last repeated once they run out; a body the
recording client stopped reading is sent as far as it was read, then cut. A request not
in the recording is a 404 whose body names the nearest recorded one.

Live feeds: a connection is accepted with any token (a recording holds none), sent what
the recorded feed's first connection got before its first record (the acknowledgement),
then the feed's messages from ``startPosition`` on, numbered as the recorded service
numbered them, each after its recorded gap at the clock's speed (``speed=fast`` in the
query: at once), and ended where the recorded service ended a connection (left open
where it ended none). Choices in docs/wire.md, "Recordings".

The file is untrusted: it is read in bounded chunks and refused (RecordingError) when
malformed, cut short or over a limit, before anything is served; a request the replay
cannot make sense of is a 4xx, never an exception in the server.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import gzip
import os
import urllib.parse
import zlib
from collections.abc import Callable, Iterator

from aiohttp import WSMsgType, web

from asyncsports._wire.recording.feeds import CUT
from asyncsports._wire.recording.format import key, position
from asyncsports._wire.recording.reading import Exchange, Lines, Recording, read
from asyncsports.emulator._app import STREAMING_PREFIX, RequestRecord
from asyncsports.emulator._clock import Clock
from asyncsports.emulator._control import clock_routes
from asyncsports.emulator._faults import Fault
from asyncsports.emulator._http import Reply, error_reply, send
from asyncsports.emulator._match import Nearest, Script, schedule
from asyncsports.errors import RecordingError

__all__ = ["Replay", "load"]

AUTH_WAIT = 10.0
CHUNK = 1024 * 1024
"""Bytes read (inflated) at a time: a line is never read whole before its length is known."""


def _chunks(path: str) -> Iterator[bytes]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        while chunk := f.read1(CHUNK):  # what one step inflates, up to CHUNK
            yield chunk


def load(path: str | os.PathLike[str]) -> Recording:
    """The recording at ``path``: RecordingError if it is not one, or is malformed, cut
    short or over a limit (OSError if it cannot be read)."""
    file = os.fspath(path)
    lines = Lines(_chunks(file), file)
    try:
        return read(lines)
    except EOFError:
        raise RecordingError(file, lines.number, "the gzip stream is cut short") from None
    except (gzip.BadGzipFile, zlib.error) as exc:
        raise RecordingError(file, lines.number, f"not gzip as its name says: {exc}") from None


class Replay:
    """The applications that serve one recording."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        clock: Clock,
        requests: collections.Counter[str],
        log: collections.deque[RequestRecord],
    ) -> None:
        self.path = os.fspath(path)
        self.recording = load(path)
        self.nearest = Nearest([*self.recording.exchanges, *self.recording.feeds])
        self.clock = clock
        self.requests = requests
        self.log = log
        self.served: collections.Counter[str] = collections.Counter()
        self.sockets: set[web.WebSocketResponse] = set()

    def app(self) -> web.Application:
        """The data service, the snooker proxy and the events listing, as recorded."""
        app = web.Application()
        clock_routes(app, self.clock)
        app.router.add_route("*", "/{tail:.*}", self._rest)
        return app

    def live_app(self) -> web.Application:
        """The live feeds, as recorded."""
        app = web.Application()
        app.router.add_get("/{tail:.*}", self._live)
        return app

    async def close(self) -> None:
        """Close every open feed (1001, going away)."""
        for ws in list(self.sockets):
            with contextlib.suppress(Exception):
                await ws.close(code=1001, message=b"emulator closing")

    def answered(self, n: int) -> list[tuple[str, str]]:
        """The first ``n`` REST requests of the recording that were answered 200 each time,
        as ``(host, path and query)``: requests the replay answers (the standalone
        command's "Try:" lines). ``host`` is ``data`` or ``streaming``."""
        found: list[tuple[str, str]] = []
        for wanted, answers in self.recording.exchanges.items():
            if len(found) == n:
                break
            if all(a.status == 200 for a in answers):
                host, _, target = wanted.partition(" ")
                path, mark, query = target.partition("?")
                found.append((host, urllib.parse.quote(path) + mark + query))
        return found

    def _missing(self, wanted: str) -> str:
        near = self.nearest.find(wanted)
        shown = wanted.partition(" ")[2]
        where = f"; the nearest recorded: {near.partition(' ')[2]}" if near else ""
        return f"not in the recording {os.path.basename(self.path)}: {shown}{where}"

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        host = "data"
        if path.startswith(STREAMING_PREFIX + "/"):
            host, path = "streaming", path[len(STREAMING_PREFIX) :]
        wanted = key(host, path, request.query.items())
        self.requests["replay"] += 1
        answers = self.recording.exchanges.get(wanted)
        if request.method not in ("GET", "HEAD") or not answers:
            reply = error_reply(404, self._missing(wanted))
            fault = None
        else:
            n = self.served[wanted]
            self.served[wanted] = n + 1
            answer = answers[min(n, len(answers) - 1)]
            reply, fault = _reply(answer)
        self.log.append(RequestRecord("replay", request.method, request.path_qs, reply.status))
        return await send(request, reply, fault)

    async def _live(self, request: web.Request) -> web.StreamResponse:
        wanted = key("live", request.path, request.query.items())
        feed = self.recording.feeds.get(wanted)
        self.requests["live." + request.path.rpartition("/")[2]] += 1
        if feed is None:
            raise web.HTTPNotFound(text=self._missing(wanted))
        raw = request.query.get("startPosition", "0")
        start = position(raw)
        if start is None:  # said before the upgrade: a 400, not a socket that fails
            shown = raw if len(raw) <= 40 else f"{raw[:40]}... ({len(raw)} characters)"
            raise web.HTTPBadRequest(text=f"startPosition: expected 0 to 18 digits, got {shown!r}")
        fast = request.query.get("speed") == "fast"
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self.sockets.add(ws)
        try:
            with contextlib.suppress(TimeoutError):
                first = await ws.receive(timeout=AUTH_WAIT)
                if first.type in (WSMsgType.TEXT, WSMsgType.BINARY):
                    for text in feed.preamble:
                        await ws.send_str(text)
                    script = schedule(feed, start)
                    if await self._pump(ws, script, fast):
                        await _end(request, ws, script.code)
        except ConnectionError:
            pass  # the client went away mid-send
        finally:
            self.sockets.discard(ws)
        return ws

    async def _pump(self, ws: web.WebSocketResponse, script: Script, fast: bool) -> bool:
        """Send ``script``'s messages at their gaps on the clock while the client is there;
        then whether it still is when the script's end is due. A script without an end waits
        for the client to leave (or the emulator to close): the recorded service ended no
        connection there."""
        loop = asyncio.get_running_loop()
        wake = asyncio.Event()

        def poke() -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed
                loop.call_soon_threadsafe(wake.set)

        unwatch: Callable[[], None] = self.clock.watch(poke)
        reader = asyncio.create_task(_read(ws, wake))
        start = self.clock.time()

        async def there_at(gap: float) -> bool:
            while not fast and not ws.closed and not reader.done():
                left = self.clock.until(start + gap)
                if left == 0:
                    break
                wake.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(left):
                        await wake.wait()
            return not ws.closed and not reader.done()

        try:
            for gap, text in script.messages:
                if not await there_at(gap):
                    return False
                await ws.send_str(text)
            if script.code is None:
                await reader
                return False
            return await there_at(script.at)
        finally:
            unwatch()
            reader.cancel()
            with contextlib.suppress(BaseException):
                await reader


async def _end(request: web.Request, ws: web.WebSocketResponse, code: int | None) -> None:
    """End a replayed connection as the recorded service did: a close frame with its code,
    or a cut (:data:`CUT`, as the emulator's ``drop`` fault does)."""
    if code is None:
        return
    if code == CUT:
        transport = request.transport
        if transport is not None:
            transport.abort()
        return
    await ws.close(code=code, message=b"as recorded")


async def _read(ws: web.WebSocketResponse, gone: asyncio.Event) -> None:
    async for _ in ws:  # what the client says after its token is ignored
        pass
    gone.set()


def _reply(answer: Exchange) -> tuple[Reply, Fault | None]:
    """A recorded answer as the emulator writes replies; one read only in part is cut."""
    headers = dict(answer.headers)
    ctype = next((headers.pop(k) for k in list(headers) if k.lower() == "content-type"), "")
    media, _, params = ctype.partition(";")
    charset = params.partition("charset=")[2].strip() or None
    reply = Reply(
        answer.body, answer.status, media.strip() or "application/octet-stream", headers, charset
    )
    cut = not answer.complete and answer.status < 400
    return reply, Fault(truncate=len(answer.body)) if cut else None
