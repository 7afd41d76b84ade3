"""A response's headers bounded as a whole, for aiohttp's pool: one timer per pool.

aiohttp's ``sock_read`` restarts with every byte, so headers dripped a byte a second
would be read for as long as the server likes, and aiohttp has no bound on the header
phase. A timer per request (a total timeout, or ``asyncio.timeout``) would bound it
at a cost on every request; instead :class:`HeaderWatch` looks at the pool's
acquired connections every ``every`` seconds and ends a header wait it has seen
``ticks`` looks apart (``read`` seconds): no work per request but one test in ``send``
(:attr:`asleep`).

It reads aiohttp's internals (the connector's ``_acquired``, a protocol's ``_waiter``,
the only future a request awaits its headers on, and its ``_parser``, new for each
request); where they are missing it sees nothing and the bound is gone, as before.
"""

from __future__ import annotations

import asyncio
import math
from typing import Any

import aiohttp

__all__ = ["NO_WATCH", "HeaderWatch", "HeadersTimeout", "NoWatch"]


class HeadersTimeout(aiohttp.SocketTimeoutError):
    """A response's headers did not come whole in time: aiohttp's read timeout, so it is
    taken (sorted, retried) as one."""


class HeaderWatch:
    """Ends the header waits of one aiohttp pool that last longer than ``read`` seconds.

    Looks every ``min(connect, read) / 2`` seconds, so a wait is seen within one look of
    the request going out and ended after ``read`` more: headers come whole within
    ``connect + read`` seconds of being asked for, or ``1.5 * read`` with no ``connect``.
    Sleeps after two looks at an idle pool (no timer held by a client doing nothing);
    :meth:`wake` (``send``, while :attr:`asleep`) starts it again.
    """

    __slots__ = (
        "_connector",
        "_handle",
        "_idle",
        "_loop",
        "_seen",
        "asleep",
        "bound",
        "every",
        "text",
        "ticks",
    )

    def __init__(
        self, connector: aiohttp.BaseConnector, read: float, connect: float | None
    ) -> None:
        self._connector = connector
        self.every = min(read, connect or read) / 2
        # The looks that must see the same wait: the gaps between them add up to read.
        self.ticks = math.ceil(read / self.every - 1e-9)
        if connect is None:
            self.bound, which = 1.5 * read, "1.5 x Timeout.read"
        else:
            self.bound, which = connect + read, "Timeout.connect + Timeout.read"
        within = f"{which} = {self.bound:g}s"
        self.text = f"timed out: the response's headers did not come whole within {within}"
        self._seen: dict[Any, tuple[Any, int]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._handle: asyncio.TimerHandle | None = None
        self._idle = 0
        self.asleep = True

    def wake(self) -> None:
        """Start looking (a request is going out; called inside the event loop)."""
        self.asleep = False
        self._idle = 0
        if self._handle is None:
            loop = self._loop = asyncio.get_running_loop()
            self._handle = loop.call_later(self.every, self._look)

    def stop(self) -> None:
        """Stop for good (the pool is closing)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self._seen.clear()
        self.asleep = False  # never woken again

    def _look(self) -> None:
        acquired = tuple(getattr(self._connector, "_acquired", ()))
        seen, self._seen = self._seen, {}
        for proto in acquired:
            if getattr(proto, "_waiter", None) is None:
                continue  # connecting, sending, or reading a body: not a header wait
            parser = getattr(proto, "_parser", None)
            before = seen.get(proto)
            looks = before[1] + 1 if before is not None and before[0] is parser else 0
            if looks >= self.ticks:
                # The waiting request raises this, and aiohttp closes the connection.
                proto.set_exception(HeadersTimeout(self.text))
            else:
                self._seen[proto] = (parser, looks)
        self._idle = 0 if acquired else self._idle + 1
        if self._idle >= 2:
            # aiohttp acquires a connection in the step that sends (nothing is awaited
            # before, but a full pool's turn), so no look falls between a send and its
            # connection; the second idle look is a margin against a version that awaits.
            self._handle = None
            self.asleep = True
            return
        assert self._loop is not None
        self._handle = self._loop.call_later(self.every, self._look)


class NoWatch:
    """The stand-in for a :class:`HeaderWatch` where there is none: never asleep."""

    asleep = False

    def wake(self) -> None: ...

    def stop(self) -> None: ...


NO_WATCH = NoWatch()
