"""The session under load, cancellation, deadlines and logging, over loopback."""

from __future__ import annotations

import asyncio
import logging

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from conftest import Reply, Stub
from samples import FIXTURE_ID, fixture

from asyncsports import Client, RetryPolicy, StreamingCredentials, Timeout
from asyncsports.errors import ServerError, TransportError

PATH = f"/basketball/fixtures/{FIXTURE_ID}"


async def slow_server(delay: float) -> TestServer:
    async def handle(request: web.Request) -> web.Response:
        await asyncio.sleep(delay)
        return web.json_response(fixture())

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    return server


async def test_a_thousand_concurrent_calls_through_ten_connections() -> None:
    server = await slow_server(0.001)
    peak = 0
    try:
        async with Client(str(server.make_url("")), token="t", max_connections=10) as c:

            async def one() -> str:
                nonlocal peak
                f = await c.fixtures.get("basketball", FIXTURE_ID)
                peak = max(peak, c._session.connections_in_use())
                return f.name

            names = await asyncio.gather(*(one() for _ in range(1000)))
            assert len(names) == 1000 and all(names)
            assert 1 <= peak <= 10
            assert c.requests_sent == 1000
    finally:
        await server.close()


async def test_cancelling_a_caller_mid_request_releases_the_connection() -> None:
    server = await slow_server(5)
    try:
        async with Client(str(server.make_url("")), token="t") as c:
            task = asyncio.ensure_future(c.fixtures.get("basketball", FIXTURE_ID))
            await asyncio.sleep(0.1)
            assert c._session.connections_in_use() == 1
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            await asyncio.sleep(0)
            assert c._session.connections_in_use() == 0
            # Only the in-process server's own handler may still be running.
            others = asyncio.all_tasks() - {asyncio.current_task()}
            assert all("RequestHandler" in repr(t.get_coro()) for t in others)
    finally:
        await server.close()


async def test_a_deadline_bounds_all_attempts() -> None:
    server = await slow_server(1)
    try:
        timeout = Timeout(read=0.2, total=0.5)
        retry = RetryPolicy(max_retries=10, base=0.01, cap=0.01)
        async with Client(str(server.make_url("")), token="t", timeout=timeout, retry=retry) as c:
            loop = asyncio.get_running_loop()
            started = loop.time()
            with pytest.raises(TransportError, match="timed out"):
                await c.fixtures.get("basketball", FIXTURE_ID)
            assert loop.time() - started < 1.0
    finally:
        await server.close()


async def test_retries_are_logged_with_reason_and_delay_and_no_secret(
    stub: Stub, caplog: pytest.LogCaptureFixture
) -> None:
    stub.add("/api/v2/streaming/events", Reply(status=503, text="busy"), [])
    creds = StreamingCredentials(1, "very-secret-auth", 5)
    retry = RetryPolicy(base=0.0, cap=0.0)
    with caplog.at_level(logging.WARNING, logger="asyncsports"):
        async with Client(
            stub.url,
            token="tok-secret",
            streaming_url=stub.url,
            streaming_credentials=creds,
            retry=retry,
        ) as c:
            await c.events.list().collect()
    (record,) = [r for r in caplog.records if "retrying" in r.getMessage()]
    text = record.getMessage()
    assert "503" in text and "in 0.00s" in text
    assert "very-secret-auth" not in text and "auth=***" in text


async def test_errors_never_carry_the_token_or_stream_secret(stub: Stub) -> None:
    stub.add("/api/v2/streaming/events", Reply(status=500, text="down"))
    creds = StreamingCredentials(1, "very-secret-auth", 5)
    async with Client(
        stub.url,
        token="tok-secret",
        streaming_url=stub.url,
        streaming_credentials=creds,
        max_retries=0,
    ) as c:
        with pytest.raises(ServerError) as info:
            await c.events.list().collect()
    text = str(info.value) + repr(info.value.__dict__)
    assert "very-secret-auth" not in text and "tok-secret" not in text


async def test_after_a_429_the_whole_client_waits(stub: Stub) -> None:
    other = f"/ice-hockey/fixtures/{FIXTURE_ID}"
    stub.add(PATH, Reply(status=429, text="", headers={"Retry-After": "0.3"}), fixture())
    stub.add(other, fixture())
    async with Client(stub.url, token="t") as c:
        loop = asyncio.get_running_loop()
        started = loop.time()
        first = asyncio.ensure_future(c.fixtures.get("basketball", FIXTURE_ID))
        await asyncio.sleep(0.1)  # the 429 has arrived; the client is paused
        await c.fixtures.get("ice-hockey", FIXTURE_ID)
        waited = loop.time() - started
        await first
    # The unrelated call waited out the pause too.
    assert waited >= 0.28
    assert [s.path for s in stub.seen].count(other) == 1


async def test_rate_limit_spaces_requests(stub: Stub) -> None:
    stub.add(PATH, fixture())
    async with Client(stub.url, token="t", rate_limit=20) as c:
        loop = asyncio.get_running_loop()
        started = loop.time()
        await asyncio.gather(*(c.fixtures.get("basketball", FIXTURE_ID) for _ in range(30)))
        elapsed = loop.time() - started
    # 20 may go at once (the bucket), the other 10 at 20 per second.
    assert elapsed >= 0.4
