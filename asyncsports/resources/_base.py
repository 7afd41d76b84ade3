"""What every resource shares: the session it sends through and the two ways to read a body."""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from contextlib import aclosing
from typing import Any, TypeVar

import anyio
import msgspec

from asyncsports import _request as q
from asyncsports._request import Request
from asyncsports._session import Session
from asyncsports._watch import jittered
from asyncsports.errors import RateLimitError, ServerError, TransportError
from asyncsports.jsonstream import decode_array
from asyncsports.models._types import decode, decoder
from asyncsports.paging import AsyncList, Batch, Page, ResumeToken, walk

T = TypeVar("T")
log = logging.getLogger("asyncsports")


class Resource:
    """A namespace of endpoints over one session; builds requests, sends nothing itself."""

    def __init__(self, session: Session) -> None:
        self._session = session

    async def _one(self, req: Request, tp: type[T] | Any) -> T:
        """Send ``req`` and decode its whole body as ``tp``."""
        resp = await self._session.get(req)
        result: T = decode(tp, resp.body, url=resp.url, status=resp.status)
        return result

    def _body_list(
        self,
        req: Request,
        tp: Any,
        unwrap: Callable[[Any], Sequence[T]],
        resume: ResumeToken | str | None = None,
    ) -> AsyncList[T]:
        """A listing whose records are one body: decoded as ``tp``, records from ``unwrap``."""

        async def source(start: ResumeToken) -> AsyncIterator[Batch[T]]:
            items = unwrap(await self._one(req, tp))
            yield Batch(0, start.index, items[start.index :])

        return AsyncList(source, resume)

    def _stream_list(
        self,
        req: Request,
        item: type[T],
        *,
        key: str | None = None,
        resume: ResumeToken | str | None = None,
    ) -> AsyncList[T]:
        """A listing whose records are one JSON array, decoded element by element as it arrives.

        ``key`` names the top-level field holding the array (the snooker ``data``). A body
        that breaks off midway is asked for again and the records already handed out are
        skipped, so nothing is lost and nothing repeats.
        """
        dec: msgspec.json.Decoder[list[T]] = decoder(list[item])  # type: ignore[valid-type]
        target = f"list[{getattr(item, '__name__', item)}]"

        async def source(start: ResumeToken) -> AsyncIterator[Batch[T]]:
            index = start.index
            call = self._session.call()  # one budget of retries across resumed bodies
            while True:
                async with self._session.stream(req, call) as resp:
                    batches = decode_array(
                        resp.chunks(),
                        dec,
                        key=key,
                        skip=index,
                        target=target,
                        url=resp.url,
                        status=resp.status,
                    )
                    try:
                        async with aclosing(batches):  # type: ignore[type-var]
                            async for batch in batches:
                                yield Batch(0, index, batch)
                                index += len(batch)
                        return
                    except TransportError as exc:
                        failure = exc
                if not await self._session.backoff(failure, call):
                    raise failure

        return AsyncList(source, resume)

    async def _polls(
        self, req: Request, tp: Any, interval: float, jitter: float
    ) -> AsyncGenerator[Any, None]:
        """Decode ``req``'s body every ``interval`` seconds (jittered), forever.

        A poll that fails for a passing reason (a connection failure, a 5xx or a 429
        after the session's own retries) is logged and skipped, so a watcher that polls
        all day rides out the service's bad minutes; other errors are raised.
        """
        q.seconds("interval", interval)
        q.seconds("jitter", jitter)
        while True:
            try:
                yield await self._one(req, tp)
            except (TransportError, ServerError, RateLimitError) as exc:
                log.warning("poll of %s failed, polling on: %s", req.path, exc)
            await anyio.sleep(jittered(interval, jitter))

    @staticmethod
    def _paged(
        fetch: Callable[[int], Awaitable[Page[T]]],
        size: int,
        resume: ResumeToken | str | None = None,
        *,
        concurrency: int = 1,
        lookahead: int = 1,
    ) -> AsyncList[T]:
        """A page-numbered listing; ``fetch(n)`` returns page ``n``."""
        q.integer("concurrency", concurrency, low=1, high=64)
        q.integer("lookahead", lookahead, low=0, high=64)

        def source(start: ResumeToken) -> AsyncIterator[Batch[T]]:
            return walk(fetch, start, size=size, lookahead=lookahead, concurrency=concurrency)

        return AsyncList(source, resume)
