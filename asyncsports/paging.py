"""Lazy async iteration over listings: page walking, resume tokens.

An :class:`AsyncList` sends nothing until iterated. Its records come from a *source*:
an async iterator of :class:`Batch` es that starts at a :class:`ResumeToken`. A paged
listing's source walks page numbers (:func:`walk`); a single-body listing's source
decodes one body. Either way the list knows where it stands (``.resume_token``) and a
new list given that token carries on with no gap and no duplicate.
"""

from __future__ import annotations

import collections
import functools
import operator
import re
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
from typing import Any, Generic, NoReturn, TypeVar

from asyncsports._http.request import integer
from asyncsports._iter.walk import Batch, Page, is_last, walk
from asyncsports.errors import PagingError

__all__ = ["AsyncList", "Batch", "Page", "PagingError", "ResumeToken", "is_last", "walk"]

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
        the caller works (while that pays: a tight loop fetches in its own task),
        ``concurrency`` the pages in flight once the total is known. The arguments are
        checked here, before anything is sent.
        """
        integer("size", size, low=1)
        integer("concurrency", concurrency, low=1, high=64)
        integer("lookahead", lookahead, low=0, high=64)
        source = functools.partial(
            walk, fetch, size=size, lookahead=lookahead, concurrency=concurrency
        )
        return cls(source, resume, listing=listing)

    def wrap(self, around: Callable[[AsyncIterator[Batch[T]]], AsyncIterator[Batch[T]]]) -> None:
        """Read the list's batches through ``around`` (a tracer's span over the walk, say):
        each walk the list starts goes through it, and is closed through it."""
        source = self._source
        self._source = lambda start: around(source(start))

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
        batches = self._batches
        try:
            batch = await anext(batches)
        except StopAsyncIteration:
            self._done = True
            self._first += self._taken()
            self._items = ()
            self._rest = _NOTHING
            return False
        except BaseException:
            # The source is broken; drop it so the token stays valid and a new
            # iteration (or a new list given the token) starts cleanly from here.
            self._batches = None
            raise
        if self._done:  # closed by another task meanwhile: this batch is not handed out
            await _close(batches)
            return False
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
        """Stop: cancel in-flight requests and release their connections. A task reading
        the list meanwhile ends once the request it awaits is answered (its records are
        not handed out), closing what is in flight then."""
        batches, self._batches = self._batches, None
        reader, self._reader = self._reader, None
        self._done = True
        if reader is not None and not getattr(reader, "ag_running", False):
            await reader.aclose()  # (one running in another task ends with the source)
        if not getattr(batches, "ag_running", False):  # else that task closes it
            await _close(batches)

    async def __aenter__(self) -> AsyncList[T]:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


async def _close(batches: object) -> None:
    """Close a list's source (an async generator, or any iterator with ``aclose``)."""
    aclose = getattr(batches, "aclose", None)
    if aclose is not None:
        await aclose()
