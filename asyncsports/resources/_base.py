"""What every resource shares: the session it sends through and the ways to read a body.

A resource gives its records in one of two forms: typed, or (on the twin that
:func:`asyncsports.views.with_json` binds, ``_raw`` set) each as a
:class:`~asyncsports.raw.RawRecord` with its JSON as sent. Only the helpers here look at
the form, so that each method is written once; on the plain form nothing of the pairing runs.
"""

from __future__ import annotations

import copy
import functools
import warnings
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    Iterable,
    Sequence,
)
from contextlib import aclosing
from operator import itemgetter
from typing import Any, Generic, Self, TypeVar, cast

from asyncsports._http import request as arg
from asyncsports._http.request import Param, Request
from asyncsports._http.session import Response, Session, StreamResponse
from asyncsports._iter.watch import polls
from asyncsports._wire.decoding import FAILURES, Source, body_error, type_name
from asyncsports.jsonstream import ListDecoder, decode_array
from asyncsports.models._types import decoder
from asyncsports.paging import AsyncList, Batch, Page, ResumeToken
from asyncsports.raw import RawRecord, WithJSON, elements, paired

T = TypeVar("T")
B = TypeVar("B")
F = TypeVar("F", bound=Callable[..., Any])


def traced(method: F) -> F:
    """A resource's public method, traced when its client is (:mod:`asyncsports.telemetry`).

    What the method returns goes to the session's observer, as the call of span
    ``asyncsports.<namespace>.<method>`` (``FixturesResource.list``: ``asyncsports.fixtures.list``);
    without an observer a call costs one attribute test more. The twins of
    ``client.with_json`` share the session, so they are traced with it.
    """
    owner, _, name = method.__qualname__.rpartition(".")
    span = f"asyncsports.{owner.removesuffix('Resource').lower()}.{name}"

    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = method(self, *args, **kwargs)
        observer = self._session.observer
        return result if observer is None else observer.call(result, span)

    call.span = span  # type: ignore[attr-defined]  # the span's name, for tests and readers
    return cast(F, call)


class Body(Generic[T]):
    """Whole bodies decoded as ``tp``, its decoder looked up once, at the first body.

    For what is decoded again and again: a listing's pages, a resource's one record.
    Calling it on a response decodes the body, or raises the DecodeError that
    :func:`~asyncsports.models.decode` would; :meth:`paired` adds the body's bytes.
    """

    __slots__ = ("_decode", "_tp")

    def __init__(self, tp: Any) -> None:
        self._tp = tp
        self._decode: Callable[[bytes], T] | None = None

    def __call__(self, resp: Response) -> T:
        decode = self._decode
        if decode is None:
            decode = self._decode = decoder(self._tp).decode
        try:
            return decode(resp.body)
        except FAILURES as exc:
            where = Source(type_name(self._tp), resp.url, resp.status)
            raise body_error(where, exc, resp.body) from exc

    def paired(self, resp: Response) -> RawRecord[T]:
        """The body decoded, with its bytes: a single record's JSON form."""
        return RawRecord(self(resp), resp.body)


def open_filter(name: str, value: str | None, known: Iterable[str], wire: str) -> list[Param]:
    """An open-set filter as query parameters: ``[(wire, value in its wire spelling)]``
    (see :func:`~asyncsports._http.request.open_choice`), none for None."""
    return [] if value is None else [(wire, arg.open_choice(name, value, known))]


REMOVED_IN = "0.3"
"""The release that stops accepting a renamed keyword's old name."""


def renamed(new: str, new_value: T, old: str, old_value: T) -> T:
    """The value of a keyword renamed from ``old`` to ``new``: the old name still works
    for a release, with a DeprecationWarning; both at once is a TypeError.

    Called from a :func:`traced` method: the warning points at that method's caller.
    """
    if old_value is None:
        return new_value
    if new_value is not None:
        raise TypeError(f"give {new}= only ({old}= is its old name)")
    warnings.warn(
        f"{old}= is deprecated: use {new}= (the old name goes in {REMOVED_IN})",
        DeprecationWarning,
        stacklevel=4,  # renamed, the method, traced's call, the caller
    )
    return old_value


def _same(record: Any) -> Any:
    return record


_VALUE = itemgetter(0)  # a RawRecord's value


class Pairable:
    """A namespace whose records can come each with its JSON as sent (``with_json``)."""

    _raw = False
    """Whether records come as RawRecord pairs: only on the twins of ``with_json``."""

    def paired(self) -> Self:
        """A twin of this namespace whose records come each with its JSON as sent (what
        :func:`asyncsports.views.with_json` binds); this one is untouched."""
        twin = copy.copy(self)
        twin._raw = True
        return twin


