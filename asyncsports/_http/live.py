"""The live feeds' I/O: one websocket connection after another, decided by the live core.

:func:`follow` is the loop of one feed: open a websocket through the client's own
transport (:meth:`~asyncsports._http.transport.Transport.connect`: its pool, its connect
timeout; the session's hooks, rate limiter and 429 pause for each connection attempt), send the token message, hand every message to the feed's
:class:`~asyncsports._wire.live.FeedState` and yield the records it releases. The feed
ends after the fixture's finishing record, and only then: when a connection ends any other
way (dropped, closed with any code, stalled, or closed by the client after a gap), the pure
:func:`~asyncsports._wire.live.reconnect` decides through the one retry engine: reconnect at
``startPosition`` = records delivered after a backoff, refresh the token once, or raise.
A normal close (1000) of a connection that delivered nothing is the server saying nothing
more is coming: the feed asks the service once (``over``) and ends without error only when
it answers that the fixture is over with every record of its timeline delivered.
A handshake refused with an HTTP status is decided by :func:`~asyncsports._http.retry.decide`
like any other response.

Reading is pulled by the consumer: the socket is read only when the next record is asked
for, so a consumer that falls behind leaves messages in the transport's bounded queue
(aiohttp's reader), which stops reading the socket when full (TCP then pushes back on
the server). There is
no task of its own: cancelling the consumer or closing the feed closes the socket at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec
import yarl

from asyncsports._http.bodies import transport
from asyncsports._http.config import RequestInfo
from asyncsports._http.request import Request, target
from asyncsports._http.retry import Call, Outcome
from asyncsports._http.session import _Failed
from asyncsports._http.transport import Handshake, Message, Socket, Transport
from asyncsports._wire.live import ConnectionEnd, FeedState, Step, reconnect
from asyncsports._wire.live.order import UNKNOWN, Delivered

if TYPE_CHECKING:
    from asyncsports._http.session import Session

from asyncsports.errors import (
    AsyncSportsError,
    AuthenticationError,
    TimeoutError,
    TransportError,
    error_from,
)

__all__ = ["Following", "Over", "Progress", "Warn", "follow"]

log = logging.getLogger("asyncsports")

_CLOSE_NORMAL = 1000
_CLOSE_GOING_AWAY = 1001
_ABORT_WAIT = 0.5
_CLOSE_NAMES = {
    1000: "normal close",
    1001: "going away",
    1006: "dropped without a close frame",
    1008: "policy violation",
    1011: "server error",
}


Over = Callable[[int], Awaitable[tuple[bool, str]]]
"""Asks the service whether a feed at this position may end: (yes or no, what it said)."""
Warn = Callable[[str], Awaitable[None]]
"""Asks the service about a server's warning (its text): raises NotFoundError for an
unknown fixture, else returns (the feed reads on)."""


class Progress:
    """Records yielded by :func:`follow` from its current batch not yet handed out.

    The feed's ``position`` is ``state.position - pending``: a batch (a record that was
    missing and those held behind it) moves the state at once, the consumer one by one.
    ``ended`` says why a feed ended without its finishing record (the service's answer).
    """

    __slots__ = ("ended", "pending")

    def __init__(self) -> None:
        self.pending = 0
        self.ended: str | None = None


class Following(NamedTuple):
    """What following one live feed takes (:func:`follow`, and the pushed way's ``push``).

    ``session`` is the client's :class:`~asyncsports._http.session.Session`, ``req`` the
    feed's path and fixed query (``startPosition`` is added per connection).
    """

    session: Session
    req: Request
    state: FeedState
    idle_timeout: float
    progress: Progress
    over: Over
    warned: Warn


async def follow(feed: Following) -> AsyncGenerator[Delivered, None]:
    """Every record of one live feed, once each and in order, across its connections.

    Ends after the
    finishing record, or when a clean close with nothing delivered and ``over`` agree that
    the fixture is over (``progress.ended`` says so). Raises AuthenticationError for a
    refused token (after one refresh of a callable token), TransportError (TimeoutError
    when the last one stalled) once ``max_retries + 1`` connections in a row delivered
    nothing, DecodeError for a malformed packet (``state.position + 1`` resumes past it),
    NotFoundError when the server warns and ``warned`` finds the fixture unknown. A
    message of unknown shape is skipped, logged once per feed at DEBUG.
    """
    session, req, state, idle_timeout, progress, over, warned = feed
    unknown = False
    net, base = _opened(session)
    lost: tuple[type[BaseException], ...] = (*net.errors, OSError)
    text = net.text
    call = Call()
    token: str | None = None
    observer = session.observer
    try:
        while True:
            if not net.is_open:
                raise RuntimeError("the client was closed while a live feed was following it")
            url = base + target(req, (("startPosition", str(state.connect())),))
            opened = await _open(session, net, url, call, req.headers)
            if isinstance(opened, _Failed):
                await session._after(opened, call)
                continue
            ws, token = opened
            conn = None if observer is None else observer.connection(req, call.attempts + 1)
            end: ConnectionEnd | None = None
            delivered = 0
            quiet = False  # a normal close with nothing delivered: ask the service
            idle = _Idle(net, ws, idle_timeout)
            try:
                receive, step_of, clock = ws.receive, state.feed, idle.clock
                while True:
                    idle.since = clock()
                    try:
                        msg = await receive()
                    except lost as exc:
                        # A reset while aiohttp answered a ping, or the transport aborted
                        # under it: a connection that ended, never a bare ConnectionError.
                        stalled = idle.aborting is not None
                        text = _stalled(idle_timeout) if stalled else f"connection lost: {exc!r}"
                        end = ConnectionEnd(delivered, stalled=stalled, error=text)
                        break
                    idle.since = _NOT_WAITING
                    if msg.type in text:
                        step = step_of(msg.data, url)
                        if not isinstance(step, Step):  # the hot path: the next record
                            delivered += 1
                            yield step
                            continue
                        records = step.records
                        if records:
                            delivered += len(records)
                            for i, record in enumerate(records):
                                progress.pending = len(records) - i - 1
                                yield record
                            if step.finished:
                                return
                        elif step.verdict == "gap" or step.verdict == "auth":
                            reason = session.hide(step.reason or "", token)
                            end = _stopped(step.verdict, reason, delivered, url)
                            break
                        elif step.verdict == "warn":
                            await warned(step.reason)
                        elif step.reason is UNKNOWN and not unknown:
                            unknown = True
                            shown = session.hide(repr(msg.data)[:200], token)
                            log.debug("live feed %s: skipped %s (once a feed): %s",
                                      url, UNKNOWN, shown)  # fmt: skip
                        continue
                    if idle.aborting is not None:
                        end = ConnectionEnd(delivered, stalled=True, error=_stalled(idle_timeout))
                        break
                    code = ws.close_code
                    end = ConnectionEnd(delivered, error=_closed(net, msg, code))
                    # Nothing beyond this startPosition and the server says it is done: maybe
                    # the fixture is over, maybe a proxy closed. The service decides (below).
                    quiet = code == _CLOSE_NORMAL and delivered == 0
                    break
            finally:
                progress.pending = 0
                await idle.stop()
                if conn is not None:
                    conn.end(delivered, end)
            if quiet:
                done, said = await over(state.position)
                if done:
                    progress.ended = said
                    return
                end = ConnectionEnd(0, error=f"{end.error} before the finishing record: {said}")
            await _after_end(session, end, call, url, token)
    except AsyncSportsError as exc:
        # What a server sent back (a reason, a warning, a snippet) may echo a secret.
        session.scrub(exc, token)
        raise


class _Idle:
    """The idle watchdog of one connection: a single timer for the connection's life.

    A receive with a timeout costs a timer per message (aiohttp's own notes say it can be
    half of the loop's time); instead the loop notes when it starts waiting (``since``),
    and one timer, re-armed from that, checks. A connection is stalled after
    ``seconds`` of waiting with nothing (record, heartbeat or anything else) arriving;
    time the consumer spends away does not count, and neither do the server's pings
    (aiohttp answers them inside ``receive``, which does not return). A stalled connection
    is closed from here, which hands the waiting receive a CLOSING message (aiohttp's way
    to wake it), or, when the server does not read (a receive stuck answering its pings),
    an error once the transport is aborted.
    """

    __slots__ = (
        "_abort",
        "_handle",
        "_loop",
        "_quiet",
        "_ws",
        "aborting",
        "clock",
        "seconds",
        "since",
    )

    def __init__(self, net: Transport, ws: Socket, seconds: float) -> None:
        loop = self._loop = asyncio.get_running_loop()
        self._ws = ws
        # Taken now (Transport.abort): aiohttp lets go of the connection when it starts
        # closing, and a transport that cannot flush then never closes.
        self._abort = net.abort(ws)
        self._quiet = _quiet(net)
        # time.monotonic, not the loop's time(): a C call, not a method, once a message.
        self.clock = time.monotonic
        self.seconds = seconds
        self.since = _NOT_WAITING
        self.aborting: asyncio.Task[None] | None = None
        self._handle = loop.call_later(seconds, self._check)

    def _check(self) -> None:
        now = time.monotonic()
        due = min(self.since, now) + self.seconds
        if now < due:
            self._handle = self._loop.call_later(due - now, self._check)
        else:
            self.aborting = self._loop.create_task(
                _close(self._ws, self._quiet, _CLOSE_GOING_AWAY, self._abort)
            )

    async def stop(self) -> None:
        """Stop watching and close the socket (the stalled one without waiting on it)."""
        self._handle.cancel()
        if self.aborting is not None:
            await self.aborting
        await _close(self._ws, self._quiet, abort=self._abort)


_NOT_WAITING = math.inf


def _opened(session: Session) -> tuple[Transport, str]:
    """The client's transport and the live URL, or the error saying what is missing."""
    net = session.transport
    if not session.is_open:
        raise RuntimeError("the client is not open: use 'async with Client(...) as client:'")
    base: str | None = session.settings.live_url
    if not base:
        raise ValueError("live_url: not configured: Client(..., live_url='wss://...')")
    return net, base


def _stopped(verdict: str, reason: str, delivered: int, url: str) -> ConnectionEnd:
    """How a connection ends that the client stops: a gap (reconnect) or a refused token
    (``reason``: the step's, secrets hidden)."""
    if verdict == "auth":
        return ConnectionEnd(delivered, auth_failed=True, error=reason)
    log.warning("live feed %s: %s: reconnecting", url, reason)
    return ConnectionEnd(delivered, error=reason)


async def _after_end(
    session: Session, end: ConnectionEnd, call: Call, url: str, token: str
) -> None:
    """After a connection ended before the fixture did: reconnect (after a wait) or raise."""
    decision = reconnect(
        end,
        call,
        session.retry,
        now=time.monotonic(),
        refreshable=session._token.refreshable,
        rng=session._rng,
    )
    if decision.action == "raise":
        raise _ended(end, url, call.attempts)
    await session.act(decision, call, url, end.error, token, "live feed")


Connect = Callable[[str, Mapping[str, str] | None, int], Awaitable[Any]]
"""Opens a websocket: ``Transport.connect``, or ``listen`` with its listener bound."""


async def _open(
    session: Session,
    net: Transport,
    url: str,
    call: Call,
    headers: tuple[tuple[str, str | None], ...] = (),
    connect: Connect | None = None,
) -> tuple[Socket, str] | _Failed:
    """One connection attempt: wait for the client's turn, connect, send the token
    (``headers``: the feed's ``extra_headers``, a None dropping nothing aiohttp sends;
    ``connect``: how to open it, the transport's ``connect`` if not given)."""
    token = session._token.current
    if token is None:
        token = await session._token.get()
        if token is None:
            raise ValueError("token: the live feeds need one: Client(token=...)")
    if session._paused_until or session._limiter is not None:
        await session._wait_turn()
    # Counted in call.attempts when it ends: here if refused, by reconnect() if it opened.
    attempt = call.attempts + 1
    hooks = session._on_request, session._on_response
    if hooks[0] is not None:
        await _hook(hooks[0], RequestInfo("GET", url, attempt))
    session.requests += 1
    started = time.monotonic()
    status: int | None = None
    refused: _Failed | None
    try:
        ws = await (connect or net.connect)(
            url,
            {k: v for k, v in headers if v is not None} or None,
            session.settings.max_element_size or 0,
        )
    except Handshake as exc:
        status = exc.status
        refusal = b"websocket handshake refused"
        if 300 <= status < 400:
            refusal = _redirected(status, exc.headers)
        error = error_from(
            status,
            exc.headers or {},
            refusal,
            method="GET",
            url=url,
            attempts=attempt,
        )
        refused = _Failed(error, Outcome(status, getattr(error, "retry_after", None)), token)
    except net.errors as exc:
        # Only a wrong certificate or address is final here: anything else, even an
        # unreadable answer, is a connection that may open next time.
        final = net.failure(exc)[0] == "final"
        refused = _Failed(transport(exc, url, attempt, None), Outcome(final=final), token)
    else:
        status = 101
        refused = None
    if hooks[1] is not None:
        await _hook(hooks[1], RequestInfo("GET", url, attempt, status, time.monotonic() - started))
    if refused is not None:
        call.attempts += 1
        return refused
    try:
        await ws.send_str(_auth(token))
    except _failing(net) as exc:
        await _close(ws, _quiet(net), abort=net.abort(ws))
        call.attempts += 1
        return _Failed(transport(exc, url, attempt, None), Outcome(), token)
    return ws, token


def _auth(token: str) -> str:
    """The first message: the data service's token (the vendor's only authentication)."""
    return msgspec.json.encode({"authToken": token}).decode()


def _failing(net: Transport) -> tuple[type[BaseException], ...]:
    """What a failed send on a socket raises."""
    return (*net.errors, ConnectionError)


def _quiet(net: Transport) -> tuple[type[BaseException], ...]:
    """What closing a socket may raise and :func:`_close` takes as closed."""
    return (*net.errors, OSError, RuntimeError)


async def _close(
    ws: Socket,
    quiet: tuple[type[BaseException], ...],
    code: int = _CLOSE_NORMAL,
    abort: Callable[[], object] | None = None,
) -> None:
    """Close the socket within ``_ABORT_WAIT`` seconds, whatever the server does.

    A polite close first; a server that neither reads (the close frame waits behind a full
    send buffer, aiohttp's close then only asks the transport to flush and close) nor
    answers gets dropped (``abort``: :meth:`Transport.abort`, taken while it was open),
    which also wakes a receive stuck sending a pong.
    """
    try:
        if not ws.closed:
            with contextlib.suppress(*quiet):
                async with asyncio.timeout(_ABORT_WAIT):
                    await ws.close(code=code)
    finally:
        if abort is not None:
            abort()  # a no-op once closed


def _redirected(status: int, headers: Any) -> bytes:
    """The refusal of a redirected handshake, naming where it led (its origin only)."""
    location = yarl.URL(str((headers or {}).get("Location", "")))
    where = f"{location.scheme}://{location.host}" if location.host else "another address"
    return (
        f"websocket handshake redirected ({status}) to {where}: not followed, a live "
        "connection follows no redirect (the token message would go to that host)"
    ).encode()


def _ended(end: ConnectionEnd, url: str, attempts: int) -> AsyncSportsError:
    """The error that ends a feed whose reconnect budget is spent (or whose token is bad)."""
    if end.auth_failed:
        text = end.error or "The supplied authentication is invalid"
        return AuthenticationError(401, text, method="GET", url=url, attempts=attempts)
    cls = TimeoutError if end.stalled else TransportError
    return cls(f"live feed: {end.error}", url=url, attempts=attempts)


def _stalled(idle_timeout: float) -> str:
    return f"stalled: no message for {idle_timeout:g} s (idle_timeout)"


def _closed(net: Transport, msg: Message, code: int | None) -> str:
    if net.kind(msg) == "error":
        return f"websocket error: {msg.data!r}"
    return closed_by(code)


def closed_by(code: int | None) -> str:
    """What a connection's end says of the server's close ``code`` (None: no close frame)."""
    name = _CLOSE_NAMES.get(code or 1006, "closed")
    return f"connection closed by the server ({code or 1006}, {name})"


async def _hook(hook: Any, info: RequestInfo) -> None:
    result = hook(info)
    if result is not None:
        await result
