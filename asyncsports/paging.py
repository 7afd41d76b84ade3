"""Lazy async iteration over listings: page walking, resume tokens.

An :class:`AsyncList` sends nothing until iterated. Its records come from a *source*:
an async iterator of :class:`Batch` es that starts at a :class:`ResumeToken`. A paged
listing's source walks page numbers (:func:`walk`); a single-body listing's source
decodes one body. Either way the list knows where it stands (``.resume_token``) and a
new list given that token carries on with no gap and no duplicate.
"""

from __future__ import annotations

import asyncio
import collections
import datetime as dt
import enum
import functools
import operator
import re
import types
import uuid
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterator,
    Sequence,
)
from dataclasses import dataclass
from typing import Any, Generic, Literal, NamedTuple, NoReturn, TypeVar, Union, get_args, get_origin

import msgspec

from asyncsports._request import integer
from asyncsports.errors import PagingError

__all__ = ["AsyncList", "Batch", "Page", "PagingError", "ResumeToken", "walk"]

T = TypeVar("T")


_LISTING = re.compile(r"[0-9a-f]{1,64}")
_TEXT = re.compile(r"([0-9]+)(?::([0-9]+)(?::([0-9a-f]{1,64}))?)?")


@dataclass(frozen=True, slots=True)
class ResumeToken:
    """Where a listing stands: ``index`` records of page ``page`` are already consumed.

    ``listing`` is a short fingerprint of the listing the token came from (a hash of its
    path and query, page parameters left out), so that a token handed to another listing
    is refused instead of silently skipping records; None means "any listing" (a token
    made by hand, or read from an older text form).

    ``str(token)`` is a compact text form (``"3:5:1a2b3c4d"``, or ``"3:5"`` without a
    fingerprint) that :meth:`parse` reads back, for storing a position in a checkpoint.
    """

    page: int = 0
    index: int = 0
    listing: str | None = None

    def __post_init__(self) -> None:
        if self.page < 0 or self.index < 0:
            raise ValueError(f"resume: page and index must be >= 0, got {self.page}:{self.index}")
        if self.listing is not None and not _LISTING.fullmatch(self.listing):
            raise ValueError(f"resume: not a listing fingerprint: {self.listing!r}")

    def __str__(self) -> str:
        if self.listing is None:
            return f"{self.page}:{self.index}"
        return f"{self.page}:{self.index}:{self.listing}"

    @classmethod
    def parse(cls, value: ResumeToken | str) -> ResumeToken:
        """A token from a token or its text form; ValueError on anything else.

        Reads ``"page"``, ``"page:index"`` and ``"page:index:listing"``.
        """
        if isinstance(value, ResumeToken):
            return value
        if not isinstance(value, str):
            raise TypeError(
                f"resume: expected a ResumeToken or its text, got {type(value).__name__}"
            )
        match = _TEXT.fullmatch(value)
        if match is None:
            raise ValueError(f"resume: not a resume token: {value!r}")
        page, index, listing = match.groups()
        return cls(int(page), int(index or 0), listing)

    @classmethod
    def bind(cls, resume: ResumeToken | str | None, listing: str) -> ResumeToken:
        """Where the listing ``listing`` starts: ``resume`` (or its beginning), carrying ``listing``.

        A token of another listing is a ValueError; a token without a fingerprint is
        taken at its word.
        """
        token = cls() if resume is None else cls.parse(resume)
        if token.listing is not None and token.listing != listing:
            raise ValueError(
                f"resume: the token {str(token)!r} belongs to another listing "
                f"(fingerprint {token.listing}, this listing is {listing}): resume a listing "
                "with the same arguments as the one the token came from"
            )
        return cls(token.page, token.index, listing)


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


Source = Callable[[ResumeToken], AsyncIterator[Batch[T]]]
_NOTHING: Iterator[Any] = iter(())


