"""A :class:`~.base.Transport` that records what passes through another.

``Client(record=FILE)`` wraps its transport in a :class:`RecordingTransport`: every request
(its host, path and query), its answer (status, the headers worth replaying, the body as
it was read, after content decoding) and every live connection (what the client sent,
each message with its time, how it closed) become events of the file, in the format of
:mod:`asyncsports._wire.recording`, with no secret in them.

Nothing is held longer than it must be: a body goes out in pieces of about 64 KiB as it
is read, and every event is handed to one writer task that joins what is pending and
writes it (through gzip when the name ends ``.gz``) in a worker thread, so the event
loop never waits on the disk or on compression.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import errno
import gzip
import os
import time
from collections.abc import AsyncIterator, Awaitable, Mapping
from typing import IO, TYPE_CHECKING, Any, cast

from asyncsports._http.transports.base import Handshake, Kind, Listener, Pushed, Reply, Transport
from asyncsports._version import __version__
from asyncsports._wire.recording import (
    FORMAT,
    VERSION,
    Pieces,
    encode,
    kept_headers,
    payload,
    split,
)
from asyncsports._wire.secrets import Secrets

if TYPE_CHECKING:
    from asyncsports._http.config import Settings

__all__ = ["RecordingTransport", "refuse_a_recording"]


def refuse_a_recording(path: str | os.PathLike[str]) -> None:
    """FileExistsError if ``path`` holds anything: an earlier recording is never replaced
    unless asked (``record_overwrite``). An empty file is no recording to lose
    (``asyncsports --record`` makes one to check the path)."""
    size = os.path.getsize(path)
    if size:
        raise FileExistsError(
            errno.EEXIST,
            f"a recording is there already ({size} bytes); record_overwrite=True "
            "(asyncsports --record-overwrite) replaces it",
            os.fspath(path),
        )


class _Writer:
    """Lines to one file, written in order by one task at a time, off the event loop.

    ``overwrite``: whether the first open may replace a file that is not empty (else
    FileExistsError: an earlier recording is never replaced by mistake).
    """

    def __init__(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        self.path = os.fspath(path)
        self.overwrite = overwrite
        self._file: IO[bytes] | None = None
        self._pending: list[bytes] = []
        self._task: asyncio.Task[None] | None = None
        self._opened = False

    def open(self, header: bytes) -> None:
        # Made (or, asked to, replaced) at the first open, appended to when the client
        # opens again (a gzip file then has two members, which gzip reads as one).
        mode = "ab" if self._opened else "wb" if self.overwrite else "xb"
        try:
            file = self._open(mode)  # "xb": made here, so nothing is lost (no race)
        except FileExistsError:
            refuse_a_recording(self.path)
            file = self._open("wb")
        self._file = file
        self._opened = True
        if mode != "ab":
            self.write(header)

    def _open(self, mode: str) -> IO[bytes]:
        if self.path.endswith(".gz"):
            return cast("IO[bytes]", gzip.open(self.path, mode, compresslevel=6))
        return open(self.path, mode)

    def write(self, line: bytes) -> None:
        if self._file is None:
            return
        self._pending.append(line)
        if self._task is None or self._task.done():
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # a response released outside the loop: written at close
                return
            self._task = loop.create_task(self._drain())

    async def _drain(self) -> None:
        while self._pending and self._file is not None:
            batch = b"".join(self._pending)
            self._pending.clear()
            await asyncio.to_thread(self._file.write, batch)

    async def close(self) -> None:
        while self._task is not None and not self._task.done():
            await self._task
        await self._drain()
        file, self._file = self._file, None
        if file is not None:
            await asyncio.to_thread(file.close)


class _Recorder:
    """The events of one recording: ids, times and secrets."""

    def __init__(self, path: str | os.PathLike[str], settings: Settings) -> None:
        self.writer = _Writer(path)
        creds = settings.streaming_credentials
        token = settings.token if isinstance(settings.token, str) else None
        self.scrub = Secrets((token, *((creds.auth, creds.secret) if creds else ())))
        self.bases = {
            "data": settings.base_url,
            "streaming": settings.streaming_url or "",
            "live": settings.live_url or "",
        }
        self.ids = 0
        self.t0 = time.monotonic()

    def open(self) -> None:
        started = dt.datetime.now(dt.UTC).isoformat()
        head = {"format": FORMAT, "version": VERSION, "started": started,
                "client": f"asyncsports/{__version__}"}  # fmt: skip
        self.writer.open(encode(head))

    def event(self, kind: str, ident: int, **fields: Any) -> None:
        t = round(time.monotonic() - self.t0, 6)
        self.writer.write(encode({"e": kind, "id": ident, "t": t, **fields}))

    def start(self, kind: str, url: str) -> int:
        self.ids += 1
        host, path, query = split(url, self.bases)
        self.event(kind, self.ids, host=host or "other", path=path, query=self.scrub.pairs(query))
        return self.ids

    def failed(self, ident: int, exc: BaseException) -> None:
        self.event("failed", ident, error=self.scrub.text(type(exc).__name__))

    def learn(self, headers: Mapping[str, str]) -> None:
        """Learn the credentials a request's headers carry (an Authorization in any case)."""
        self.scrub.pairs(headers.items())


