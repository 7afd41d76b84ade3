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
from typing import TYPE_CHECKING, Any

import msgspec
import yarl

from asyncsports._http.bodies import transport
from asyncsports._http.session import Attempt, Failure
from asyncsports._http.transports.base import Handshake, Listener, Pushed, Transport
from asyncsports._wire.hosts import moved
from asyncsports._wire.retry import Call, Outcome
from asyncsports.errors import error_from

if TYPE_CHECKING:
    from asyncsports._http.request import Request
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
    session: Session, net: Transport, req: Request, base: str, call: Call, listener: Listener
) -> tuple[Pushed, str] | Failure:
    """One connection attempt of ``req`` at ``base``: begun as any attempt of the session
    (:meth:`Session.begin`: the client's turn, the token, the hooks), then the handshake
    and the token message.

    ``req``'s headers are the feed's ``extra_headers`` (a None drops nothing the transport
    sends). A refused handshake or a failed connect is a :class:`Failure` for the retry
    engine, counted in ``call.attempts``; an open one is counted when it ends
    (``reconnect``).
    """
    a = await session.begin(req, base, call.attempts + 1, live=True)
    opened = await _handshake(session, net, a, listener)
    await a.answered(opened.outcome.status if isinstance(opened, Failure) else 101)
    if isinstance(opened, Failure):
        call.attempts += 1
        return opened
    token = a.token
    assert token is not None  # live=True: a token or a ValueError
    try:
        await opened.send_str(_auth(token))
    except (*net.errors, ConnectionError) as exc:  # type: ignore[misc]
        await close(opened, net)
        call.attempts += 1
        return Failure(transport(exc, a.shown, a.number, None), Outcome(), token)
    return opened, token


async def _handshake(
    session: Session, net: Transport, a: Attempt, listener: Listener
) -> Pushed | Failure:
    """The socket, or why it did not open (a status, or a failed connect, its error
    naming the URL as shown: its query's secrets hidden)."""
    try:
        return await net.listen(a.url, a.headers, session.settings.max_element_size or 0, listener)
    except Handshake as exc:
        status = exc.status
        refusal = b"websocket handshake refused"
        if 300 <= status < 400:
            refusal = _redirected(status, exc.headers)
        error = error_from(
            status, exc.headers or {}, refusal, method="GET", url=a.shown, attempts=a.number
        )
        return Failure(error, Outcome(status, getattr(error, "retry_after", None)), a.token)
    except net.errors as exc:
        # Only a wrong certificate or address is final here: anything else, even an
        # unreadable answer, is a connection that may open next time.
        final = net.failure(exc)[0] == "final"
        failed = transport(exc, a.shown, a.number, None)
        note = moved(a.url)
        if note is not None:  # a decommissioned host: say where the service went
            failed.add_note(note)
        return Failure(failed, Outcome(final=final), a.token)


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
