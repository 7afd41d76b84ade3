"""The live feeds' I/O: one websocket connection after another, decided by the live core.

:func:`follow` is the loop of one feed: open a websocket with the client's settings (on
the session's pool for sockets, :meth:`Session.sockets`; its connect timeout, its hooks, its
rate limiter and 429 pause for each connection attempt), send the token message, hand every message to the feed's
:class:`~asyncsports._live.FeedState` and yield the records it releases. When a
connection ends (dropped, closed, stalled, or closed by the client after a gap), the pure
:func:`~asyncsports._live.reconnect` decides through the one retry engine: reconnect at
``startPosition`` = records delivered after a backoff, refresh the token once, or raise.
A handshake refused with an HTTP status is decided by :func:`~asyncsports._retry.decide`
like any other response.

Reading is pulled by the consumer: the socket is read only when the next record is asked
for, so a consumer that falls behind leaves messages in aiohttp's bounded reader queue,
which stops reading the socket when full (TCP then pushes back on the server). There is
no task of its own: cancelling the consumer or closing the feed closes the socket at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

import aiohttp
import msgspec
import yarl

from asyncsports._config import RequestInfo
from asyncsports._live import ConnectionEnd, FeedState, Step, reconnect
from asyncsports._live.order import Delivered
from asyncsports._request import Request, target
from asyncsports._retry import Call, Decision, Outcome, decide
from asyncsports._session.bodies import builtin_timeout, transport

if TYPE_CHECKING:
    from asyncsports._session import Session

from asyncsports.errors import (
    AsyncSportsError,
    AuthenticationError,
    TimeoutError,
    TransportError,
    error_from,
)

__all__ = ["Progress", "follow"]

log = logging.getLogger("asyncsports")

_TEXT = (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY)
# aiohttp 3.14 can hand text frames over as bytes: the decoder then skips a str round trip.
_RAW: dict[str, Any] = (
    {"decode_text": False}
    if "decode_text" in inspect.signature(aiohttp.ClientSession.ws_connect).parameters
    else {}
)
_CLOSE_NORMAL = 1000
_CLOSE_NAMES = {
    1000: "normal close",
    1001: "going away",
    1006: "dropped without a close frame",
    1008: "policy violation",
    1011: "server error",
}


class Progress:
    """Records yielded by :func:`follow` from its current batch not yet handed out.

    The feed's ``position`` is ``state.position - pending``: a batch (a record that was
    missing and those held behind it) moves the state at once, the consumer one by one.
    """

    __slots__ = ("pending",)

    def __init__(self) -> None:
        self.pending = 0


class _Refused:
    """A connection attempt that never reached the feed: its error and what the retry sees."""

    __slots__ = ("error", "outcome", "token")

    def __init__(self, error: AsyncSportsError, outcome: Outcome, token: str | None) -> None:
        self.error = error
        self.outcome = outcome
        self.token = token


async def follow(
    session: Session,
    req: Request,
    state: FeedState,
    idle_timeout: float,
    progress: Progress,
) -> AsyncGenerator[Delivered, None]:
    """Every record of one live feed, once each and in order, across its connections.

    ``session`` is the client's :class:`~asyncsports._session.Session`, ``req`` the feed's
    path and fixed query (``startPosition`` is added per connection). Raises
    AuthenticationError for a refused token (after one refresh of a callable token),
    TransportError once ``max_retries + 1`` connections in a row delivered nothing,
    DecodeError for a malformed packet (``state.position + 1`` resumes past it).
    """
    http, base = _opened(session)
    call = Call()
    while True:
        if http.closed:
            raise RuntimeError("the client was closed while a live feed was following it")
        url = base + target(req, (("startPosition", str(state.connect())),))
        opened = await _open(session, http, url, call)
        if isinstance(opened, _Refused):
            await _decide_refused(session, opened, call)
            continue
        ws, token = opened
        delivered = 0
        try:
            receive, step_of, waiting = ws.receive, state.feed, _queue(ws)
            while True:
                if waiting and waiting[0][0].type in _TEXT:
                    msg = await receive()  # a data message is read already: no timer needed
                else:
                    try:
                        msg = await receive(idle_timeout)
                    except builtin_timeout:
                        end = ConnectionEnd(delivered, stalled=True, error=_stalled(idle_timeout))
                        break
                if msg.type in _TEXT:
                    step = step_of(msg.data, url)
                    records = step.records
                    if records:
                        delivered += len(records)
                        if len(records) == 1:
                            yield records[0]
                        else:
                            for i, record in enumerate(records):
                                progress.pending = len(records) - i - 1
                                yield record
                        if step.finished:
                            return
                    elif step.verdict == "gap" or step.verdict == "auth":
                        end = _stopped(step, delivered, url)
                        break
                    continue
                code = ws.close_code
                if code == _CLOSE_NORMAL and delivered == 0:
                    # Nothing beyond this startPosition and the server says it is done:
                    # the fixture is over (or has no timeline). See docs/wire.md.
                    return
                end = ConnectionEnd(delivered, error=_closed(msg, code))
                break
        finally:
            progress.pending = 0
            await _close(ws)
        await _after_end(session, end, call, url, token)


def _queue_known() -> bool:
    """Whether aiohttp's websocket queue holds ``(message, size)`` pairs in ``_buffer``.

    Checked once, on a queue of its own: a receive with a timeout costs a timer each time
    (aiohttp says it can be half of the loop's time), and when a data message is queued
    already none is needed. Any other aiohttp gets the timer every time.
    """
    try:
        from aiohttp._websocket.reader import WebSocketDataQueue

        class _Protocol:
            _reading_paused = False

        queue: Any = WebSocketDataQueue(_Protocol(), 2**16, loop=None)  # type: ignore[arg-type]
        queue.feed_data(aiohttp.WSMessage(aiohttp.WSMsgType.TEXT, "", None), 0)
        return bool(queue._buffer[0][0].type is aiohttp.WSMsgType.TEXT)
    except Exception:  # any change in aiohttp's internals: the timer every time
        return False


_QUEUE_KNOWN = _queue_known()


def _queue(ws: aiohttp.ClientWebSocketResponse) -> Any:
    """aiohttp's queue of the messages read and not yet received (None: not known)."""
    return getattr(getattr(ws, "_reader", None), "_buffer", None) if _QUEUE_KNOWN else None


def _opened(session: Session) -> tuple[aiohttp.ClientSession, str]:
    """The live feeds' pool and the live URL, or the error saying what is missing."""
    base: str | None = session.settings.live_url
    if session._http is None:
        raise RuntimeError("the client is not open: use 'async with Client(...) as client:'")
    if not base:
        raise ValueError("live_url: not configured: Client(..., live_url='wss://...')")
    return session.sockets(), base


def _stopped(step: Step, delivered: int, url: str) -> ConnectionEnd:
    """How a connection ends that the client stops: a gap (reconnect) or a refused token."""
    if step.verdict == "auth":
        return ConnectionEnd(delivered, auth_failed=True, error=step.reason)
    log.warning("live feed %s: %s: reconnecting", url, step.reason)
    return ConnectionEnd(delivered, error=step.reason)


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
    await _carry_on(session, decision, call, url, end.error, token)


async def _open(
    session: Session, http: aiohttp.ClientSession, url: str, call: Call
) -> tuple[aiohttp.ClientWebSocketResponse, str] | _Refused:
    """One connection attempt: wait for the client's turn, connect, send the token."""
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
    refused: _Refused | None
    connect: Any = http.ws_connect  # typed per decode_text, which older aiohttp lacks
    try:
        ws: aiohttp.ClientWebSocketResponse = await connect(
            yarl.URL(url, encoded=True),
            timeout=session._ws_timeout,
            max_msg_size=session.settings.max_element_size or 0,
            **_RAW,
        )
    except aiohttp.WSServerHandshakeError as exc:
        status = exc.status
        error = error_from(
            status,
            exc.headers or {},
            b"websocket handshake refused",
            method="GET",
            url=url,
            attempts=attempt,
        )
        refused = _Refused(error, Outcome(status, getattr(error, "retry_after", None)), token)
    except (aiohttp.ClientSSLError, aiohttp.InvalidURL) as exc:
        refused = _Refused(transport(exc, url, attempt, None), Outcome(final=True), token)
    except (aiohttp.ClientError, builtin_timeout) as exc:
        refused = _Refused(transport(exc, url, attempt, None), Outcome(), token)
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
    except (aiohttp.ClientError, ConnectionError, builtin_timeout) as exc:
        await _close(ws)
        call.attempts += 1
        return _Refused(transport(exc, url, attempt, None), Outcome(), token)
    return ws, token


def _auth(token: str) -> str:
    """The first message: the data service's token (the vendor's only authentication)."""
    return msgspec.json.encode({"authToken": token}).decode()


async def _close(ws: aiohttp.ClientWebSocketResponse) -> None:
    """Close the socket, whatever state it is in (the server may be gone)."""
    if ws.closed:
        return
    with contextlib.suppress(aiohttp.ClientError, ConnectionError, builtin_timeout, RuntimeError):
        await ws.close()


async def _decide_refused(session: Session, refused: _Refused, call: Call) -> None:
    """A connection attempt that failed before the feed: the retry engine decides."""
    decision = decide(
        refused.outcome,
        call,
        session.retry,
        now=time.monotonic(),
        refreshable=session._token.refreshable,
        rng=session._rng,
    )
    if decision.action == "raise":
        raise refused.error
    call.apply(decision)
    url = getattr(refused.error, "url", "")
    await _carry_on(session, decision, call, url, str(refused.error), refused.token)


async def _carry_on(
    session: Session, decision: Decision, call: Call, url: str, why: str, token: str | None
) -> None:
    """Act on a decision that is not ``raise``: refresh the token, or wait the backoff."""
    if decision.action == "refresh":
        session._token.invalidate(token)
        log.info("live feed %s refused the token: asking the token provider again", url)
        return
    if decision.action == "resend":
        return
    if decision.pause:
        session._paused_until = max(session._paused_until, time.monotonic() + decision.wait)
    log.warning("live feed %s: %s; reconnecting in %.2fs", url, why, decision.wait)
    session.retries += 1
    await asyncio.sleep(decision.wait)


def _ended(end: ConnectionEnd, url: str, attempts: int) -> AsyncSportsError:
    """The error that ends a feed whose reconnect budget is spent (or whose token is bad)."""
    if end.auth_failed:
        text = end.error or "The supplied authentication is invalid"
        return AuthenticationError(401, text, method="GET", url=url, attempts=attempts)
    cls = TimeoutError if end.stalled else TransportError
    return cls(f"live feed: {end.error}", url=url, attempts=attempts)


def _stalled(idle_timeout: float) -> str:
    return f"stalled: no message for {idle_timeout:g} s (idle_timeout)"


def _closed(msg: aiohttp.WSMessage, code: int | None) -> str:
    if msg.type is aiohttp.WSMsgType.ERROR:
        return f"websocket error: {msg.data!r}"
    name = _CLOSE_NAMES.get(code or 1006, "closed")
    return f"connection closed by the server ({code or 1006}, {name})"


async def _hook(hook: Any, info: RequestInfo) -> None:
    result = hook(info)
    if result is not None:
        await result
