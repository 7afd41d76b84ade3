"""What every resource shares: the session it sends through and the two ways to read a body."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar

from asyncsports import _request as q
from asyncsports._request import Request
from asyncsports._session import Session
from asyncsports.models._types import decode
from asyncsports.paging import AsyncList, Batch, Page, ResumeToken, walk

T = TypeVar("T")


class Resource:
    """A namespace of endpoints over one session; builds requests, sends nothing itself."""

    def __init__(self, session: Session) -> None:
        self._session = session

    async def _one(self, req: Request, tp: type[T] | Any) -> T:
        """Send ``req`` and decode its whole body as ``tp``."""
        resp = await self._session.get(req)
        result: T = decode(tp, resp.body, url=resp.url)
        return result

    def _body_list(
        self,
        req: Request,
        tp: Any,
        unwrap: Callable[[Any], Sequence[T]] = lambda body: body,
        resume: ResumeToken | str | None = None,
    ) -> AsyncList[T]:
        """A listing whose records are one body: decoded as ``tp``, records from ``unwrap``."""

        async def source(start: ResumeToken) -> AsyncIterator[Batch[T]]:
            resp = await self._session.get(req)
            items = unwrap(decode(tp, resp.body, url=resp.url))
            yield Batch(0, start.index, items[start.index :])

        return AsyncList(source, resume)

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
