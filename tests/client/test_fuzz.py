"""A hostile server, driven by hypothesis, against every kind of call.

Each example scripts what the server does (status, headers, content encoding, body,
timing) and makes one call: a whole body, a paged walk, a streamed list or a watcher.
Whatever the server does, only library errors escape, no connection or task is left
behind, nothing hangs past its bound, and no secret appears in any error, its causes,
or the log.
"""

from __future__ import annotations

import asyncio
import gzip
import logging
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from aiohttp import web
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.samples import FIXTURE_ID, action, fixture
from support.stub import Serve

from asyncsports import Client, RetryPolicy, StreamingCredentials, Timeout
from asyncsports.errors import AsyncSportsError

TOKEN = "tok-SECRET-1234"
STREAM_AUTH = "auth-SECRET-5678"
SECRETS = (TOKEN, STREAM_AUTH)


@dataclass
class Plan:
    """What the server does with every request of one example."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    encoding: str | None = None  # compress the body with it, and say so
    lie_encoding: str | None = None  # say this encoding, send the body as it is
    delay: float = 0.0  # before the headers
    drip: int = 0  # send the body in pieces of this many bytes, a pause between each
    cut: int | None = None  # close the connection after this many body bytes


GOOD = {
    "whole": msgspec.json.encode(fixture()),
    "paged": msgspec.json.encode(
        {"content": [fixture(i) for i in range(3)], "number": 0, "totalPages": 1, "last": True}
    ),
    "stream": msgspec.json.encode([action(i) for i in range(5)]),
    "watch": msgspec.json.encode([]),
}

bodies = st.one_of(
    st.sampled_from(list(GOOD.values())),
    st.binary(max_size=300),
    st.sampled_from(
        [
            b"[" * 3000,
            b"[" * 3000 + b"]" * 3000,
            b'{"content": [' + b"{" * 2000,
            b'[{"a": "\xff\xfe"}]',
            b"<html><body>Bad gateway</body></html>",
            b"{The supplied authentication is invalid}",
            b"null",
            b'{"errorMessage": "nope"}',
        ]
    ),
    st.builds(lambda good, n: good[:n], st.sampled_from(list(GOOD.values())), st.integers(0, 400)),
)

plans = st.builds(
    Plan,
    status=st.sampled_from([200, 200, 200, 204, 301, 400, 401, 404, 408, 429, 500, 503, 599]),
    body=bodies,
    headers=st.dictionaries(
        st.sampled_from(["Retry-After", "Content-Type", "Location", "X-Other"]),
        st.sampled_from(["0", "-5", "1e9", "nan", "soon", "text/html", f"/x?auth={STREAM_AUTH}"]),
        max_size=2,
    ),
    encoding=st.sampled_from([None, None, "gzip", "deflate"]),
    lie_encoding=st.sampled_from([None, None, None, "gzip", "br", "x-nonsense"]),
    delay=st.sampled_from([0.0, 0.0, 0.0, 0.02]),
    drip=st.sampled_from([0, 0, 0, 7]),
    cut=st.sampled_from([None, None, None, 0, 5, 40]),
)


def compress(data: bytes, encoding: str) -> bytes:
    return gzip.compress(data) if encoding == "gzip" else zlib.compress(data)


class Hostile:
    """The server's side: one plan at a time, applied to every request."""

    def __init__(self) -> None:
        self.plan = Plan()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        plan = self.plan
        if plan.delay:
            await asyncio.sleep(plan.delay)
        body = plan.body
        headers = dict(plan.headers)
        if plan.encoding:
            body = compress(body, plan.encoding)
            headers["Content-Encoding"] = plan.encoding
        elif plan.lie_encoding:
            headers["Content-Encoding"] = plan.lie_encoding
        if plan.status == 301:
            headers.setdefault("Location", "/elsewhere")
        response = web.StreamResponse(status=plan.status, headers=headers)
        if plan.cut is None and not plan.drip:
            response.content_length = len(body)
        await response.prepare(request)
        if plan.status in (204, 304):
            return response
        if plan.cut is not None:
            await response.write(body[: plan.cut])
            assert request.transport is not None
            request.transport.close()
            return response
        step = plan.drip or len(body) or 1
        for i in range(0, len(body), step):
            await response.write(body[i : i + step])
            if plan.drip:
                await asyncio.sleep(0.005)
        await response.write_eof()
        return response


Call = Callable[[Client], Awaitable[Any]]


async def whole(c: Client) -> Any:
    return await c.fixtures.get("soccer", FIXTURE_ID)


async def paged(c: Client) -> Any:
    return await c.fixtures.list("soccer", page_size=3).collect()


async def streamed(c: Client) -> Any:
    return await c.actions.list("soccer", FIXTURE_ID).collect()


async def watched(c: Client) -> Any:
    # A watcher rides out passing failures forever: take what three polls give.
    out = []
    async with asyncio.timeout(0.5):
        async for change in c.events.watch(interval=0.0, jitter=0.0):
            out.append(change)
            if len(out) >= 3:
                break
    return out


CALLS: dict[str, Call] = {"whole": whole, "paged": paged, "stream": streamed, "watch": watched}


def texts(exc: BaseException) -> str:
    """Every text an error shows: its str and repr, and those of its causes and context."""
    out, seen = [], set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        out += [str(e), repr(e), repr(getattr(e, "__dict__", {}))]
        todo += [e.__cause__, e.__context__]
    return "\n".join(out)


@pytest.fixture
async def hostile(serve: Serve) -> tuple[Hostile, str]:
    h = Hostile()
    return h, await serve(h.handle)


@pytest.mark.parametrize("kind", list(CALLS))
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plan=plans)
@pytest.mark.slow
async def test_only_library_errors_escape_and_nothing_leaks(
    hostile: tuple[Hostile, str], kind: str, plan: Plan, caplog: pytest.LogCaptureFixture
) -> None:
    server, url = hostile
    server.plan = plan
    caplog.clear()
    before = asyncio.all_tasks()
    async with Client(
        url,
        token=TOKEN,
        streaming_url=url,
        streaming_credentials=StreamingCredentials(7, STREAM_AUTH, 1_700_000_000_000),
        timeout=Timeout(connect=1.0, read=0.3, total=2.0),
        retry=RetryPolicy(max_retries=2, base=0.0, cap=0.0, max_retry_after=0.05),
        max_body_size=1 << 20,
    ) as c:
        error: BaseException | None = None
        with caplog.at_level(logging.DEBUG, logger="asyncsports"):
            try:
                async with asyncio.timeout(30):  # a guard: a hang fails here
                    await CALLS[kind](c)
            except AsyncSportsError as exc:
                error = exc
            except TimeoutError as exc:
                # The watcher's own bound above, or a hang caught by the guard.
                if kind != "watch":
                    raise AssertionError(f"hung: {plan}") from exc
        assert c.connections_in_use() == 0
    leftover = {t for t in asyncio.all_tasks() - before if not t.done()}
    server_side = ("RequestHandler", "_accept_connection")  # the hostile server's own
    ours = [repr(t) for t in leftover if not any(s in repr(t.get_coro()) for s in server_side)]
    assert not ours, "\n".join(ours)
    shown = texts(error) if error is not None else ""
    shown += "\n".join(r.getMessage() for r in caplog.records)
    for secret in SECRETS:
        assert secret not in shown, (plan, shown)
