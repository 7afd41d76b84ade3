"""A live feed whose transport pushes its messages: the merge's way to read many feeds.

:func:`push` is :func:`~asyncsports._http.live.follow` for a transport that calls back
per message (``Transport.listen``: picows): each message is handed to the feed's
:class:`~asyncsports._wire.live.FeedState` in the transport's callback and its records
to ``deliver`` there and then, with no task woken per message (a task per feed
awaiting ``receive()`` costs the merge about 1.6 times the CPU a packet). The feed's
task wakes only for what needs a wait: the connection's end, a server's warning (asking
the service), the finishing record. Connecting, the token, the idle watchdog, the
reconnect decisions and the service's word on a quiet close are follow's own.

Flow control: ``deliver`` answers True when the consumer's share of this feed is full;
the socket then stops being read (TCP pushes back on the server) until
:meth:`Valve.resume`. Time paused is not idle time.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from asyncsports._http.live import (
    _CLOSE_NORMAL,
    _NOT_WAITING,
    Following,
    _after_end,
    _Idle,
    _open,
    _opened,
    _stalled,
    _stopped,
    closed_by,
)
from asyncsports._http.request import target
from asyncsports._http.retry import Call
from asyncsports._http.session import _Failed
from asyncsports._wire.live import ConnectionEnd, FeedState, Step
from asyncsports._wire.live.order import UNKNOWN, Delivered
from asyncsports.errors import AsyncSportsError

if TYPE_CHECKING:
    pass

__all__ = ["Deliver", "Valve", "push"]

log = logging.getLogger("asyncsports")

Deliver = Callable[[Delivered], bool]
"""Takes one record of the feed; True when the feed must stop reading (its share is full)."""


class Valve:
    """The consumer's hold on a pushed feed: :meth:`resume` reads its socket again."""

    __slots__ = ("_conn",)

    def __init__(self) -> None:
        self._conn: _Conn | None = None

    def resume(self) -> None:
        """Read the feed's socket again (nothing when it is not paused)."""
        conn = self._conn
        if conn is not None:
            conn.resume()


class _Conn:
    """One pushed connection of a feed: the transport's listener, and what it saw.

    Its callbacks never raise: what ends the connection (the finishing record, a gap, a
    refused token, a malformed packet, the close) is noted and the feed's task woken.
    """

    __slots__ = (
        "_deliver",
        "_feed",
        "_waiter",
        "delivered",
        "done",
        "end",
        "error",
        "idle",
        "noted",
        "paused",
        "quiet",
        "stop",
        "unknown",
        "url",
        "warnings",
        "ws",
    )

    def __init__(self, state: FeedState, url: str, deliver: Deliver) -> None:
        self._feed = state.feed
        self._deliver = deliver
        self._waiter: asyncio.Future[None] | None = None
        self.url = url
        self.delivered = 0
        self.ws: Any = None
        self.idle: _Idle | None = None
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
        self.noted = False  # one noted already: once a connection is enough

    def on_message(self, data: bytes) -> None:
        """One message: its records to the consumer now; anything else for the task."""
        if self.done:
            return
        idle = self.idle
        if idle is not None and not self.paused:
            idle.since = time.monotonic()  # pushed: the watchdog counts from the last message
        try:
            step = self._feed(data, self.url)
        except Exception as exc:  # a malformed packet: the feed raises it, from its task
            self.error = exc
            self.done = True
            self._wake()
            return
        if not isinstance(step, Step):
            self.delivered += 1
            if self._deliver(step):
                self.pause()
            return
        if step.records:
            self.delivered += len(step.records)
            full = False
            for record in step.records:
                full = self._deliver(record) or full
            if step.finished:
                self.done = True  # the finishing record: no end to decide
                self._wake()
            elif full:
                self.pause()
        elif step.verdict == "gap" or step.verdict == "auth":
            self.stop = (step.verdict, step.reason or "")
            self.done = True
            self._wake()
        elif step.verdict == "warn":
            self.warnings.append(step.reason)
            self._wake()
        elif step.reason is UNKNOWN and not self.noted:
            self.noted = True
            self.unknown = bytes(data[:200])
            self._wake()

    def on_closed(self, code: int | None, error: BaseException | None) -> None:
        """The connection is gone: how, unless the feed was done with it already."""
        if not self.done:
            idle = self.idle
            stalled = idle is not None and idle.aborting is not None
            if idle is not None and stalled:
                text = _stalled(idle.seconds)
            elif error is not None:
                text = f"connection lost: {error!r}"
            else:
                text = closed_by(code)
                self.quiet = code == _CLOSE_NORMAL and self.delivered == 0
            self.end = ConnectionEnd(self.delivered, stalled=stalled, error=text)
        self.done = True
        self._wake()

    def pause(self) -> None:
        if not self.paused and self.ws is not None:
            self.paused = True
            self.ws.pause()
            if self.idle is not None:
                self.idle.since = _NOT_WAITING

    def resume(self) -> None:
        if self.paused:
            self.paused = False
            if self.idle is not None:
                self.idle.since = time.monotonic()
            self.ws.resume()

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def wait(self) -> None:
        """Until a callback has something for the task (at once if it has already)."""
        if self.done or self.warnings or self.unknown is not None:
            return
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        await waiter


