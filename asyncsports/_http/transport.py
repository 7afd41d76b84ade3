"""The transport seam: how the session reaches the network, and aiohttp's transport.

:class:`~asyncsports._http.session.Session` sends requests, reads bodies and opens
websockets through a :class:`Transport` only, as httpx's ``_transports/``: another HTTP
client is another module with these few names, not a fork of the session. What a
transport hands back is read through small protocols (:class:`Reply` and its
:class:`Body`) that aiohttp's own objects satisfy as they are, so the default transport
adds no object per request. Its websockets push their messages to a :class:`Listener`
(a :class:`Pushed` socket): the default transport's are picows'.

Everything above the seam (retries, rate limits, hooks, the body's bounds, errors and
their redaction) stays in the session; a transport only moves bytes and says, through
:meth:`Transport.failure`, how its own exceptions are to be taken.
"""

from __future__ import annotations

import builtins
import ssl
from collections.abc import AsyncIterator, Awaitable, Mapping
from typing import TYPE_CHECKING, Any, Literal, Protocol

import aiohttp
import picows
import yarl
from aiohttp.helpers import _SENTINEL, sentinel

from asyncsports._http.headwait import NO_WATCH, HeadersTimeout, HeaderWatch, NoWatch
from asyncsports._version import __version__

if TYPE_CHECKING:
    from asyncsports._http.config import Settings

__all__ = [
    "USER_AGENT",
    "AiohttpTransport",
    "Body",
    "Handshake",
    "Kind",
    "Listener",
    "Pushed",
    "Reply",
    "Transport",
    "origin",
]

USER_AGENT = f"asyncsports/{__version__} aiohttp/{aiohttp.__version__}"

Kind = Literal["final", "unreadable", "stale", "broken"]
"""How a failed send is taken: ``final`` (a certificate or an address is wrong: never
better on a second try), ``unreadable`` (the answer was not HTTP we can read: final too),
``stale`` (a pooled connection turned out closed: send again at once), ``broken`` (any
other: retried with a backoff)."""


class Body(Protocol):
    """A response's body as it arrives (aiohttp's ``StreamReader`` as it is)."""

    async def readany(self) -> bytes:
        """The next piece that arrived (``b""`` at the end)."""
        ...

    async def read(self, n: int = -1) -> bytes:
        """At most ``n`` bytes."""
        ...

    def iter_chunked(self, n: int) -> AsyncIterator[bytes]:
        """The pieces as they arrive, each of at most ``n`` bytes."""
        ...


class Reply(Protocol):
    """A response whose headers came (aiohttp's ``ClientResponse`` as it is)."""

    @property
    def status(self) -> int: ...

    @property
    def headers(self) -> Mapping[str, str]: ...

    @property
    def content_length(self) -> int | None: ...

    @property
    def content(self) -> Body: ...

    def release(self) -> Any:
        """Give the connection back (or drop it if the body is unread)."""
        ...


class Listener(Protocol):
    """What a :class:`Pushed` socket calls from the event loop's callbacks (never awaited)."""

    def on_message(self, data: bytes) -> None:
        """One whole text or binary message (its fragments joined), as bytes.

        An exception raised here ends the connection (dropped) and reaches
        :meth:`on_closed` as its ``error``.
        """
        ...

    def on_closed(self, code: int | None, error: BaseException | None) -> None:
        """Once, when the connection is gone for any reason, the client's own close or
        abort too: ``code`` is the server's close code (None: no close frame came),
        ``error`` what broke it, if anything."""
        ...


class Pushed(Protocol):
    """An open websocket that pushes its messages to a :class:`Listener`."""

    @property
    def closed(self) -> bool: ...

    @property
    def close_code(self) -> int | None: ...

    async def send_str(self, data: str) -> None: ...

    async def close(self, *, code: int = 1000) -> Any:
        """Send a close frame, wait for the server's answer at most the transport's close
        wait, then drop the connection; no message reaches the listener after this."""
        ...

    def pause(self, *, hold: bool = True) -> None:
        """Stop reading the socket (TCP pushes back on the server): no message reaches the
        listener until :meth:`resume`; with ``hold`` False, what was read already still
        does (at most one read). Idempotent."""
        ...

    def resume(self) -> None:
        """Read again, the messages held first. Idempotent."""
        ...


