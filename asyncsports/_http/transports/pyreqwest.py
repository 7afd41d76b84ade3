"""A second :class:`~asyncsports._http.transports.base.Transport`: pyreqwest (Rust's reqwest), a spike.

Requests go through a pyreqwest ``Client`` (hyper and tokio on a thread of their own);
websockets, which pyreqwest has none of, through an inner
:class:`~asyncsports._http.transports.aiohttp.AiohttpTransport` made at the first live feed.
Measured against aiohttp in ``benchmarks/results/transport-spike.md``; not offered as an
extra yet, nor exported: a client takes it by its private path::

    Client(url, token=..., transport=PyreqwestTransport)

What differs from aiohttp's transport:

- every body is streamed (``build_streamed``), so the session's bounds (``max_body_size``
  after decoding, ``Timeout.body``, ``min_rate``) apply as they do over aiohttp; a whole
  body with a ``Content-Length`` is taken in one read, so those bounds are checked once
  per body there, not per network read;
- :meth:`PyreqwestTransport.in_use` counts the responses handed over and not yet released:
  pyreqwest exposes no pool counts (its ``max_connections`` bounds requests in flight);
- ``dns_ttl`` has no equivalent (reqwest resolves through the system each time it connects);
- a pooled connection the server closed is re-sent by hyper itself, unseen, so ``stale``
  never comes back from here: every network failure is ``broken``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any

import aiohttp

from asyncsports._http.transports.aiohttp import AiohttpTransport
from asyncsports._http.transports.base import Kind, Listener, Pushed
from asyncsports._optional import need
from asyncsports._version import __version__

if TYPE_CHECKING:
    from asyncsports._http.config import Settings

__all__ = ["PyreqwestTransport"]

_FEATURE = "the pyreqwest transport"
_PIECE = 64 * 1024  # a read when the length is unknown (pyreqwest allocates what is asked)


def _seconds(value: float | None) -> dt.timedelta | None:
    return None if value is None else dt.timedelta(seconds=value)


class _Reply:
    """A response whose headers came, read as the session reads aiohttp's (:class:`Reply`
    and its :class:`Body` in one object)."""

    __slots__ = ("_left", "_let_go", "_reader", "_req", "content_length", "headers", "status")

    def __init__(self, let_go: Callable[[], None], req: Any, resp: Any) -> None:
        self._let_go = let_go  # the transport's count of responses held, one less
        self._req = req  # the StreamRequest: dropping it closes the body (see release)
        self._reader = resp.body_reader
        self.status: int = resp.status
        self.headers: Mapping[str, str] = resp.headers
        length = resp.get_header("content-length")
        self.content_length: int | None = int(length) if length is not None else None
        # What is left to read, when known: a decoded body's length is not the header's.
        self._left = None if "content-encoding" in self.headers else self.content_length

    @property
    def content(self) -> _Reply:
        return self

    async def readany(self) -> bytes:
        """The next piece: the rest of the body when its length is known."""
        if self._left is None:
            return await self.read(_PIECE)
        return await self.read(self._left) if self._left > 0 else b""

    async def read(self, n: int = -1) -> bytes:
        """At most ``n`` bytes (``b""`` at the end); ``-1``: the rest, as aiohttp's."""
        if n < 0:
            parts = []
            while part := await self.readany():
                parts.append(part)
            return b"".join(parts)
        if n == 0 or self._reader is None:
            return b""
        got = await self._reader.read(n)
        if got is None:
            self._left = 0
            return b""
        data: bytes = got.to_bytes()
        if self._left is not None:
            self._left -= len(data)
        return data

    async def iter_chunked(self, n: int) -> AsyncIterator[bytes]:
        """The pieces as they arrive (not ``n`` bytes gathered first), each of at most ``n``."""
        while self._reader is not None and (got := await self._reader.read_chunk()) is not None:
            data: bytes = got.to_bytes()
            for start in range(0, len(data), n):
                yield data[start : start + n]

    def release(self) -> None:
        """Let go of the response: pyreqwest frees the body, and its connection, when
        the request object is dropped (reference counting: now), as its ``__aexit__``
        would, which is a coroutine and release is not."""
        if self._req is not None:
            self._req = self._reader = None
            self._let_go()


