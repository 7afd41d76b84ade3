"""A loopback HTTP server that serves hand-written JSON and records what it was asked."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from asyncsports import Client, RetryPolicy, StreamingCredentials


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
        self.seen.append(Seen(request.path, list(request.query.items()), dict(request.headers)))
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


@pytest.fixture
async def stub() -> AsyncIterator[Stub]:
    s = Stub()
    app = web.Application()
    app.router.add_route("GET", "/{tail:.*}", s.handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    s.url = str(server.make_url("")).rstrip("/")
    try:
        yield s
    finally:
        await server.close()


@pytest.fixture
async def client(stub: Stub) -> AsyncIterator[Client]:
    async with Client(
        stub.url,
        token="secret-token",
        streaming_url=stub.url,
        streaming_credentials=StreamingCredentials(9, "stream-auth", 1700000000000),
        retry=RetryPolicy(max_retries=2, base=0.0, cap=0.0),
    ) as c:
        yield c
