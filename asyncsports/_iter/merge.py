"""Many live feeds merged into one iterator: ``client.live.merge`` (the public names are
re-exported by :mod:`asyncsports.live`).

Each feed is read by a task of its own, pushed by its transport (a callback a message,
:func:`~asyncsports._http.live.push`): its records go into the merge's book there and then.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncGenerator, Callable, Iterable
from typing import Any, Self

from asyncsports._http.health import HealthEvents
from asyncsports._http.live import Valve, push
from asyncsports._iter.feed import Feed
from asyncsports._wire.live import MergeBook

__all__ = ["Merged", "merge"]


def merge(*feeds: Feed[Any], per_feed: int = 64) -> Merged:
    """Follow many feeds from one task: one iterator of ``(fixture_id, record)`` pairs.

    Records come in arrival order, each feed's in its own order. At most ``per_feed``
    records per feed wait for the consumer; a feed that far ahead stops reading its socket
    until the consumer catches up. ``async with`` (or ``aclose``) closes every feed.
    """
    return Merged(feeds, per_feed=per_feed)


class Merged:
    """Many live feeds merged into one async iterator of ``(fixture_id, record)`` pairs.

    Each feed is read by a task of its own, started at the first ``anext`` (or by
    :meth:`add` once started). An error of one feed (a refused token, a spent reconnect
    budget, a malformed packet) is raised once, after that feed's records before it, with
    a note naming the fixture; the merge then goes on with the other feeds, and
    :meth:`position` says where the failed one stood. The iterator ends when every feed
    has ended.
    """

    def __init__(self, feeds: Iterable[Feed[Any]] = (), *, per_feed: int = 64) -> None:
        self._book: MergeBook[Feed[Any]] = MergeBook(per_feed)
        self._feeds: list[Feed[Any]] = []
        self._tasks: dict[Feed[Any], asyncio.Task[None]] = {}
        self._resume: dict[Feed[Any], Callable[[], None]] = {}  # reads a paused feed again
        self._errors: list[tuple[Feed[Any], BaseException]] = []
        self._ended: dict[Feed[Any], int] = {}
        # The consumer's, while it waits for a record: a bare future, woken by the first
        # record (asyncio.Event costs several calls a record more).
        self._waiter: asyncio.Future[None] | None = None
        self._reader: AsyncGenerator[tuple[uuid.UUID, Any], None] | None = None
        self._running = 0  # feed tasks not done: counted, as 500 feeds are not scanned per record
        self._started = False
        self._closed = False
        self._health: list[HealthEvents] = []
        for feed in feeds:
            self.add(feed)

    @property
    def feeds(self) -> list[Feed[Any]]:
        """The feeds merged so far."""
        return list(self._feeds)

    def add(self, feed: Feed[Any]) -> None:
        """Merge one more feed (also while iterating)."""
        if not isinstance(feed, Feed):
            raise TypeError(f"feed: expected a Feed (client.live.actions(...)), got {feed!r}")
        if self._closed:
            raise RuntimeError("the merge is closed")
        self._book.add(feed, feed.position)
        self._feeds.append(feed)
        for events in self._health:
            feed.following.health.listen(events)
        if self._started:
            self._start(feed)

    def health(self, maxsize: int = 1024) -> HealthEvents:
        """Every merged feed's health events, one async iterator (each event names its
        fixture: ``event.fixture_id``), as :meth:`Feed.health` has them for one feed; feeds
        added later are heard too. It ends once every feed has ended."""
        events = HealthEvents(maxsize)
        self._health.append(events)
        for feed in self._feeds:
            feed.following.health.listen(events)
        return events

    @property
    def buffered(self) -> int:
        """Records read from the sockets that the consumer has not taken yet."""
        return self._book.buffered()

    def position(self, feed: Feed[Any]) -> int:
        """Records of ``feed`` the consumer took: its ``start_position`` to resume it."""
        ended = self._ended.get(feed)
        return ended if ended is not None else self._book.position(feed)

    def _start(self, feed: Feed[Any]) -> None:
        self._running += 1
        self._tasks[feed] = asyncio.get_running_loop().create_task(self._guard(feed))

    async def _guard(self, feed: Feed[Any]) -> None:
        """Run one feed's reader: its error kept for the consumer, its socket closed."""
        try:
            await self._push(feed)
        except Exception as exc:
            exc.add_note(f"live {feed.kind} feed of fixture {feed.fixture_id}")
            self._errors.append((feed, exc))
        finally:
            self._running -= 1
            await feed.aclose()
            self._wake()

    async def _push(self, feed: Feed[Any]) -> None:
        """Read one feed pushed by its transport: each record into the book as it comes."""
        push_one = self._book.push_one
        valve = Valve()
        self._resume[feed] = valve.resume

        def deliver(record: Any) -> bool:
            full = push_one(feed, record)
            if self._waiter is not None:
                self._wake()
            return full

        await push(feed.following, deliver, valve)

    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _take(self) -> tuple[uuid.UUID, Any] | None:
        """The next record and its fixture; None when there is none yet, or the merge is
        over (:meth:`_over`). Raises a feed's error once the records before it are taken."""
        if not self._started:
            self._started = True
            if not self._closed:
                for feed in self._feeds:
                    self._start(feed)
        if self._errors:
            self._raise_ready_error()
        book = self._book
        item = book.pop()
        if item is None:
            return None
        for feed in book.resumable():
            self._resume[feed]()
        return item[0].fixture_id, item[1]

    def _over(self) -> bool:
        """Whether no record will come (every feed ended, or closed), once the book is empty."""
        if self._closed or not self._running:
            if self._errors:
                self._raise_ready_error()
            return True
        return False

    def _wait(self) -> asyncio.Future[None]:
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        return waiter

    def __aiter__(self) -> AsyncGenerator[tuple[uuid.UUID, Any], None]:
        # ``async for`` reads through one async generator kept while the merge lives, as
        # AsyncList does: a record costs less through it than through a coroutine
        # ``__anext__``; a loop left early leaves it suspended, for the next loop.
        if self._reader is None:
            self._reader = self._records()
        return self._reader

    async def _records(self) -> AsyncGenerator[tuple[uuid.UUID, Any], None]:
        take = self._take
        try:
            while True:
                item = take()
                if item is not None:
                    yield item
                elif self._over():
                    return
                else:
                    await self._wait()
        finally:
            self._reader = None  # ended, raised or closed: the next loop starts another

    async def __anext__(self) -> tuple[uuid.UUID, Any]:
        while (item := self._take()) is None:
            if self._over():
                raise StopAsyncIteration
            await self._wait()
        return item

    def _raise_ready_error(self) -> None:
        """Raise the first error whose feed has no record left waiting before it."""
        for i, (feed, exc) in enumerate(self._errors):
            if self._book.buffered(feed) == 0:
                del self._errors[i]
                self._ended[feed] = self._book.position(feed)
                self._book.remove(feed)
                raise exc

    async def aclose(self) -> None:
        """Stop every feed's task and close its socket. Safe to call twice."""
        self._closed = True
        reader, self._reader = self._reader, None
        if reader is not None and not getattr(reader, "ag_running", False):
            await reader.aclose()
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        for feed in self._feeds:
            if feed not in self._tasks:
                await feed.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