class AsyncList(Generic[T]):
    """An async iterator of records that fetches lazily.

    ``async for x in it`` yields records; ``it.pages()`` yields them a page (or body
    batch) at a time; ``await it.collect()`` gathers a list; ``it.resume_token`` says
    where it stands. Iterating again continues where the last loop stopped. Close it
    (``await it.aclose()`` or ``async with it:``) to stop in-flight work at once.

    ``listing`` is the fingerprint of the listing (see :class:`ResumeToken`): its tokens
    carry it, and a ``resume`` token of another listing is a ValueError. An AsyncList is
    not awaitable; awaiting one is a TypeError that says to iterate or ``collect()``.
    """

    def __init__(
        self,
        source: Source[T],
        resume: ResumeToken | str | None = None,
        *,
        listing: str | None = None,
    ) -> None:
        self._source = source
        if listing is not None:
            self._start = ResumeToken.bind(resume, listing)
        else:
            self._start = ResumeToken() if resume is None else ResumeToken.parse(resume)
        self._batches: AsyncIterator[Batch[T]] | None = None
        # The current batch, and an iterator over what is left of it: every way of
        # reading the list takes records from that one iterator, and the position is
        # its length: len(items) - what is left (see _taken).
        self._items: Sequence[T] = ()
        self._rest: Iterator[T] = _NOTHING
        self._reader: AsyncGenerator[T, None] | None = None
        self._page = self._start.page
        self._first = self._start.index
        self._done = False

    @classmethod
    def paged(
        cls,
        fetch: Callable[[int], Awaitable[Page[T]]],
        size: int,
        resume: ResumeToken | str | None = None,
        *,
        concurrency: int = 1,
        lookahead: int = 1,
        listing: str | None = None,
    ) -> AsyncList[T]:
        """A page-numbered listing walked by :func:`walk`; ``fetch(n)`` returns page ``n``.

        ``size`` is the page size asked for, ``lookahead`` the pages fetched ahead while
        the caller works, ``concurrency`` the pages in flight once the total is known.
        The arguments are checked here, before anything is sent.
        """
        integer("size", size, low=1)
        integer("concurrency", concurrency, low=1, high=64)
        integer("lookahead", lookahead, low=0, high=64)
        source = functools.partial(
            walk, fetch, size=size, lookahead=lookahead, concurrency=concurrency
        )
        return cls(source, resume, listing=listing)

    @property
    def resume_token(self) -> ResumeToken:
        """The position after the last record handed out (with the listing's fingerprint)."""
        return ResumeToken(self._page, self._first + self._taken(), self._start.listing)

    def _taken(self) -> int:
        """How many records of the current batch were handed out."""
        return len(self._items) - operator.length_hint(self._rest)

    def __await__(self) -> Generator[Any, None, NoReturn]:
        raise TypeError(
            "an AsyncList is not awaitable: iterate it with 'async for x in ...' "
            "or gather it with 'await ....collect()'"
        )

    def __aiter__(self) -> AsyncIterator[T]:
        # ``async for`` reads through one async generator, kept while the list lives: a
        # record costs less through it than through a coroutine ``__anext__``, and a loop
        # left early leaves it suspended here (not for the event loop to finalise), so
        # the next loop resumes it and ``aclose`` closes it.
        if self._reader is None:
            self._reader = self._records()
        return self._reader

    async def _records(self) -> AsyncGenerator[T, None]:
        try:
            while True:
                rest = self._rest
                for item in rest:
                    yield item
                # Unless another reader (anext, pages) moved on to a later batch meanwhile.
                if rest is self._rest and not await self._next_batch():
                    return
        finally:
            self._reader = None  # ended or closed: the next loop starts another

    async def __anext__(self) -> T:
        for item in self._rest:
            return item
        while await self._next_batch():
            for item in self._rest:
                return item
        raise StopAsyncIteration

    async def _next_batch(self) -> bool:
        """Move on to the source's next batch; False at the end."""
        if self._done:
            return False
        if self._batches is None:
            self._batches = self._source(self.resume_token)
        try:
            batch = await anext(self._batches)
        except StopAsyncIteration:
            self._done = True
            self._first += self._taken()
            self._items, self._rest = (), _NOTHING
            return False
        except BaseException:
            # The source is broken; drop it so the token stays valid and a new
            # iteration (or a new list given the token) starts cleanly from here.
            self._batches = None
            raise
        self._page, self._first, self._items = batch.page, batch.start, batch.items
        self._rest = iter(batch.items)
        return True

    async def pages(self) -> AsyncIterator[Sequence[T]]:
        """Records a page (or body batch) at a time, starting with what is left of the current one."""
        taken = self._taken()
        if taken < len(self._items):
            rest = self._items[taken:]
            collections.deque(self._rest, maxlen=0)  # all handed out, whoever holds it
            yield rest
        while await self._next_batch():
            items = self._items
            self._rest = _NOTHING
            if items:
                yield items

    async def collect(self) -> list[T]:
        """Every remaining record, in order, as a list."""
        out: list[T] = []
        async for page in self.pages():
            out.extend(page)
        return out

    async def aclose(self) -> None:
        """Stop: cancel in-flight requests and release their connections."""
        batches, self._batches = self._batches, None
        reader, self._reader = self._reader, None
        self._done = True
        if reader is not None:
            await reader.aclose()
        aclose = getattr(batches, "aclose", None)
        if aclose is not None:
            await aclose()

    async def __aenter__(self) -> AsyncList[T]:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def walk(
    fetch: Callable[[int], Awaitable[Page[T]]],
    start: ResumeToken,
    *,
    size: int,
    lookahead: int = 1,
    concurrency: int = 1,
) -> AsyncIterator[Batch[T]]:
    """Walk numbered pages from ``start`` until the last one, fetching ahead.

    While the caller consumes page N, the next ``lookahead`` pages are on their way;
    once the first page has told the total, up to ``concurrency`` pages are in flight
    at once. Pages are yielded in order whatever order they arrive in. Closing the
    walk (or cancelling its consumer) cancels every request in flight.

    Stops at a page marked last, at ``total_pages`` (the smallest the server has said:
    a total that grows page by page cannot keep the walk going), at an empty page, or
    at a short page when the server gives no metadata. A body that is the whole result
    ends the walk after it. A page that starts like any earlier page of the walk (A, B,
    A, B... as much as A, A), or a page numbered other than asked, raises
    :class:`PagingError` instead of looping.
    """
    # A token may count past a page (from a body that was the whole result).
    number = start.page + start.index // size
    skip = start.index % size
    pages = _Walk(fetch, size, number, lookahead, concurrency)
    ahead = pages.pages
    try:
        while True:
            # Page ``number``: from the task that took it, else fetched here and now.
            future = ahead.pop(number, None)
            if future is None:
                pages.next = number + 1
                page = await fetch(number)
                last = pages.check(number, page)
            else:
                page, checked = await future
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
    ) -> None:
        self.fetch = fetch
        self.size = size
        self.lookahead = lookahead
        self.concurrency = concurrency
        self.next = first  # the first page number nobody has taken
        self.checked = first  # the first page number not checked
        self.limit = first  # page numbers below it may be taken ahead
        self.total: int | None = None  # the smallest total the server has said
        self.marks: set[int] = set()
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
        if page.total_pages is not None:
            total = self.total = page.total_pages if total is None else min(total, page.total_pages)
        if is_last(page, number, self.size) or (total is not None and number + 1 >= total):
            self._stop()
            return True
        if total is None:
            window = self.lookahead
            self.limit = number + 1 + window
        else:
            window = max(self.lookahead, self.concurrency)
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
        return number, future

    async def _fetch_ahead(self, taken: _Taken[T] | None) -> None:
        while taken is not None:
            number, future = taken
            try:
                page = await self.fetch(number)
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