class Handshake(Exception):
    """A websocket handshake the server answered with an HTTP status (not 101)."""

    def __init__(self, status: int, headers: Mapping[str, str] | None) -> None:
        super().__init__(status)
        self.status = status
        self.headers = headers


class Transport(Protocol):
    """What the session needs of an HTTP client: the seam a second transport fills in.

    :meth:`send` and what a :class:`Reply`'s body and a :class:`Pushed` socket do raise one of
    :attr:`errors` when the network fails; :meth:`failure` says how each is taken.

    Its websockets (:meth:`listen`) push their messages to a :class:`Listener`: the live
    driver reads every feed that way, iterated or merged.
    """

    errors: tuple[type[BaseException], ...]
    """What a failed send, body read or websocket raises (its time limits too)."""

    @property
    def is_open(self) -> bool:
        """Whether :meth:`send` can be called."""
        ...

    def open(self) -> None:
        """Make the connection pool, inside the event loop that will use it."""
        ...

    async def close(self) -> None:
        """Close every pool (safe twice); open sockets are closed with them."""
        ...

    def in_use(self) -> int:
        """Connections of the requests' pool acquired right now."""
        ...

    def send(self, url: str, headers: Mapping[str, str], whole: bool) -> Awaitable[Reply]:
        """GET ``url`` (already encoded) following no redirect; ``whole``: the body
        will be read whole (the transport may bound it with its own timer)."""
        ...

    def failure(self, exc: BaseException) -> tuple[Kind, str]:
        """How a failed send is taken, and what to call it (``connection failed``; a
        time limit's own words, which start with ``timed out``)."""
        ...

    async def listen(
        self, url: str, headers: Mapping[str, str] | None, max_size: int, listener: Listener
    ) -> Pushed:
        """Open a websocket whose messages go to ``listener``, following no redirect.

        Opening (connect, TLS and the handshake's headers) takes at most
        ``Timeout.connect`` as a whole. Raises :class:`Handshake` for an answer with an
        HTTP status, or one of :attr:`errors`. ``max_size`` (0: the transport's own
        bound) bounds a whole message: a longer one ends the connection, with an error
        for :meth:`Listener.on_closed`.
        """
        ...

    def abort(self, ws: Pushed) -> Any:
        """Something to call to drop ``ws`` without waiting on its server, or None."""
        ...


_TIMEOUT = builtins.TimeoutError