class Resource(Pairable):
    """A namespace of endpoints over one session; builds requests, sends nothing itself."""

    def __init__(self, session: Session) -> None:
        self._session = session

    def _one(self, req: Request, body: Body[T]) -> Coroutine[Any, Any, T]:
        """Send ``req`` and decode its whole body with ``body`` (await it).

        In JSON mode ``body.paired``: typed as the plain form, the view's wrapper types the
        pair. The session's own coroutine, so that a get costs no frame more than it did.
        """
        parse: Callable[[Response], Any] = body.paired if self._raw else body
        return self._session.read(req, parse)

    async def _records(
        self,
        req: Request,
        body: Body[B],
        unwrap: Callable[[B], Sequence[Any]],
        key: str | None = None,
    ) -> Sequence[Any]:
        """The records of ``req``'s body (decoded by ``body``, records from ``unwrap``).

        In JSON mode each with its JSON: the body holds the records as an array, or is the
        one record, or (``key``) holds either in its field ``key``; ``unwrap`` must list
        them in the body's order.
        """
        if not self._raw:
            return unwrap(await self._session.read(req, body))
        whole = await self._session.read(req, body.paired)
        return paired(list(unwrap(whole.value)), elements(whole.json, key))

    def _pages(
        self,
        req: Request,
        param: str,
        body: Body[B],
        to_page: Callable[[B], Page[T]],
        key: str | None = None,
    ) -> Callable[[int], Awaitable[Page[Any]]]:
        """The fetch of page ``number`` of a paged listing: ``req`` with ``param`` set to it,
        its body decoded by ``body`` and made a Page by ``to_page``.

        In JSON mode the page's records are paired with their JSON, as :meth:`_records`.
        """
        read = self._session.read
        at = req.pages(param)

        async def fetch(number: int) -> Page[Any]:
            return to_page(await read(at(number), body))

        async def fetch_paired(number: int) -> Page[Any]:
            whole = await read(at(number), body.paired)
            page: Page[Any] = to_page(whole.value)
            return page._replace(items=paired(list(page.items), elements(whole.json, key)))

        return fetch_paired if self._raw else fetch

    def _paged(
        self,
        req: Request,
        param: str,
        body: Body[B],
        to_page: Callable[[B], Page[T]],
        size: int,
        resume: ResumeToken | str | None,
        concurrency: int,
        lookahead: int,
        key: str | None = None,
    ) -> AsyncList[Any]:
        """A paged listing of ``req`` (pages of ``size`` by ``param``, as :meth:`_pages`),
        walked by :meth:`AsyncList.paged`; its resume tokens carry ``req``'s fingerprint."""
        return AsyncList.paged(
            self._pages(req, param, body, to_page, key),
            size,
            resume,
            concurrency=concurrency,
            lookahead=lookahead,
            listing=req.fingerprint(),
        )

    def _value(self) -> Callable[[Any], Any]:
        """What gives the typed record of a record handed out (a pair's value in JSON mode)."""
        return _VALUE if self._raw else _same

    def _body_list(
        self,
        req: Request,
        body: Body[B],
        unwrap: Callable[[B], Sequence[Any]],
        resume: ResumeToken | str | None = None,
    ) -> AsyncList[Any]:
        """A listing whose records are one body: decoded by ``body``, records from ``unwrap``.

        Its resume tokens carry ``req``'s fingerprint; ``resume`` must be one of its own.
        """

        async def source(start: ResumeToken) -> AsyncIterator[Batch[Any]]:
            items = await self._records(req, body, unwrap)
            yield Batch(0, start.index, items[start.index :])

        return AsyncList(source, resume, listing=req.fingerprint())

    def _stream_list(
        self,
        req: Request,
        item: type[T],
        *,
        key: str | None = None,
        resume: ResumeToken | str | None = None,
    ) -> AsyncList[Any]:
        """A listing whose records are one JSON array, decoded element by element as it arrives.

        ``key`` names the top-level field holding the array (the snooker ``data``). A body
        that breaks off midway is asked for again (the session's one retry loop) and the
        records already handed out are skipped, so nothing is lost and nothing repeats.
        Its resume tokens carry ``req``'s fingerprint; ``resume`` must be one of its own.
        In JSON mode the records are :class:`RawRecord` pairs.
        """
        dec: ListDecoder[Any] = WithJSON(item) if self._raw else decoder(list[item])  # type: ignore[valid-type]
        target = f"list[{getattr(item, '__name__', item)}]"

        limit = self._session.settings.max_element_size

        async def source(start: ResumeToken) -> AsyncIterator[Batch[Any]]:
            index = start.index

            def body(resp: StreamResponse) -> AsyncIterator[list[Any]]:
                # Called again for each resumed body: skip what was handed out.
                return decode_array(
                    resp.chunks(),
                    dec,
                    key=key,
                    skip=index,
                    target=target,
                    url=resp.url,
                    status=resp.status,
                    max_element=limit,
                )

            async with aclosing(self._session.stream(req, body)) as batches:
                async for batch in batches:
                    yield Batch(0, index, batch)
                    index += len(batch)

        return AsyncList(source, resume, listing=req.fingerprint())

    def _polls(
        self,
        req: Request,
        body: Body[B],
        unwrap: Callable[[B], Sequence[Any]],
        interval: float,
        jitter: float,
    ) -> AsyncGenerator[Sequence[Any], None]:
        """The records of ``req``'s body every ``interval`` seconds: see :func:`polls`.

        Decoded by ``body``, listed by ``unwrap``; in JSON mode as RawRecord pairs.
        """
        return polls(lambda: self._records(req, body, unwrap), req.path, interval, jitter)