class _Body:
    """A body that records each piece the session reads."""

    __slots__ = ("_done", "_ex", "_inner", "_pieces", "_rec")

    def __init__(self, inner: Any, rec: _Recorder, ex: int) -> None:
        self._inner = inner
        self._rec = rec
        self._ex = ex
        self._pieces = Pieces(rec.scrub)
        self._done = False

    def _got(self, chunk: bytes) -> bytes:
        if not chunk:
            self.finish(True)
        elif piece := self._pieces.feed(chunk):
            self._rec.event("body", self._ex, **payload(piece))
        return chunk

    def finish(self, complete: bool) -> None:
        if self._done:
            return
        self._done = True
        if rest := self._pieces.end():
            self._rec.event("body", self._ex, **payload(rest))
        at_eof = getattr(self._inner, "at_eof", None)
        complete = complete or bool(at_eof is not None and at_eof())
        self._rec.event("end", self._ex, complete=complete)

    async def readany(self) -> bytes:
        return self._got(await self._inner.readany())

    async def read(self, n: int = -1) -> bytes:
        chunk = await self._inner.read(n)
        return self._got(chunk) if chunk or n != 0 else chunk

    async def iter_chunked(self, n: int) -> AsyncIterator[bytes]:
        async for chunk in self._inner.iter_chunked(n):
            yield self._got(chunk)
        self._got(b"")


class _Reply:
    """A reply whose body is recorded; releasing it ends the exchange's events."""

    __slots__ = ("_body", "_inner")

    def __init__(self, inner: Reply, body: _Body) -> None:
        self._inner = inner
        self._body = body

    @property
    def status(self) -> int:
        return self._inner.status

    @property
    def headers(self) -> Mapping[str, str]:
        return self._inner.headers

    @property
    def content_length(self) -> int | None:
        return self._inner.content_length

    @property
    def content(self) -> _Body:
        return self._body

    def release(self) -> Any:
        self._body.finish(False)
        return self._inner.release()


class _Socket:
    """A websocket whose messages, both ways, are recorded: the listener the inner
    transport calls (recording, then passing each message on) and the socket handed back."""

    __slots__ = ("_closed", "_id", "_listener", "_rec", "inner")

    def __init__(self, listener: Listener, rec: _Recorder, ident: int) -> None:
        self.inner: Pushed | None = None
        self._listener = listener
        self._rec = rec
        self._id = ident
        self._closed = False

    @property
    def closed(self) -> bool:
        return self.inner is None or self.inner.closed

    @property
    def close_code(self) -> int | None:
        return None if self.inner is None else self.inner.close_code

    def _end(self, by: str, code: int | None, error: str | None = None) -> None:
        if not self._closed:
            self._closed = True
            extra = {"error": error} if error else {}
            self._rec.event("closed", self._id, by=by, code=code, **extra)

    def on_message(self, data: bytes) -> None:
        self._rec.event("recv", self._id, **payload(self._rec.scrub.bytes(bytes(data))))
        self._listener.on_message(data)

    def on_closed(self, code: int | None, error: BaseException | None) -> None:
        if error is not None:
            self._end("lost", None, type(error).__name__)
        else:
            self._end("server", code)
        self._listener.on_closed(code, error)

    async def send_str(self, data: str) -> None:
        assert self.inner is not None
        self._rec.event("sent", self._id, text=self._rec.scrub.sent(data))
        await self.inner.send_str(data)

    async def close(self, *, code: int = 1000) -> Any:
        self._end("client", code)
        assert self.inner is not None
        return await self.inner.close(code=code)

    def pause(self, *, hold: bool = True) -> None:
        assert self.inner is not None
        self.inner.pause(hold=hold)

    def resume(self) -> None:
        assert self.inner is not None
        self.inner.resume()


class RecordingTransport:
    """``inner`` (any :class:`Transport`), with every exchange recorded to ``path``: a
    new or empty file, or any file when ``overwrite`` (else FileExistsError at open)."""

    def __init__(
        self,
        inner: Transport,
        path: str | os.PathLike[str],
        settings: Settings,
        *,
        overwrite: bool = False,
    ) -> None:
        self.inner = inner
        self.errors = inner.errors
        self._rec = _Recorder(path, settings)
        self._rec.writer.overwrite = overwrite

    @property
    def path(self) -> str:
        """Where the recording goes."""
        return self._rec.writer.path

    @property
    def is_open(self) -> bool:
        return self.inner.is_open

    def open(self) -> None:
        if not self.inner.is_open:
            self._rec.open()
        self.inner.open()

    async def close(self) -> None:
        try:
            await self.inner.close()
        finally:
            await self._rec.writer.close()

    def in_use(self) -> int:
        return self.inner.in_use()

    def send(self, url: str, headers: Mapping[str, str], whole: bool) -> Awaitable[Reply]:
        return self._send(url, headers, whole)

    async def _send(self, url: str, headers: Mapping[str, str], whole: bool) -> Reply:
        rec = self._rec
        rec.learn(headers)
        ex = rec.start("get", url)
        try:
            reply = await self.inner.send(url, headers, whole)
        except BaseException as exc:
            rec.failed(ex, exc)
            raise
        rec.event("reply", ex, status=reply.status, headers=kept_headers(rec.scrub, reply.headers))
        return _Reply(reply, _Body(reply.content, rec, ex))

    def failure(self, exc: BaseException) -> tuple[Kind, str]:
        return self.inner.failure(exc)

    async def listen(
        self, url: str, headers: Mapping[str, str] | None, max_size: int, listener: Listener
    ) -> Pushed:
        rec = self._rec
        if headers:
            rec.learn(headers)
        ident = rec.start("connect", url)
        socket = _Socket(listener, rec, ident)
        try:
            socket.inner = await self.inner.listen(url, headers, max_size, socket)
        except Handshake as exc:
            rec.event("refused", ident, status=exc.status)
            raise
        except BaseException as exc:
            rec.failed(ident, exc)
            raise
        rec.event("open", ident)
        return socket

    def abort(self, ws: Pushed) -> Any:
        inner = ws.inner if isinstance(ws, _Socket) else ws
        return None if inner is None else self.inner.abort(inner)
