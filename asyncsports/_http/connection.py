"""One live connection's I/O: opening it (the client's turn, hooks, handshake, token),
watching it for silence, and closing it whatever the server does.

The live driver (:mod:`asyncsports._http.live`) calls these once per connection; they know
nothing of a feed's records. Every wait here ends within a bound: the handshake within
``Timeout.connect`` (the transport's), a close within ``_ABORT_WAIT``, a silent connection
after ``idle_timeout``.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

import msgspec
import yarl

from asyncsports._http.bodies import transport
from asyncsports._http.config import RequestInfo
from asyncsports._http.session import _call, _Failed
from asyncsports._http.transports.base import Handshake, Listener, Pushed, Transport
from asyncsports._wire.retry import Call, Outcome
from asyncsports._wire.secrets import hide_url
from asyncsports.errors import error_from

if TYPE_CHECKING:
    from asyncsports._http.session import Session

__all__ = [
    "CLOSE_GOING_AWAY",
    "CLOSE_NORMAL",
    "NOT_WAITING",
    "Idle",
    "close",
    "closed_by",
    "connect",
    "stalled",
]

CLOSE_NORMAL = 1000
CLOSE_GOING_AWAY = 1001
_ABORT_WAIT = 0.5
_CLOSE_NAMES = {
    1000: "normal close",
    1001: "going away",
    1006: "dropped without a close frame",
    1008: "policy violation",
    1011: "server error",
}

NOT_WAITING = math.inf
""":attr:`Idle.since` while the connection is not waited on (paused by its consumer)."""


async def connect(
    session: Session,
    net: Transport,
    url: str,
    call: Call,
    headers: tuple[tuple[str, str | None], ...],
    listener: Listener,
) -> tuple[Pushed, str] | _Failed:
    """One connection attempt: wait for the client's turn, connect, send the token.

    ``headers``: the feed's ``extra_headers`` (a None drops nothing the transport sends).
    A refused handshake or a failed connect is a :class:`_Failed` for the retry engine,
    counted in ``call.attempts``; an open one is counted when it ends (``reconnect``).
    """
    token = session._token.current
    if token is None:
        token = await session._token.get()
        if token is None:
            raise ValueError("token: the live feeds need one: Client(token=...)")
    if session._paused_until or session._limiter is not None:
        await session._wait_turn()
    attempt = call.attempts + 1
    sent = {k: v for k, v in headers if v is not None} or None
    shown = hide_url(url)  # what the hooks, the logs and the errors see, as for requests
    opened = await _hooked(session, shown, attempt, _handshake(session, net, url, shown, attempt,
                                                               sent, listener, token))  # fmt: skip
    if isinstance(opened, _Failed):
        call.attempts += 1
        return opened
    try:
        await opened.send_str(_auth(token))
    except (*net.errors, ConnectionError) as exc:  # type: ignore[misc]
        await close(opened, net)
        call.attempts += 1
        return _Failed(transport(exc, shown, attempt, None), Outcome(), token)
    return opened, token


async def _hooked(
    session: Session, url: str, attempt: int, handshake: Awaitable[Pushed | _Failed]
) -> Pushed | _Failed:
    """``handshake`` awaited between the client's hooks (given ``url`` as shown), counted
    in ``requests_sent``."""
    if session._on_request is not None:
        await _call(session._on_request, RequestInfo("GET", url, attempt))
    session.requests += 1
    started = time.monotonic()
    opened = await handshake
    if session._on_response is not None:
        status = opened.outcome.status if isinstance(opened, _Failed) else 101
        elapsed = time.monotonic() - started
        await _call(session._on_response, RequestInfo("GET", url, attempt, status, elapsed))
    return opened


async def _handshake(
    session: Session,
    net: Transport,
    url: str,
    shown: str,
    attempt: int,
    headers: dict[str, str] | None,
    listener: Listener,
    token: str,
) -> Pushed | _Failed:
    """The socket, or why it did not open (a status, or a failed connect, its error
    naming ``shown``: the URL with its query's secrets hidden)."""
    try:
        return await net.listen(url, headers, session.settings.max_element_size or 0, listener)
    except Handshake as exc:
        status = exc.status
        refusal = b"websocket handshake refused"
        if 300 <= status < 400:
            refusal = _redirected(status, exc.headers)
        error = error_from(status, exc.headers or {}, refusal, method="GET", url=shown,
                           attempts=attempt)  # fmt: skip
        return _Failed(error, Outcome(status, getattr(error, "retry_after", None)), token)
    except net.errors as exc:
        # Only a wrong certificate or address is final here: anything else, even an
        # unreadable answer, is a connection that may open next time.
        final = net.failure(exc)[0] == "final"
        return _Failed(transport(exc, shown, attempt, None), Outcome(final=final), token)


def _auth(token: str) -> str:
    """The first message: the data service's token (the vendor's only authentication)."""
    return msgspec.json.encode({"authToken": token}).decode()


async def close(ws: Pushed, net: Transport, code: int = CLOSE_NORMAL) -> None:
    """Close the socket within ``_ABORT_WAIT`` seconds, whatever the server does.

    A polite close first; a server that neither reads (the close frame waits behind a full
    send buffer) nor answers gets dropped (:meth:`Transport.abort`).
    """
    abort = net.abort(ws)
    try:
        if not ws.closed:
            with contextlib.suppress(*net.errors, OSError, RuntimeError):
                async with asyncio.timeout(_ABORT_WAIT):
                    await ws.close(code=code)
    finally:
        if abort is not None:
            abort()  # a no-op once closed


class Idle:
    """The idle watchdog of one connection: a single timer for the connection's life.

    A timer per message would cost as much as the message; instead the listener notes when
    the last message came (``since``), and one timer, re-armed from that, checks. A
    connection is stalled after ``seconds`` with nothing (record, heartbeat or anything
    else) arriving; time paused by the consumer (``since`` is :data:`NOT_WAITING`) does
    not count. A stalled connection is closed from here (``aborting``), which ends it.
    """

    __slots__ = ("_handle", "_loop", "_net", "_ws", "aborting", "seconds", "since")

    def __init__(self, net: Transport, ws: Pushed, seconds: float) -> None:
        loop = self._loop = asyncio.get_running_loop()
        self._net = net
        self._ws = ws
        self.seconds = seconds
        self.since = time.monotonic()
        self.aborting: asyncio.Task[None] | None = None
        self._handle = loop.call_later(seconds, self._check)

    def _check(self) -> None:
        now = time.monotonic()
        due = min(self.since, now) + self.seconds
        if now < due:
            self._handle = self._loop.call_later(due - now, self._check)
        else:
            self.aborting = self._loop.create_task(close(self._ws, self._net, CLOSE_GOING_AWAY))

    async def stop(self) -> None:
        """Stop watching and close the socket (the stalled one without waiting on it)."""
        self._handle.cancel()
        if self.aborting is not None:
            await self.aborting
        await close(self._ws, self._net)


def stalled(idle_timeout: float) -> str:
    """What a connection's end says of a stall."""
    return f"stalled: no message for {idle_timeout:g} s (idle_timeout)"


def closed_by(code: int | None) -> str:
    """What a connection's end says of the server's close ``code`` (None: no close frame)."""
    name = _CLOSE_NAMES.get(code or 1006, "closed")
    return f"connection closed by the server ({code or 1006}, {name})"


def _redirected(status: int, headers: Any) -> bytes:
    """The refusal of a redirected handshake, naming where it led (its origin only)."""
    location = yarl.URL(str((headers or {}).get("Location", "")))
    where = f"{location.scheme}://{location.host}" if location.host else "another address"
    return (
        f"websocket handshake redirected ({status}) to {where}: not followed, a live "
        "connection follows no redirect (the token message would go to that host)"
    ).encode()
