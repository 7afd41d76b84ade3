"""The live feeds' driver: one loop of connections for both ways of reading a feed.

Every connection is opened through the transport's pushing websocket
(:meth:`~asyncsports._http.transports.base.Transport.listen`): the socket calls back per
message, and a :class:`Conn` (the listener) hands it to the feed's
:class:`~asyncsports._wire.live.FeedState` there and then (merged) or queues its bytes
for the consumer's turn (iterated). The feed's task wakes only for what needs a wait:
the connection's end, a server's warning, the finishing record, and, read the pull way,
messages for a consumer that waits.

:func:`connections` is the one loop, shaped as websockets' ``async for ws in connect()``:
it opens a connection (the client's turn, hooks, handshake, token), yields it, and when
its reader is done with it decides how it ended: the fixture's end, a reconnect at
``startPosition`` = records delivered (after a backoff, or a token refreshed once), the
service asked after a quiet close, or an error (secrets scrubbed). Two thin readers use it:

- :func:`follow`, the pull way (``async for record in feed``): messages wait as bytes in
  the connection's inbox between water marks and go through the feed's checks as the
  consumer takes them; a consumer that falls behind pauses the socket (TCP then pushes
  back on the server) and resumes it when it catches up.
- :func:`push`, the merge's way: records go straight into the merge's book.

Why a push core: picows calls back per message, no task is woken per message (the merge
of 500 feeds costs less than a bare aiohttp loop), and the pull way is a queue over it,
as websockets' own ``recv_messages`` is over its protocol (docs/wire.md, "One driver").
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from asyncsports._http import connection as c
from asyncsports._http.health import Health
from asyncsports._http.request import Request
from asyncsports._http.session import Failure, own_secrets
from asyncsports._wire.live import ConnectionEnd, FeedState, Step
from asyncsports._wire.live.order import UNKNOWN, Delivered
from asyncsports._wire.retry import Call
from asyncsports._wire.secrets import clip, hide_url
from asyncsports.errors import AsyncSportsError, AuthenticationError, TimeoutError, TransportError

if TYPE_CHECKING:
    from asyncsports._http.session import Session
    from asyncsports._http.transports.base import Pushed, Transport

__all__ = ["Conn", "Deliver", "Following", "Over", "Progress", "Valve", "Warn", "follow", "push"]

log = logging.getLogger("asyncsports")

Over = Callable[[int], Awaitable[tuple[bool, str]]]
"""Asks the service whether a feed at this position may end: (yes or no, what it said)."""
Warn = Callable[[str], Awaitable[None]]
"""Asks the service about a server's warning (its text): raises NotFoundError for an
unknown fixture, else returns (the feed reads on)."""
Deliver = Callable[[Delivered], bool]
"""Takes one record of the feed; True when the feed must stop reading (its share is full)."""

HIGH = 64
"""Messages waiting for a pull consumer at which its socket is paused ..."""
LOW = 16
"""... and at or below which it is read again."""
BIG = 64 * 1024
"""A message longer than this pauses a pull consumer's socket at once: at most ``HIGH``
smaller ones wait (4 MiB), and no byte count is kept (an int made and freed per message,
4% of a packet's instructions)."""


class Progress:
    """What a feed's reader shares with the feed: the records read but not handed out
    (``queue``, the pull way's), and why a feed ended without its finishing record
    (``ended``: the service's answer). The feed's position is ``state.position - pending``.
    """

    __slots__ = ("ended", "queue")

    def __init__(self) -> None:
        self.queue: list[Delivered] | None = None
        self.ended: str | None = None

    @property
    def pending(self) -> int:
        """Records read from the socket that the consumer has not taken."""
        queue = self.queue
        return 0 if queue is None else len(queue)


class Following(NamedTuple):
    """What following one live feed takes (:func:`follow`, :func:`push`).

    ``session`` is the client's :class:`~asyncsports._http.session.Session`, ``req`` the
    feed's path and fixed query (``startPosition`` is added per connection); ``health``
    is told each connection's opening and end, each attempt, each status message and
    the feed's end (:mod:`asyncsports._http.health`).
    """

    session: Session
    req: Request
    state: FeedState
    idle_timeout: float
    progress: Progress
    over: Over
    warned: Warn
    health: Health


class Valve:
    """A feed's wake-up and its consumer's hold on the socket: shared by the connections
    of one feed. :meth:`resume` reads a paused socket again."""

    __slots__ = ("conn", "logged", "waiter")

    def __init__(self) -> None:
        self.conn: Conn | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.logged = False  # a message of unknown shape: logged once a feed

    def wake(self) -> None:
        """Wake the feed's task if it waits."""
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def resume(self) -> None:
        """Read the feed's socket again (nothing when it is not paused)."""
        conn = self.conn
        if conn is not None:
            conn.resume()


class Conn:
    """One connection of a feed: the transport's listener, and what it saw.

    Its callbacks never raise: what ends the connection (the finishing record, a gap, a
    refused token, a malformed packet, the close) is noted and the feed's task woken.
    """

    __slots__ = (
        "_deliver",
        "_state",
        "_step",
        "closing",
        "done",
        "end",
        "error",
        "health",
        "idle",
        "inbox",
        "paused",
        "quiet",
        "start",
        "stop",
        "token",
        "unknown",
        "url",
        "valve",
        "warnings",
        "ws",
    )

    def __init__(
        self,
        state: FeedState,
        url: str,
        deliver: Deliver,
        valve: Valve,
        pulled: bool = False,
        health: Health | None = None,
    ) -> None:
        self._state = state
        self.health = health
        # The feed's step, or it wrapped for a health listener's coverage and lag checks
        # (chosen per connection, and when a listener comes: nothing is asked per record
        # whether someone listens).
        self._step = state.step if health is None else health.stepper(state.step, state)
        self.start = state.position  # this connection's startPosition
        self._deliver = deliver
        # Pulled: messages wait here as bytes, checked in the consumer's turn (a record
        # decoded as it is taken is in the cache when the consumer reads it).
        self.inbox: deque[bytes] | None = deque() if pulled else None
        self.closing: tuple[int | None, BaseException | None] | None = None
        self.valve = valve
        self.url = url
        self.ws: Pushed | None = None
        self.token = ""
        self.idle: c.Idle | None = None
        self.paused = False
        self.end: ConnectionEnd | None = None  # how it ended, when not by the fixture's end
        self.stop: tuple[str, str] | None = None  # a gap or a refused token: (verdict, reason)
        self.error: BaseException | None = None
        self.quiet = False  # a normal close with nothing delivered: ask the service
        # Over for the feed (closed, finished, stopped or failed; the rest is closing it):
        # a flag, as it is read for every message.
        self.done = False
        self.warnings: list[str] = []
        self.unknown: bytes | None = None  # a message of unknown shape, for the task to log

    def on_message(self, data: bytes) -> None:
        """One message: its records to the consumer now (pushed) or its bytes to the
        inbox (pulled); anything else for the task."""
        if self.done:
            return
        idle = self.idle
        if idle is not None and not self.paused:
            idle.since = time.monotonic()
        inbox = self.inbox
        if inbox is not None:
            inbox.append(data)
            if self.valve.waiter is not None:
                self.valve.wake()
            if not self.paused and (len(inbox) >= HIGH or len(data) > BIG):
                self.pause()
            return
        try:
            step = self._step(data, self.url)
        except Exception as exc:  # a malformed packet: the feed raises it, from its task
            self._over(error=exc)
            return
        if not isinstance(step, Step):  # the hot path: the next record
            if self._deliver(step):
                self.pause()
            return
        self.stepped(step, data)

    def stepped(self, step: Step, data: bytes) -> None:
        """After a message that was not simply the next record: its records delivered,
        or the connection's end or a warning noted for the task; a status message told
        to the feed's health."""
        if step.status is not None and self.health is not None:
            self.health.status(step.status)
        if step.records:
            full = False
            for record in step.records:
                full = self._deliver(record) or full
            if step.finished:
                self._over()  # the finishing record: no end to decide
            elif full:
                self.pause()
        elif step.verdict == "gap" or step.verdict == "auth":
            self.stop = (step.verdict, step.reason or "")
            self._over()
        elif step.verdict == "warn":
            self.warnings.append(step.reason)
            self.valve.wake()
        elif step.reason is UNKNOWN and not self.valve.logged:
            self.valve.logged = True
            # More than is shown: its secrets are hidden before it is clipped to 200.
            self.unknown = bytes(data[:4096])
            self.valve.wake()

    def on_closed(self, code: int | None, error: BaseException | None) -> None:
        """The connection is gone: how, unless the feed was done with it already (pulled:
        once the messages read before it are checked)."""
        if self.inbox and not self.done:
            self.closing = (code, error)
            self.valve.wake()
            return
        self.closing = None
        if not self.done:
            idle = self.idle
            stalled = idle is not None and idle.aborting is not None
            if idle is not None and stalled:
                text = c.stalled(idle.seconds)
            elif error is not None:
                text = f"connection lost: {error!r}"
            else:
                text = c.closed_by(code)
                self.quiet = code == c.CLOSE_NORMAL and self.delivered == 0
            self.end = ConnectionEnd(self.delivered, stalled=stalled, error=text)
        self._over()

    @property
    def step(self) -> Callable[[bytes, str], Delivered | Step]:
        """The feed's step for this connection's messages (see :meth:`listened`)."""
        step: Callable[[bytes, str], Delivered | Step] = self._step
        return step

    def listened(self) -> None:
        """A health listener came while this connection is open: take its step."""
        if self.health is not None:
            self._step = self.health.stepper(self._state.step, self._state)

    @property
    def shown(self) -> str:
        """The connection's URL as logs and errors show it (its query's secrets hidden)."""
        return hide_url(self.url)

    @property
    def delivered(self) -> int:
        """Records this connection delivered (the feed's position moves with each)."""
        return self._state.position - self.start

    @property
    def pending(self) -> bool:
        """Whether the task has something to see to: a warning, a message of unknown
        shape, a close to take in (pulled)."""
        return bool(self.warnings) or self.unknown is not None or self.closing is not None

    def failed(self, error: BaseException) -> None:
        """A message failed the feed's checks (a malformed packet): the feed raises it."""
        self._over(error)

    def _over(self, error: BaseException | None = None) -> None:
        if error is not None:
            self.error = error
        self.done = True
        self.valve.wake()

    async def closed(self, seen: Any, end: ConnectionEnd | None) -> None:
        """Done with: its socket closed, its watchdog stopped, its end told to ``seen``
        (the tracer's connection, if any)."""
        self.valve.conn = None
        if self.idle is not None:  # pragma: no branch  (set before the connection is yielded)
            await self.idle.stop()
        if seen is not None:
            seen.end(self.delivered, end)

    def pause(self) -> None:
        """Stop reading the socket: the consumer's share is full."""
        if not self.paused:
            self.paused = True
            if self.ws is not None:  # else paused once the socket is handed back
                self.ws.pause(hold=self.inbox is None)
            if self.idle is not None:
                self.idle.since = c.NOT_WAITING

    def resume(self) -> None:
        """Read the socket again (called once the socket is handed back: ``Valve.conn``)."""
        if self.paused:
            self.paused = False
            if self.idle is not None:  # pragma: no branch  (resumed once handed back: set)
                self.idle.since = time.monotonic()
            if self.ws is not None:  # pragma: no branch  (resumed once handed back: set)
                self.ws.resume()


async def follow(feed: Following) -> AsyncGenerator[Delivered, None]:
    """Every record of one live feed, once each and in order, across its connections: the
    pull way (messages go through the feed's checks as they are taken from the inbox).
    Ends and raises as :func:`connections` does; closing it closes the socket at once."""
    out = _Out()  # the records of one message (a held batch, say)
    feed.progress.queue = out
    valve = Valve()
    async with contextlib.aclosing(connections(feed, out.put, valve, True)) as conns:
        async for conn in conns:
            inbox, url = conn.inbox, conn.url
            assert inbox is not None
            take = inbox.popleft
            check = conn.step
            while True:
                if out:
                    yield out.pop(0)
                elif inbox and not conn.done:
                    data = take()
                    if conn.paused and len(inbox) <= LOW:
                        conn.resume()
                    try:
                        record = check(data, url)
                    except Exception as exc:  # a malformed packet
                        conn.failed(exc)
                        continue
                    if isinstance(record, Step):
                        conn.stepped(record, data)
                        continue
                    yield record
                elif conn.done and not conn.pending:
                    break
                else:
                    await _next(feed, conn)
                    check = conn.step  # a health listener that came meanwhile: its step


class _Out(list[Delivered]):
    """The records of one message for a pulled feed's consumer (a list, not a deque: at
    most a window of held records, and 56 bytes, not 760, an idle feed)."""

    def put(self, record: Delivered) -> bool:
        """Take ``record``; never full (at most one message's records)."""
        self.append(record)
        return False


async def _next(feed: Following, conn: Conn) -> None:
    """A pulled connection's turn with nothing in its inbox: see to a warning or a message
    of unknown shape, take in its close, or wait for its next message."""
    if conn.warnings or conn.unknown is not None:
        await attend(feed, conn)
    elif conn.closing is not None:
        conn.on_closed(*conn.closing)
    else:
        valve = conn.valve
        waiter = valve.waiter = asyncio.get_running_loop().create_future()
        await waiter


async def push(feed: Following, deliver: Deliver, valve: Valve) -> None:
    """Every record of one live feed to ``deliver``, once each and in order, across its
    connections: the merge's way (``deliver`` answers True when the consumer's share is
    full: the socket waits for :meth:`Valve.resume`). Returns after the finishing record
    (or when the service says the fixture is over); raises as :func:`connections` does."""
    async with contextlib.aclosing(connections(feed, deliver, valve)) as conns:
        async for conn in conns:
            while True:
                await attend(feed, conn)
                if conn.done:
                    break


async def attend(feed: Following, conn: Conn) -> None:
    """Wait until the connection has something for its task (at once if it has, or is
    done), then see to a server's warning or a message of unknown shape."""
    valve = conn.valve
    if not (conn.done or conn.warnings or conn.unknown is not None):
        waiter = valve.waiter = asyncio.get_running_loop().create_future()
        await waiter
    try:
        while conn.warnings:
            await feed.warned(conn.warnings.pop(0))
    except AsyncSportsError as exc:
        feed.session.scrub(exc, *_secrets(feed, conn))  # its notes may echo a secret
        raise
    if conn.unknown is not None:
        text = conn.unknown.decode("utf-8", "replace")
        shown = repr(clip(feed.session.hide(text, *_secrets(feed, conn)), 200))
        log.debug("live feed %s: skipped %s (once a feed): %s", conn.shown, UNKNOWN, shown)
        conn.unknown = None


async def connections(
    feed: Following, deliver: Deliver, valve: Valve, pulled: bool = False
) -> AsyncGenerator[Conn, None]:
    """Each connection of one feed, open with its token sent, until the feed ends: the
    one loop of connect, watch, decide and reconnect, for both ways of reading.

    The reader takes records from ``deliver`` and calls :func:`attend` until the yielded
    connection is ``done``, then asks for the next. Returns after the finishing record,
    or when a quiet close and ``over`` agree that the fixture is over. Raises
    AuthenticationError for a refused token (after one refresh of a callable token),
    TransportError (TimeoutError after a stall) once ``max_retries + 1`` connections in a
    row delivered nothing, DecodeError for a malformed packet, NotFoundError when
    ``warned`` finds the fixture unknown.
    """
    session, health, state = feed.session, feed.health, feed.state
    net, base = _opened(session)
    call = Call()
    conn: Conn | None = None
    why = "closed by its reader"  # how the feed ended, for its health's last event
    try:
        while True:
            conn = await _connect(feed, net, base, call, deliver, valve, pulled)
            assert conn.idle is not None  # set by _connect
            health.connected(state.connections, conn.start, conn.idle, conn.listened)
            observer = session.observer
            seen = None if observer is None else observer.connection(feed.req, call.attempts + 1)
            end: ConnectionEnd | None = None
            try:
                yield conn
                end = _ending(feed, conn)
            finally:
                await conn.closed(seen, end)
            end = await _decided(feed, conn, end)
            if end is None:
                why = feed.progress.ended or "the fixture's finishing record"
                return
            health.lost(state.position, end.error, end.stalled)
            await _after_end(session, end, call, conn.shown, conn.token, health)
    except AsyncSportsError as exc:
        # What a server sent back (a reason, a warning, a snippet) may echo a secret.
        session.scrub(exc, *_secrets(feed, conn))
        why = f"{type(exc).__name__}: {exc}"
        raise
    except Exception as exc:  # the client closed under the feed, say
        why = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        health.ended(state.position - feed.progress.pending, state.finished, why)


async def _connect(
    feed: Following,
    net: Transport,
    base: str,
    call: Call,
    deliver: Deliver,
    valve: Valve,
    pulled: bool,
) -> Conn:
    """The next open connection, its token sent and its watchdog running: attempts that
    fail are decided by the retry engine (wait, refresh, or raise)."""
    session, state = feed.session, feed.state
    while True:
        if not net.is_open:
            raise RuntimeError("the client was closed while a live feed was following it")
        req = feed.req
        start = ("startPosition", str(state.connect()))
        at = Request(req.path, (start, *req.params), req.host, req.headers, req.route)
        conn = Conn(state, base + at.target, deliver, valve, pulled, feed.health)
        opened = await c.connect(session, net, at, base, call, conn)
        if isinstance(opened, Failure):
            await session.after(opened, call, feed.health.reconnecting)
            continue
        conn.ws, conn.token = opened
        conn.idle = c.Idle(net, conn.ws, feed.idle_timeout)
        valve.conn = conn
        if conn.paused:  # paused by a full consumer before the socket was handed back
            conn.ws.pause(hold=not pulled)
        return conn


def _secrets(feed: Following, conn: Conn | None) -> list[str | None]:
    """What a server may echo that errors and logs hide, beyond the client's own secrets:
    the connection's token and the feed's credentials (``extra_query``, ``extra_headers``)."""
    return [None if conn is None else conn.token, *own_secrets(feed.req)]


def _ending(feed: Following, conn: Conn) -> ConnectionEnd | None:
    """How a connection its reader is done with ended: None for the finishing record."""
    if conn.stop is None:
        return conn.end
    verdict, reason = conn.stop
    reason = feed.session.hide(reason, *_secrets(feed, conn))
    if verdict == "auth":
        return ConnectionEnd(conn.delivered, auth_failed=True, error=reason)
    log.warning("live feed %s: %s: reconnecting", conn.shown, reason)
    return ConnectionEnd(conn.delivered, error=reason)


async def _decided(feed: Following, conn: Conn, end: ConnectionEnd | None) -> ConnectionEnd | None:
    """The connection's end as the retry engine takes it; None when the feed is over
    (the finishing record, or the service's word after a quiet close). Raises a
    malformed packet's error."""
    if conn.error is not None:
        raise conn.error
    if end is None or not conn.quiet:
        return end
    # Nothing beyond this startPosition and the server says it is done: maybe the fixture
    # is over, maybe a proxy closed. The service decides.
    done, said = await feed.over(feed.state.position)
    if done:
        feed.progress.ended = said
        return None
    return ConnectionEnd(0, error=f"{end.error} before the finishing record: {said}")


async def _after_end(
    session: Session, end: ConnectionEnd, call: Call, url: str, token: str, health: Health
) -> None:
    """After a connection ended before the fixture did: reconnect (after a wait) or raise."""
    decision = session.reconnect(end, call)
    if decision.action == "raise":
        raise _ended(end, url, call.attempts)
    health.reconnecting(call.attempts, decision.wait)
    await session.act(decision, call, url, end.error, token, "live feed")


def _ended(end: ConnectionEnd, url: str, attempts: int) -> AsyncSportsError:
    """The error that ends a feed whose reconnect budget is spent (or whose token is bad)."""
    if end.auth_failed:
        text = end.error or "The supplied authentication is invalid"
        return AuthenticationError(401, text, method="GET", url=url, attempts=attempts)
    cls = TimeoutError if end.stalled else TransportError
    return cls(f"live feed: {end.error}", url=url, attempts=attempts)


def _opened(session: Session) -> tuple[Transport, str]:
    """The client's transport and the live URL, or the error saying the client is not open."""
    if not session.is_open:
        raise RuntimeError("the client is not open: use 'async with Client(...) as client:'")
    base = session.settings.live_url
    # Said as the feed was made (resources/live.py); the settings are frozen.
    assert base, "live_url: not configured"
    return session.transport, base
