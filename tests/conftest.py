"""Loopback test servers: ``serve(handler)``, and ``stub`` (hand-written JSON) built on it."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import msgspec
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from servers import postgres, postgres_url, redis, redis_url  # the throwaway servers

__all__ = ["postgres", "postgres_url", "redis", "redis_url"]

from asyncsports import Client, RequestInfo, RetryPolicy, StreamingCredentials

if TYPE_CHECKING:
    from asyncsports.emulator import Emulator

# dlt sends anonymous usage telemetry as a process ends; offline (CI) that waits a minute
# for the network. Off for the tests and every command and page they run.
os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")

SERVERS = frozenset(__all__)  # a test on one is slow: it talks to another process

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Serve(Protocol):
    """The ``serve`` fixture: start a loopback server, get its base URL (no trailing slash)."""

    async def __call__(self, handler: Handler | web.Application) -> str: ...


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    """``url = await serve(handler)``: ``handler`` answers every path (or pass a whole
    ``web.Application``); every server started is closed when the test ends."""
    async with contextlib.AsyncExitStack() as servers:

        async def start(handler: Handler | web.Application) -> str:
            if isinstance(handler, web.Application):
                app = handler
            else:
                app = web.Application()
                app.router.add_route("*", "/{tail:.*}", handler)
            server = TestServer(app, host="127.0.0.1")
            await server.start_server()
            servers.push_async_callback(server.close)
            return str(server.make_url("")).rstrip("/")

        yield start


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


@pytest.fixture
async def stub(serve: Serve) -> Stub:
    s = Stub()
    s.url = await serve(s.handle)
    return s


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


@pytest.fixture
def emu(sports_emulator: Emulator) -> Emulator:
    """The plugin's ``sports_emulator`` (configure it with ``@pytest.mark.emulator(...)``)."""
    return sports_emulator


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark ``slow`` every test that uses a database server (tests/servers.py)."""
    for item in items:
        if SERVERS & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