async def push(feed: Following, deliver: Deliver, valve: Valve) -> None:
    """Every record of one live feed to ``deliver``, once each and in order, across its
    connections; returns after the finishing record (or when the service says the
    fixture is over). Raises what :func:`~asyncsports._http.live.follow` raises."""
    session, req, state, idle_timeout, progress, over, warned = feed
    net, base = _opened(session)
    listen = getattr(net, "listen", None)
    if listen is None:
        raise TypeError(f"{type(net).__name__} does not push messages (no listen)")
    call = Call()
    token: str | None = None
    observer = session.observer
    logged = False  # a message of unknown shape: logged once a feed
    try:
        while True:
            if not net.is_open:
                raise RuntimeError("the client was closed while a live feed was following it")
            url = base + target(req, (("startPosition", str(state.connect())),))
            conn = _Conn(state, url, deliver)
            connect = functools.partial(_listen, listen, conn)
            opened = await _open(session, net, url, call, req.headers, connect)
            if isinstance(opened, _Failed):
                await session._after(opened, call)
                continue
            ws, token = opened
            seen = None if observer is None else observer.connection(req, call.attempts + 1)
            idle = conn.idle = _Idle(net, ws, idle_timeout)
            idle.since = time.monotonic()
            valve._conn = conn
            end: ConnectionEnd | None = None
            try:
                while True:
                    await conn.wait()
                    while conn.warnings:
                        await warned(conn.warnings.pop(0))
                    if conn.unknown is not None:
                        if not logged:
                            logged = True
                            shown = session.hide(repr(conn.unknown), token)
                            log.debug("live feed %s: skipped %s (once a feed): %s",
                                      url, UNKNOWN, shown)  # fmt: skip
                        conn.unknown = None
                    if conn.done:
                        break
                if conn.stop is not None:
                    verdict, reason = conn.stop
                    end = _stopped(verdict, session.hide(reason, token), conn.delivered, url)
                else:
                    end = conn.end
            finally:
                valve._conn = None
                await idle.stop()
                if seen is not None:
                    seen.end(conn.delivered, end)
            if conn.error is not None:
                raise conn.error
            if end is None:  # the finishing record
                return
            if conn.quiet:
                done, said = await over(state.position)
                if done:
                    progress.ended = said
                    return
                end = ConnectionEnd(0, error=f"{end.error} before the finishing record: {said}")
            await _after_end(session, end, call, url, token or "")
    except AsyncSportsError as exc:
        session.scrub(exc, token)
        raise


async def _listen(
    listen: Callable[..., Any], conn: _Conn, url: str, headers: Any, max_size: int
) -> Any:
    ws = await listen(url, headers, max_size, conn)
    conn.ws = ws
    return ws
