"""Lazy async iteration over listings: page walking, resume tokens.

An :class:`AsyncList` sends nothing until iterated. Its records come from a *source*:
an async iterator of :class:`Batch` es that starts at a :class:`ResumeToken`. A paged
listing's source walks page numbers (:func:`walk`); a single-body listing's source
decodes one body. Either way the list knows where it stands (``.resume_token``) and a
new list given that token carries on with no gap and no duplicate.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, NoReturn, TypeVar

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


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    """One decoded page. ``last`` is None when the server did not say."""

    items: Sequence[T]
    number: int | None = None
    total_pages: int | None = None
    last: bool | None = None
    whole: bool = False
    """True when the body was the whole result (the server ignored paging)."""


Source = Callable[[ResumeToken], AsyncIterator[Batch[T]]]


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
        self._items: Sequence[T] = ()
        self._i = 0
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
        return ResumeToken(self._page, self._first + self._i, self._start.listing)

    def __await__(self) -> Generator[Any, None, NoReturn]:
        raise TypeError(
            "an AsyncList is not awaitable: iterate it with 'async for x in ...' "
            "or gather it with 'await ....collect()'"
        )

    def __aiter__(self) -> AsyncList[T]:
        return self

    async def __anext__(self) -> T:
        i = self._i
        if i < len(self._items):
            self._i = i + 1
            return self._items[i]
        while True:
            batch = await self._next_batch()
            if batch is None:
                raise StopAsyncIteration
            if batch.items:
                self._i = 1
                return batch.items[0]

    async def _next_batch(self) -> Batch[T] | None:
        if self._done:
            return None
        if self._batches is None:
            self._batches = self._source(self.resume_token)
        try:
            batch = await anext(self._batches)
        except StopAsyncIteration:
            self._done = True
            self._first, self._items, self._i = self._first + self._i, (), 0
            return None
        except BaseException:
            # The source is broken; drop it so the token stays valid and a new
            # iteration (or a new list given the token) starts cleanly from here.
            self._batches = None
            raise
        self._page, self._first, self._items, self._i = batch.page, batch.start, batch.items, 0
        return batch

    async def pages(self) -> AsyncIterator[Sequence[T]]:
        """Records a page (or body batch) at a time, starting with what is left of the current one."""
        rest = self._items[self._i :]
        if rest:
            self._i = len(self._items)
            yield rest
        while (batch := await self._next_batch()) is not None:
            if batch.items:
                self._i = len(batch.items)
                yield batch.items

    async def collect(self) -> list[T]:
        """Every remaining record, in order, as a list."""
        out: list[T] = []
        async for page in self.pages():
            out.extend(page)
        return out

    async def aclose(self) -> None:
        """Stop: cancel in-flight requests and release their connections."""
        batches, self._batches = self._batches, None
        self._done = True
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
    marks: set[bytes] = set()
    total: int | None = None
    ahead = lookahead
    # Plain asyncio tasks: aiohttp ties the client to asyncio anyway, and a bare task per
    # page is the cheapest way to keep requests travelling while the caller works.
    inflight: dict[int, asyncio.Future[Page[T]]] = {}
    try:
        while True:
            if number not in inflight:
                inflight[number] = asyncio.ensure_future(fetch(number))
            page = await inflight.pop(number)
            if page.whole:
                # The server ignored paging: this body is everything; skip what the
                # token says was consumed (full pages before it, then ``skip``).
                consumed = number * size + skip
                yield Batch(0, consumed, page.items[consumed:])
                return
            if page.number is not None and page.number != number:
                raise PagingError(f"asked for page {number}, the server sent page {page.number}")
            if page.items:
                mark = _mark(page.items[0])
                if mark in marks:
                    raise PagingError(
                        f"page {number} repeats an earlier page: the server ignores paging"
                    )
                marks.add(mark)
            if page.total_pages is not None:
                total = page.total_pages if total is None else min(total, page.total_pages)
                ahead = max(lookahead, concurrency)
            last = is_last(page, number, size) or (total is not None and number + 1 >= total)
            if last:
                _cancel(inflight)
            else:
                # Ask for the window after this page before handing it over, so the
                # requests travel while the caller works; never past a known end.
                for n in range(number + 1, number + 1 + ahead):
                    if n not in inflight and (total is None or n < total):
                        inflight[n] = asyncio.ensure_future(fetch(n))
            yield Batch(number, skip, page.items[skip:])
            if last:
                return
            number += 1
            skip = 0
    finally:
        _cancel(inflight)
        if inflight:
            await asyncio.gather(*inflight.values(), return_exceptions=True)


def _mark(record: object) -> bytes:
    """A short digest of a page's first record: one per page, so memory stays small."""
    try:
        data = msgspec.json.encode(record)
    except (TypeError, msgspec.EncodeError):
        data = repr(record).encode()
    return hashlib.blake2b(data, digest_size=16).digest()


def _cancel(futures: dict[int, asyncio.Future[Page[T]]]) -> None:
    for future in futures.values():
        future.cancel()


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