class PyreqwestTransport:
    """A :class:`~asyncsports._http.transports.base.Transport` over pyreqwest, websockets the
    default transport's (picows)."""

    def __init__(self, settings: Settings) -> None:
        # Imported here, not with the module: importing it alone needs no extra.
        version = need("pyreqwest", _FEATURE).__version__
        self._builder = need("pyreqwest.client", _FEATURE).ClientBuilder
        exc = self._exc = need("pyreqwest.exceptions", _FEATURE)
        self.errors: tuple[type[BaseException], ...] = (
            exc.PyreqwestError,
            *AiohttpTransport.errors,
        )
        self._agent = f"asyncsports/{__version__} pyreqwest/{version}"
        self._settings = settings
        self._live = AiohttpTransport(settings)
        t = settings.timeout
        # Timeout.body bounds a whole body through the session's pace checks; without a
        # read timeout nothing wakes them, so reqwest's total timer does, as aiohttp's does.
        self._whole = _seconds(t.body) if t.read is None and t.body is not None else None
        self._http: Any = None
        self._held = 0

    @property
    def is_open(self) -> bool:
        """Whether :meth:`send` can be called."""
        return self._http is not None

    def open(self) -> None:
        """Make the requests' client (the websockets' pool waits for the first feed)."""
        if self._http is not None:
            return
        s = self._settings
        b = (
            self._builder()
            .follow_redirects(False)
            .user_agent(self._agent)
            .max_connections(s.max_connections)
            .danger_accept_invalid_certs(not s.verify_ssl)
        )
        if s.timeout.connect is not None:
            b = b.connect_timeout(_seconds(s.timeout.connect))
        if s.timeout.read is not None:
            b = b.read_timeout(_seconds(s.timeout.read))
        self._http = b.build()
        self._held = 0

    async def close(self) -> None:
        """Close the client and the websockets' pool. Safe to call twice."""
        http, self._http = self._http, None
        await self._live.close()
        if http is not None:
            await http.close()

    def in_use(self) -> int:
        """Responses handed over and not released (pyreqwest has no pool counts)."""
        return self._held if self._http is not None else 0

    async def send(self, url: str, headers: Mapping[str, str], whole: bool) -> _Reply:
        """GET ``url``, following no redirect; the body is read as the session asks."""
        b = self._http.get(url).headers(headers)
        if whole and self._whole is not None:
            b = b.timeout(self._whole)
        req = b.build_streamed()
        resp = await req.__aenter__()
        self._held += 1
        return _Reply(self._released, req, resp)

    def _released(self) -> None:
        self._held -= 1

    def failure(self, exc: BaseException) -> tuple[Kind, str]:
        """pyreqwest's failures sorted as aiohttp's are (aiohttp's: the websockets')."""
        if isinstance(exc, aiohttp.ClientError):
            return self._live.failure(exc)
        if isinstance(exc, self._exc.BuilderError):
            return "final", "connection failed"  # the URL: the same again next time
        if isinstance(exc, self._exc.DecodeError):
            return "unreadable", "the response could not be read"
        if isinstance(exc, self._exc.ConnectError) and _tls(exc):
            return "final", "connection failed"
        return "broken", "connection failed"

    async def listen(
        self, url: str, headers: Mapping[str, str] | None, max_size: int, listener: Listener
    ) -> Pushed:
        """A websocket, the default transport's (pyreqwest has none)."""
        if self._http is None:
            raise RuntimeError("the client is not open: use 'async with Client(...) as client:'")
        self._live.open()
        return await self._live.listen(url, headers, max_size, listener)

    def abort(self, ws: Pushed) -> Any:
        """The socket's own ``abort``."""
        return self._live.abort(ws)


def _tls(exc: BaseException) -> bool:
    """Whether a connect error is the certificate's (final, as aiohttp's ClientSSLError)."""
    causes = getattr(exc, "details", {}).get("causes") or []
    text = " ".join([str(exc), *(c.get("message", "") for c in causes)]).lower()
    return any(word in text for word in ("certificate", "tls", "ssl"))


if TYPE_CHECKING:
    from asyncsports._http.transports.base import Transport

    _FITS: Callable[[Settings], Transport] = PyreqwestTransport
