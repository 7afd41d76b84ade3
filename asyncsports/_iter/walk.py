"""Walking numbered pages: a few tasks fetch ahead, every page checked in order.

:func:`walk` is the source of a paged :class:`~asyncsports.paging.AsyncList`: the batches
of records of pages ``start.page`` onwards, in order, ending at the last page, with the
server's paging contract checked on the way (no page numbered other than asked, none
repeating an earlier one).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import enum
import math
import operator
import time
import types
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import (
    Any,
    Generic,
    Literal,
    NamedTuple,
    Protocol,
    TypeVar,
    Union,
    get_args,
    get_origin,
)

import msgspec

from asyncsports.errors import PagingError

__all__ = ["Batch", "Page", "is_last", "walk"]

T = TypeVar("T")


class Start(Protocol):
    """Where a walk starts: :class:`~asyncsports.paging.ResumeToken` is one (not imported
    here, so that paging imports the walk and not the other way round)."""

    @property
    def page(self) -> int: ...

    @property
    def index(self) -> int: ...


class Batch(NamedTuple, Generic[T]):
    """Records of page ``page``; ``items[0]`` is record number ``start`` of that page."""

    page: int
    start: int
    items: Sequence[T]


class Page(NamedTuple, Generic[T]):
    """One decoded page. ``last`` is None when the server did not say.

    ``whole`` is True when the body was the whole result (the server ignored paging).
    """

    items: Sequence[T]
    number: int | None = None
    total_pages: int | None = None
    last: bool | None = None
    whole: bool = False


async def walk(
    fetch: Callable[[int], Awaitable[Page[T]]],
    start: Start,
    *,
    size: int,
    lookahead: int = 1,
    concurrency: int = 1,
    clock: Callable[[], float] = time.monotonic,
) -> AsyncIterator[Batch[T]]:
    """Walk numbered pages from ``start`` until the last one, fetching ahead.

    While the caller consumes page N, the next ``lookahead`` pages are on their way, as
    long as that pays: when the caller spends less than a tenth of a page's round trip on
    a page, it gains less wall time than its task switch costs CPU, so the walk fetches
    the next page in the caller's task until the caller takes a fifth of the round trip
    again. Once the first page has told the total, up to ``concurrency`` pages are in
    flight at once. Pages are yielded in order whatever order they arrive in. Closing
    the walk (or cancelling its consumer) cancels every request in flight.

    Stops at a page marked last, at ``total_pages`` (the smallest the server has said: a
    total that grows page by page cannot keep the walk going), at an empty page, at a short
    page when the server gives no metadata, or after a body that is the whole result. A
    page that starts like any earlier page of the walk (A, B, A, B... as much as A, A), or
    a page numbered other than asked, raises :class:`PagingError` instead of looping.
    ``clock`` times the round trips and the caller's share (a test gives its own).
    """
    # A token may count past a page (from a body that was the whole result).
    number = start.page + start.index // size
    skip = start.index % size
    pages = _Walk(fetch, size, number, lookahead, concurrency, clock)
    ahead = pages.pages
    try:
        while True:
            # Page ``number``: from the task that took it, else fetched here and now.
            future = ahead.pop(number, None)
            if future is None:
                pages.next = max(pages.next, number + 1)
                sent = clock()
                page = await fetch(number)
                handed = clock()
                pages.took = handed - sent
                last = pages.check(number, page)
            else:
                page, checked = await future
                handed = clock()
                # Unchecked if it came before the page ahead of it was checked.
                last = pages.check(number, page) if checked is None else checked
            items = page.items
            if page.whole:
                # The server ignored paging: this body is everything; skip what the
                # token says was consumed (full pages before it, then ``skip``).
                consumed = number * size + skip
                yield Batch(0, consumed, items[consumed:])
                return
            yield Batch(number, skip, items[skip:] if skip else items)
            pages.think = clock() - handed
            if last:
                return
            number += 1
            skip = 0
    finally:
        await pages.close()


class _Walk(Generic[T]):
    """The pages of a walk: fetched (some ahead, by a few tasks), checked in order, handed over.

    Each page is checked once, in page order, by :meth:`check`: is it the last, is it
    numbered as asked, does it repeat an earlier page. A page that checks out opens the
    window: the ``window`` pages after it may be fetched ahead (``lookahead``, or
    ``max(lookahead, concurrency)`` once a total is known), never at or past the
    smallest total. Page numbers are taken once, in order, each with a future for its
    page, by at most ``window`` tasks. A task that has fetched a page checks it at once
    if the pages before it are checked, then takes the next number if the window
    allows, and ends when it does not. So while the caller keeps up, one task fetches
    page after page and hands each over with a single task switch (not a task per
    page), and no request goes past a page that ended the walk. A page nobody took is
    fetched by :func:`walk` itself, in its own task (the first page; every page with
    ``lookahead=0``), and checked there.
    """

    def __init__(
        self,
        fetch: Callable[[int], Awaitable[Page[T]]],
        size: int,
        first: int,
        lookahead: int,
        concurrency: int,
        clock: Callable[[], float],
    ) -> None:
        self.fetch = fetch
        self.clock = clock
        self.size = size
        self.lookahead = lookahead
        self.concurrency = concurrency
        self.next = first  # the first page number nobody has taken
        self.checked = first  # the first page number not checked
        self.limit = first  # page numbers below it may be taken ahead
        self.total: int | None = None  # the smallest total the server has said
        self.marks: set[int] = set()
        self.think = math.inf  # the caller's time on its last page (none seen yet)
        self.ahead = True  # whether fetching ahead pays, as last decided
        self.took = 0.0  # the last page's round trip, sent to decoded
        self.pages: dict[int, asyncio.Future[_Checked[T]]] = {}
        self.tasks: set[asyncio.Task[None]] = set()

    def check(self, number: int, page: Page[T]) -> bool:
        """Check page ``number``, the next in order; True if it is the last.

        Raises :class:`PagingError` for a page numbered other than asked or one that
        repeats an earlier page. A page that is not the last opens the window after it.
        """
        self.checked = number + 1
        if page.whole:
            self._stop()
            return True
        if page.number is not None and page.number != number:
            self._stop()
            raise PagingError(f"asked for page {number}, the server sent page {page.number}")
        items = page.items
        if items:
            mark = _mark(items[0])
            if mark in self.marks:
                self._stop()
                raise PagingError(
                    f"page {number} repeats an earlier page: the server ignores paging"
                )
            self.marks.add(mark)
        total = self.total
        told = page.total_pages
        if told is not None and (total is None or told < total):
            total = self.total = told
        if is_last(page, number, self.size) or (total is not None and number + 1 >= total):
            self._stop()
            return True
        # Ahead only while it pays (see walk): a tight loop gets its pages in its own task.
        # Decided with some slack, so that a caller near the line does not switch every page.
        self.ahead = self.think * (_STOP if self.ahead else _START) >= self.took
        ahead = self.lookahead if self.ahead else 0
        if total is None:
            window = ahead
            self.limit = number + 1 + window
        else:
            concurrency = self.concurrency
            window = max(ahead, concurrency) if concurrency > 1 else ahead
            self.limit = min(number + 1 + window, total)
        tasks = self.tasks
        while len(tasks) < window and (taken := self._take()) is not None:
            task = asyncio.get_running_loop().create_task(self._fetch_ahead(taken))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        return False

    def _take(self) -> _Taken[T] | None:
        number = self.next
        if number >= self.limit:
            return None
        self.next = number + 1
        future = self.pages[number] = asyncio.get_running_loop().create_future()
        # A walk left by a break and never closed (its generator waits for the collector)
        # comes to no page: a page that failed then is no error for asyncio to log.
        future.add_done_callback(_retrieve)
        return number, future

    async def _fetch_ahead(self, taken: _Taken[T] | None) -> None:
        while taken is not None:
            number, future = taken
            try:
                sent = self.clock()
                page = await self.fetch(number)
                self.took = self.clock() - sent
                last = self.check(number, page) if number == self.checked else None
            except asyncio.CancelledError:
                future.cancel()
                raise
            except Exception as exc:
                # The walk raises it when it comes to this page (the pages before it
                # carry on); this task is done.
                if not future.done():
                    future.set_exception(exc)
                return
            if not future.done():  # the walk may have been cancelled waiting for it
                future.set_result((page, last))
            taken = self._take()

    def _stop(self) -> None:
        """Take nothing more and cancel the pages in flight (the walk ends at this page)."""
        self.limit = -1
        me = asyncio.current_task()
        for task in self.tasks:
            if task is not me:
                task.cancel()

    async def close(self) -> None:
        """Cancel what is in flight and wait for it to let go of its connections."""
        self._stop()
        tasks = list(self.tasks)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        for future in self.pages.values():
            if future.done() and not future.cancelled():
                future.exception()  # retrieved: a page nobody came to is no error to log
            else:
                future.cancel()
        self.pages.clear()


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


_START, _STOP = 5, 10
"""Fetching ahead pays when the caller spends a fair share of a page's round trip on a
page: it saves that much wall time, for one task switch a page. A walk fetches ahead
again once the caller spends 1/_START of the round trip, and stops below 1/_STOP."""

_Checked = tuple[Page[T], "bool | None"]
_Taken = tuple[int, "asyncio.Future[_Checked[T]]"]


_encode = msgspec.json.Encoder().encode
_SCALARS = frozenset({str, int, float, bool, uuid.UUID, dt.datetime, dt.date, type(None)})
_SCALAR_FIELDS: dict[type, Callable[[Any], Any] | None] = {}


def _mark(record: object) -> int:
    """A short digest of a page's first record: one per page, so memory stays small.

    For a Struct (every model) the hash of its top-level scalar fields: its id, names,
    numbers, dates and flags, without walking what is nested (a tenth of the cost of
    encoding it); for anything else, or a Struct without such fields, the hash of its
    JSON. Python's hash is SipHash, keyed per process, so a server cannot choose
    records that collide.
    """
    cls = type(record)
    try:
        scalars = _SCALAR_FIELDS[cls]
    except KeyError:
        scalars = _SCALAR_FIELDS[cls] = _scalar_fields(cls)
    if scalars is not None:
        return hash(scalars(record))
    try:
        data = _encode(record)
    except (TypeError, msgspec.EncodeError):
        data = repr(record).encode()
    return hash(data)


def _scalar_fields(cls: type) -> Callable[[Any], Any] | None:
    """A getter of the fields of Struct type ``cls`` declared with scalar types only."""
    if not issubclass(cls, msgspec.Struct):
        return None
    names = [f.name for f in msgspec.structs.fields(cls) if _scalar(f.type)]
    return operator.attrgetter(*names) if names else None


def _scalar(tp: Any) -> bool:
    args = get_args(tp) if isinstance(tp, types.UnionType) or get_origin(tp) is Union else (tp,)
    return all(
        a in _SCALARS
        or (isinstance(a, type) and issubclass(a, enum.Enum))
        or get_origin(a) is Literal
        for a in args
    )


def is_last(page: Page[T], number: int, size: int) -> bool:
    """Whether ``page`` (numbered ``number``, asked with ``size``) ends the walk.

    Any sign of the end is enough, so that a server whose metadata contradicts
    itself (an empty page marked not last) cannot keep the walk going.
    """
    if not page.items or page.last:
        return True
    if page.total_pages is not None and number + 1 >= page.total_pages:
        return True
    return page.last is None and page.total_pages is None and len(page.items) < size
