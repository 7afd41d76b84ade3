"""The transport seam, protocols only: how the session reaches the network.

:class:`~asyncsports._http.session.Session` sends requests, reads bodies and opens
websockets through a :class:`Transport` only, as httpx's ``_transports/``: another HTTP
client is another module with these few names, not a fork of the session. What a
transport hands back is read through small protocols (:class:`Reply` and its
:class:`Body`) that aiohttp's own objects satisfy as they are, so the default transport
adds no object per request. Its websockets push their messages to a :class:`Listener`
(a :class:`Pushed` socket).

Everything above the seam (retries, rate limits, hooks, the body's bounds, errors and
their redaction) stays in the session; a transport only moves bytes and says, through
:meth:`Transport.failure`, how its own exceptions are to be taken.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Mapping
from typing import Any, Literal, Protocol

__all__ = ["Body", "Handshake", "Kind", "Listener", "Pushed", "Reply", "Transport"]

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
