"""A :class:`~.base.Transport` that records what passes through another.

``Client(record=FILE)`` wraps its transport in a :class:`RecordingTransport`: every request
(its host, path and query), its answer (status, the headers worth replaying, the body as
it was read, after content decoding) and every live connection (what the client sent,
each message with its time, how it closed) become events of the file, in the format of
:mod:`asyncsports._wire.recording`, with no secret in them.

Nothing is held longer than it must be: a body goes out in pieces of about 64 KiB as it
is read, and every event is handed to one writer task that joins what is pending and
writes it (through gzip when the name ends ``.gz``) in a worker thread, so the event
loop never waits on the disk or on compression; the file is opened without blocking,
and only a regular file is taken.

A write error ends the recording loudly: the file is cut back to its last whole line,
and the client's next request (the live connections open then are dropped, so that
they reconnect) raises :class:`~asyncsports.errors.RecordingWriteError`, or its close
if no request did.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import errno
import os
import stat
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from asyncsports._http.transports.base import Handshake, Kind, Listener, Pushed, Reply, Transport
from asyncsports._version import __version__
from asyncsports._wire.recording.format import FORMAT, VERSION, encode, payload
from asyncsports._wire.recording.writing import Pieces, kept_headers, split
from asyncsports._wire.secrets import Secrets
from asyncsports.errors import RecordingWriteError

if TYPE_CHECKING:
    from asyncsports._http.config import Settings

__all__ = ["MEMBER", "RecordingTransport", "prepare_a_recording", "refuse_a_recording"]


MEMBER = 256 * 1024
"""Bytes of lines one gzip member of a ``.gz`` recording holds at most (the header is a
member of its own): a write error cuts such a file back to its last whole member."""


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


def prepare_a_recording(path: str | os.PathLike[str]) -> None:
    """Make ``path`` (empty) unless it is there, as :class:`RecordingTransport` opens it:
    :class:`~asyncsports.errors.RecordingWriteError` if it cannot be written or is not a
    regular file. Never blocks on a FIFO."""
    os.close(_open(os.fspath(path), os.O_CREAT | os.O_APPEND))


def _open(path: str, flags: int) -> int:
    """A descriptor to write ``path``, opened without blocking: a FIFO nobody reads, a
    device, a socket are refused as not a regular file, since a recording is cut back to
    its last whole line on a write error, which only a file allows, and opening a FIFO
    waits for its reader. FileExistsError (``O_EXCL``) is left as it is."""
    try:
        fd = os.open(path, flags | os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # a FIFO with no reader, a socket
            raise _refused(path) from None
        raise _failed(path, exc) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _refused(path)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _refused(path: str) -> RecordingWriteError:
    return RecordingWriteError(errno.EINVAL, "not a regular file", path)


def _failed(path: str, exc: OSError) -> RecordingWriteError:
    return RecordingWriteError(exc.errno or errno.EIO, exc.strerror or str(exc), path)


class _Writer:
    """Lines to one file, written in order by one task at a time, off the event loop.

    ``overwrite``: whether the first open may replace a file that is not empty (else
    FileExistsError: an earlier recording is never replaced by mistake).

    A write error (a full disk, an I/O error, a size limit) ends the recording: the file
    is cut back to its last whole line (a ``.gz`` one to its last whole member), later
    lines are dropped, ``error`` holds it and ``failed`` is told, once.
    """

    def __init__(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        self.path = os.fspath(path)
        self.overwrite = overwrite
        self.error: RecordingWriteError | None = None
        self.told = False  # the error was raised to the client's user already
        self.failed: Callable[[RecordingWriteError], None] | None = None
        self._gz = self.path.endswith(".gz")
        self._fd: int | None = None
        self._deflate: Any = None  # the gzip member being written (zlib's compressor)
        self._member = 0  # bytes of lines in it
        self._whole = 0  # the file's bytes up to its last whole line (or member)
        self._end = 0  # the file's bytes
        self._lone = False  # the next line (the header) is a member of its own
        self._pending: list[bytes] = []
        self._task: asyncio.Task[None] | None = None
        self._draining = False  # one drain at a time: two would write out of order
        self._opened = False

    def open(self, header: bytes) -> None:
        # Made (or, asked to, replaced) at the first open, appended to when the client
        # opens again (a gzip file then has one more member, which gzip reads as one).
        flags = os.O_APPEND if self._opened else os.O_TRUNC if self.overwrite else os.O_EXCL
        try:
            fd = _open(self.path, os.O_CREAT | flags)  # O_EXCL: made here, so nothing is lost
        except FileExistsError:
            refuse_a_recording(self.path)
            fd = _open(self.path, os.O_CREAT | os.O_TRUNC)
        self._fd = fd
        self._whole = self._end = os.fstat(fd).st_size if flags == os.O_APPEND else 0
        self._opened = True
        self.error = None
        self.told = False
        self._deflate = None
        self._member = 0
        if flags != os.O_APPEND:
            self._lone = True
            self.write(header)

    def write(self, line: bytes) -> None:
        if self._fd is None or self.error is not None:
            return
        self._pending.append(line)
        if not self._draining:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # a response released outside the loop: written at close
                return
            self._draining = True
            self._task = loop.create_task(self._drain())

    async def _drain(self) -> None:
        """Write what is pending until nothing is (``_draining`` set by the caller)."""
        try:
            while self._pending and self._fd is not None and self.error is None:
                lone, self._lone = self._lone, False
                if lone:
                    batch = self._pending.pop(0)
                else:
                    batch = b"".join(self._pending)
                    self._pending.clear()
                try:
                    await asyncio.to_thread(self._put, batch, lone)
                except OSError as exc:
                    await self._fail(exc)
        finally:
            self._draining = False

    def _put(self, batch: bytes, lone: bool) -> None:
        """Write ``batch`` (whole lines) in a worker thread; OSError (the file cut back)."""
        if not self._gz:
            self._out(self._fd, batch, True)
            return
        while batch:
            # A member ends at the first line end past MEMBER bytes, whatever the batches.
            room = MEMBER - self._member  # at least 1: a full member is ended at once
            cut = len(batch)
            if not lone and cut > room:
                cut = batch.find(b"\n", room - 1) + 1 or cut
            part, batch = batch[:cut], batch[cut:]
            if self._deflate is None:
                self._deflate = zlib.compressobj(6, zlib.DEFLATED, 31)  # 31: gzip's framing
            data = self._deflate.compress(part)
            self._member += len(part)
            ends = lone or self._member >= MEMBER
            if ends:
                data += self._deflate.flush()
                self._deflate = None
                self._member = 0
            self._out(self._fd, data, ends)

    def _out(self, fd: int | None, data: bytes, whole: bool) -> None:
        assert fd is not None
        start = self._end
        view = memoryview(data)
        try:
            while view:
                n = os.write(fd, view)
                if n <= 0:  # never for a file, but a loop must end
                    raise OSError(errno.EIO, os.strerror(errno.EIO))
                self._end += n
                view = view[n:]
        except OSError:
            if not self._gz:  # the whole lines of what went out are kept
                self._whole = start + data.rfind(b"\n", 0, self._end - start) + 1
            with contextlib.suppress(OSError):  # then the error said is the write's
                os.ftruncate(fd, self._whole)
            raise
        if whole:
            self._whole = self._end

    def _finish(self, fd: int) -> None:
        """The last gzip member ended, and the file closed (in a worker thread)."""
        try:
            if self._deflate is not None:
                data, self._deflate, self._member = self._deflate.flush(), None, 0
                self._out(fd, data, True)
        finally:
            os.close(fd)

    async def _fail(self, exc: OSError) -> None:
        self.error = _failed(self.path, exc)
        self._pending.clear()
        fd, self._fd = self._fd, None
        if fd is not None:
            await asyncio.to_thread(os.close, fd)
        if self.failed is not None:
            self.failed(self.error)

    def check(self) -> None:
        """RecordingWriteError if the recording failed (it is then told)."""
        if self.error is not None:
            self.told = True
            raise self.error

    async def close(self) -> None:
        """Write what is pending and close the file; RecordingWriteError if the
        recording failed and no request raised it already (an error is said once)."""
        while self._draining and self._task is not None and not self._task.done():
            await self._task
        self._draining = True
        await self._drain()
        fd, self._fd = self._fd, None
        if fd is not None:
            try:
                await asyncio.to_thread(self._finish, fd)
            except OSError as exc:
                await self._fail(exc)
        error, self.error = self.error, None
        if error is not None and not self.told:
            raise error


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
        self.sockets: set[_Socket] = set()

    def open(self) -> None:
        started = dt.datetime.now(dt.UTC).isoformat()
        head = {
            "format": FORMAT,
            "version": VERSION,
            "started": started,
            "client": f"asyncsports/{__version__}",
        }
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
        self._rec.writer.check()
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
            self._rec.sockets.discard(self)
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
        self._rec.writer.failed = self._failed

    def _failed(self, error: RecordingWriteError) -> None:
        # The open live connections are dropped now (their feeds reconnect, and
        # :meth:`listen` raises): a feed that only receives would go on unrecorded.
        for socket in list(self._rec.sockets):
            self._rec.sockets.discard(socket)
            abort = None if socket.inner is None else self.inner.abort(socket.inner)
            if abort is not None:
                abort()

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
        rec.writer.check()
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
        rec.writer.check()
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
        rec.sockets.add(socket)
        return socket

    def abort(self, ws: Pushed) -> Any:
        inner = ws.inner if isinstance(ws, _Socket) else ws
        return None if inner is None else self.inner.abort(inner)
