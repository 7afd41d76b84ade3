"""Loopback test servers: the ``serve`` fixture's type, a ``Stub`` answering hand-written
JSON by path (the ``stub`` fixture), and a hook that counts the client's requests."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgspec
from aiohttp import web

from asyncsports import RequestInfo

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Serve(Protocol):
    """The ``serve`` fixture: start a loopback server, get its base URL (no trailing slash)."""

    async def __call__(self, handler: Handler | web.Application) -> str: ...


class Requests:
    """An ``on_request``/``on_response`` hook that counts calls and lets a test wait for one.

    ``await hook.reach(n)`` returns once the hook has been called ``n`` times in all: a
    test waits for what the client did instead of sleeping and hoping it happened.
    """

    def __init__(self) -> None:
        self.count = 0
        self.seen: list[RequestInfo] = []
        self._called = asyncio.Event()

    def __call__(self, info: RequestInfo) -> None:
        self.count += 1
        self.seen.append(info)
        self._called.set()

    async def reach(self, n: int) -> None:
        while self.count < n:
            self._called.clear()
            await self._called.wait()


@dataclass
class Reply:
    """One canned response: JSON (``body``) or raw text (``text``)."""

    body: Any = None
    status: int = 200
    text: str | bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    """A request the server received."""

    path: str
    query: list[tuple[str, str]]
    headers: dict[str, str]
    raw_path: str = ""
    """The path as sent, percent-encoded."""


class Stub:
    """Routes by exact path; each path answers its replies in order, the last one repeating."""

    def __init__(self) -> None:
        self.routes: dict[str, list[Reply]] = {}
        self.seen: list[Seen] = []
        self.url = ""

    def add(self, path: str, *replies: Reply | Any) -> None:
        self.routes[path] = [r if isinstance(r, Reply) else Reply(r) for r in replies]

    def last(self, path: str | None = None) -> Seen:
        hits = [s for s in self.seen if path is None or s.path == path]
        assert hits, f"no request for {path}"
        return hits[-1]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        query, headers = list(request.query.items()), dict(request.headers)
        self.seen.append(Seen(request.path, query, headers, request.rel_url.raw_path))
        replies = self.routes.get(request.path)
        if not replies:
            return web.json_response({"error": "Not Found", "status": 404}, status=404)
        reply = replies.pop(0) if len(replies) > 1 else replies[0]
        if reply.text is not None:
            data = reply.text.encode() if isinstance(reply.text, str) else reply.text
            ctype = "text/plain"
        else:
            data, ctype = msgspec.json.encode(reply.body), "application/json"
        return web.Response(
            body=data, status=reply.status, headers=reply.headers, content_type=ctype
        )
