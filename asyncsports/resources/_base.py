"""What every resource shares: the session it sends through and the two ways to read a body.

Each helper takes ``raw``: with it the records come as :class:`~asyncsports.raw.RawRecord`
pairs (the typed record and its JSON as sent); without it nothing of that runs.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from contextlib import aclosing
from typing import Any, Generic, TypeVar

from asyncsports._decoding import FAILURES, Source, body_error, type_name
from asyncsports._request import Request
from asyncsports._session import Response, Session, StreamResponse
from asyncsports._watch import polls
from asyncsports.jsonstream import ListDecoder, decode_array
from asyncsports.models._types import decode, decoder
from asyncsports.paging import AsyncList, Batch, ResumeToken
from asyncsports.raw import RawRecord, WithJSON, elements, paired

T = TypeVar("T")


class Body(Generic[T]):
    """Whole bodies decoded as ``tp``, its decoder looked up once, at the first body.

    For what is decoded again and again: a listing's pages, a resource's one record.
    Calling it on a response decodes the body, or raises the DecodeError that
    :func:`~asyncsports.models.decode` would.
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


def _raw(tp: Any, resp: Response) -> RawRecord[Any]:
    return RawRecord(decode(tp, resp.body, url=resp.url, status=resp.status), resp.body)


class Resource:
    """A namespace of endpoints over one session; builds requests, sends nothing itself."""

    def __init__(self, session: Session) -> None:
        self._session = session

    async def _one(self, req: Request, tp: type[T] | Any) -> T:
        """Send ``req`` and decode its whole body as ``tp``."""
        record: RawRecord[T] = await self._one_raw(req, tp)
        return record.value

    async def _one_raw(self, req: Request, tp: type[T] | Any) -> RawRecord[T]:
        """Send ``req``; its whole body decoded as ``tp``, with the body's bytes."""
        return await self._session.read(req, lambda resp: _raw(tp, resp))

    async def _records(
        self, req: Request, tp: Any, unwrap: Callable[[Any], Sequence[Any]], raw: bool
    ) -> Sequence[Any]:
        """The records of ``req``'s body (decoded as ``tp``, records from ``unwrap``).

        With ``raw``, each with its JSON: the body holds the records as an array, or is
        the one record (``unwrap`` must list them in the body's order).
        """
        if not raw:
            return unwrap(await self._one(req, tp))
        body = await self._one_raw(req, tp)
        return paired(list(unwrap(body.value)), elements(body.json))

    def _body_list(
        self,
        req: Request,
        tp: Any,
        unwrap: Callable[[Any], Sequence[Any]],
        resume: ResumeToken | str | None = None,
        raw: bool = False,
    ) -> AsyncList[Any]:
        """A listing whose records are one body: decoded as ``tp``, records from ``unwrap``.

        Its resume tokens carry ``req``'s fingerprint; ``resume`` must be one of its own.
        """

        async def source(start: ResumeToken) -> AsyncIterator[Batch[Any]]:
            items = await self._records(req, tp, unwrap, raw)
            yield Batch(0, start.index, items[start.index :])

        return AsyncList(source, resume, listing=req.fingerprint())

    def _stream_list(
        self,
        req: Request,
        item: type[T],
        *,
        key: str | None = None,
        resume: ResumeToken | str | None = None,
        raw: bool = False,
    ) -> AsyncList[Any]:
        """A listing whose records are one JSON array, decoded element by element as it arrives.

        ``key`` names the top-level field holding the array (the snooker ``data``). A body
        that breaks off midway is asked for again (the session's one retry loop) and the
        records already handed out are skipped, so nothing is lost and nothing repeats.
        Its resume tokens carry ``req``'s fingerprint; ``resume`` must be one of its own.
        With ``raw`` the records are :class:`RawRecord` pairs.
        """
        dec: ListDecoder[Any] = WithJSON(item) if raw else decoder(list[item])  # type: ignore[valid-type]
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
        tp: Any,
        unwrap: Callable[[Any], Sequence[Any]],
        interval: float,
        jitter: float,
        raw: bool = False,
    ) -> AsyncGenerator[Sequence[Any], None]:
        """The records of ``req``'s body every ``interval`` seconds: see :func:`polls`.

        Decoded as ``tp``, listed by ``unwrap``; with ``raw`` as RawRecord pairs.
        """
        return polls(lambda: self._records(req, tp, unwrap, raw), req.path, interval, jitter)
