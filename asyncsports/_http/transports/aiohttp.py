"""aiohttp's transport, the default: aiohttp's pool for requests, picows' websockets."""

from __future__ import annotations

import ssl
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any

import aiohttp
import picows
import yarl
from aiohttp.helpers import _SENTINEL, sentinel

from asyncsports._http.headwait import NO_WATCH, HeadersTimeout, HeaderWatch, NoWatch
from asyncsports._http.transports import picows as pushed
from asyncsports._http.transports.base import Kind, Listener, Pushed, Reply
from asyncsports._version import __version__

if TYPE_CHECKING:
    from asyncsports._http.config import Settings

__all__ = ["USER_AGENT", "AiohttpTransport", "origin"]

USER_AGENT = f"asyncsports/{__version__} aiohttp/{aiohttp.__version__}"
"""What the client calls itself, on requests and websockets alike."""


class AiohttpTransport:
    """The default :class:`~.base.Transport`: aiohttp's pool for requests, picows' pushing
    websockets (:meth:`listen`)."""

    # OSError and picows' WSError: what picows' websockets raise (listen).
    errors: tuple[type[BaseException], ...] = (
        aiohttp.ClientError,
        TimeoutError,
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
        """A websocket whose messages go to ``listener`` (see
        :meth:`~.base.Transport.listen`): picows', its own connection (no pool), closed
        with the transport.

        Opening (connect, TLS and the handshake) takes at most ``Timeout.connect`` as a
        whole, however slowly the server answers; closing waits at most as long (10 s
        without a connect timeout).
        """
        if not self.is_open:
            raise RuntimeError("the client is not open: use 'async with Client(...) as client:'")
        headers = {"User-Agent": USER_AGENT, **(headers or {})}
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