class AiohttpTransport:
    """The default :class:`Transport`: aiohttp's pool for requests, picows' pushing
    websockets (:meth:`listen`)."""

    # OSError and picows' WSError: what picows' websockets raise (listen).
    errors: tuple[type[BaseException], ...] = (
        aiohttp.ClientError,
        _TIMEOUT,
        OSError,
        picows.WSError,
    )

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        t = settings.timeout
        # Timeout.body is checked as a whole body's pieces arrive (StreamResponse.whole),
        # and a server that sends nothing is cut off by the read timeout: no timer per
        # request. Without a read timeout nothing would wake that check, so aiohttp's
        # total timer bounds the body instead.
        self._whole_timeout: aiohttp.ClientTimeout | _SENTINEL = (
            aiohttp.ClientTimeout(total=t.body, sock_connect=t.connect)
            if t.read is None and t.body is not None
            else sentinel
        )
        self._http: aiohttp.ClientSession | None = None
        self._watch: HeaderWatch | NoWatch = NO_WATCH  # the requests' pool's, once open
        self._origin: tuple[str, str, str] = ("", "", "")
        self._pushed: set[Any] = set()

    @property
    def is_open(self) -> bool:
        """Whether :meth:`send` can be called."""
        return self._http is not None and not self._http.closed

    def open(self) -> None:
        """Make the requests' pool (the live one waits for the first websocket)."""
        if self.is_open:
            return
        http = self._http = self._pool(self._settings.max_connections)
        if hasattr(http, "_retry_connection"):
            # aiohttp would re-send a GET once, unseen, when a pooled connection turns out
            # closed; the retry engine does that instead (decide's "resend"), so that
            # every request on the wire is counted in attempts and requests_sent.
            http._retry_connection = False
        read = self._settings.timeout.read
        if read is not None and http.connector is not None:
            # sock_read restarts with every byte: this bounds the headers as a whole.
            self._watch = HeaderWatch(http.connector, read, self._settings.timeout.connect)

    def _pool(self, limit: int) -> aiohttp.ClientSession:
        s = self._settings
        connector = aiohttp.TCPConnector(limit=limit, ttl_dns_cache=s.dns_ttl, ssl=s.verify_ssl)
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=s.timeout.connect, sock_read=s.timeout.read
        )
        return aiohttp.ClientSession(
            connector=connector,
            timeout=timeout,
            headers={"User-Agent": USER_AGENT},
            raise_for_status=False,
            auto_decompress=True,
        )

    async def close(self) -> None:
        """Close the pools. Safe to call twice."""
        http, self._http = self._http, None
        self._watch.stop()
        self._watch = NO_WATCH
        for ws in list(self._pushed):
            ws.abort()
        self._pushed.clear()
        if http is not None:
            await http.close()

    def in_use(self) -> int:
        """How many pooled connections are acquired right now (0 when closed)."""
        if self._http is None or self._http.connector is None:
            return 0
        return len(getattr(self._http.connector, "_acquired", ()))

    def send(self, url: str, headers: Mapping[str, str], whole: bool) -> Awaitable[Reply]:
        """GET ``url`` on the requests' pool (the session checked that it is open)."""
        http = self._http
        assert http is not None
        if self._watch.asleep:
            self._watch.wake()
        return http.get(
            self._url(url),
            headers=headers,
            allow_redirects=False,
            timeout=self._whole_timeout if whole else sentinel,
        )

    def _url(self, url: str) -> yarl.URL:
        """``url`` as yarl's URL, built from its parts when its origin is the last one's.

        Parsing a whole URL costs yarl about 1.7 us, as a walk's every page is a new string
        (its parse cache misses); building one from known parts costs a third of that.
        """
        prefix, scheme, authority = self._origin
        if not (prefix and url.startswith(prefix)):
            prefix, scheme, authority = self._origin = origin(url)
        rest = url[len(prefix) :]
        if not prefix or not rest.startswith("/") or "#" in rest:
            return yarl.URL(url, encoded=True)
        path, _, query = rest.partition("?")
        return yarl.URL.build(
            scheme=scheme, authority=authority, path=path, query_string=query, encoded=True
        )

    def failure(self, exc: BaseException) -> tuple[Kind, str]:
        """aiohttp's failures, sorted."""
        if isinstance(
            exc,
            (
                aiohttp.ClientSSLError,
                aiohttp.InvalidURL,
                ssl.SSLCertVerificationError,
                picows.WSInvalidURL,
            ),
        ):
            return "final", "connection failed"
        if isinstance(exc, HeadersTimeout):
            # A read timeout, said in full.
            return "broken", str(exc)
        if isinstance(exc, aiohttp.ClientResponseError):
            # A content encoding we cannot decode, malformed headers: the same server
            # would say the same again.
            return "unreadable", "the response could not be read"
        if isinstance(exc, aiohttp.ServerDisconnectedError):
            return "stale", "connection failed"
        return "broken", "connection failed"

    async def listen(
        self, url: str, headers: Mapping[str, str] | None, max_size: int, listener: Listener
    ) -> Pushed:
        """A websocket whose messages go to ``listener`` (see :meth:`Transport.listen`): picows',
        its own connection (no pool), closed with the transport.

        Opening (connect, TLS and the handshake) takes at most ``Timeout.connect`` as a
        whole, however slowly the server answers; closing waits at most as long (10 s
        without a connect timeout).
        """
        if not self.is_open:
            raise RuntimeError("the client is not open: use 'async with Client(...) as client:'")
        from asyncsports._http import picows as pushed  # it imports this module

        ws = await pushed.listen(
            self._settings, url, headers, max_size, listener, self._pushed.discard
        )
        if not ws.closed:
            self._pushed.add(ws)
        return ws

    def abort(self, ws: Pushed) -> Any:
        """The socket's own ``abort``."""
        return getattr(ws, "abort", None)


def origin(url: str) -> tuple[str, str, str]:
    """``(scheme://authority, scheme, authority)`` of an absolute URL, else three blanks."""
    scheme, sep, rest = url.partition("://")
    end = rest.find("/")
    if not sep or end <= 0:
        return "", "", ""
    return url[: len(scheme) + 3 + end], scheme, rest[:end]
