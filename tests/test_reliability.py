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
from asyncsports.errors import APIError, ServerError, TransportError

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


async def test_a_redirect_is_an_error_that_is_not_followed_and_leaks_no_secret(
    stub: Stub, caplog: pytest.LogCaptureFixture
) -> None:
    loop_url = f"{stub.url}/api/v2/streaming/events?auth=SUPERSECRET"
    stub.add("/api/v2/streaming/events", Reply(status=302, text="", headers={"Location": loop_url}))
    creds = StreamingCredentials(7, "SUPERSECRET", 1)
    with caplog.at_level(logging.DEBUG, logger="asyncsports"):
        async with Client(stub.url, streaming_url=stub.url, streaming_credentials=creds) as c:
            with pytest.raises(APIError) as info:
                await c.events.list().collect()
    assert info.value.status == 302
    assert len(stub.seen) == 1
    assert "SUPERSECRET" not in str(info.value) + caplog.text


async def test_a_rate_limit_below_one_per_second_works(stub: Stub) -> None:
    stub.add(PATH, fixture())
    async with Client(stub.url, token="t", rate_limit=0.5) as c:
        assert (await c.fixtures.get("basketball", FIXTURE_ID)).name


async def drip_server(chunks: int, pause: float) -> TestServer:
    """A fixture body sent a byte at a time, ``pause`` apart."""
    body = b'{"id": "6a0b2c1e-0f6e-4c1a-9a51-7f3a0f8d1c11", "name": "' + b"x" * chunks + b'"}'

    async def handle(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        resp.content_length = len(body)
        await resp.prepare(request)
        for i in range(len(body)):
            await resp.write(body[i : i + 1])
            await asyncio.sleep(pause)
        return resp

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    return server


async def test_the_total_deadline_covers_reading_the_body() -> None:
    server = await drip_server(100, 0.05)  # about 8 s to send, never idle for a read timeout
    try:
        async with Client(str(server.make_url("")), token="t", timeout=Timeout(total=0.5)) as c:
            loop = asyncio.get_running_loop()
            started = loop.time()
            with pytest.raises(TransportError, match=r"timed out \(Timeout.total\)"):
                await c.fixtures.get("basketball", FIXTURE_ID)
            assert loop.time() - started < 2
    finally:
        await server.close()


async def test_retries_are_one_budget_across_bodies_that_break(stub: Stub) -> None:
    class Flaky:
        served = 0

        async def handle(self, request: web.Request) -> web.StreamResponse:
            self.served += 1
            if self.served % 2:
                return web.Response(status=503, text="busy")
            resp = web.StreamResponse()
            resp.content_length = 1000
            await resp.prepare(request)
            await resp.write(b'{"id": ')
            assert request.transport is not None
            request.transport.close()
            return resp

    flaky = Flaky()
    app = web.Application()
    app.router.add_get("/{tail:.*}", flaky.handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        retry = RetryPolicy(max_retries=3, base=0, cap=0)
        async with Client(str(server.make_url("")), token="t", retry=retry) as c:
            with pytest.raises(TransportError) as info:
                await c.fixtures.get("basketball", FIXTURE_ID)
    finally:
        await server.close()
    assert flaky.served == 4  # the first attempt and three retries, whatever failed
    assert info.value.attempts == 4


async def test_a_token_callable_is_asked_once_by_many_concurrent_calls(stub: Stub) -> None:
    asked = 0

    async def token() -> str:
        nonlocal asked
        asked += 1
        await asyncio.sleep(0.01)
        return f"t{asked}"

    stub.add(PATH, fixture())
    async with Client(stub.url, token=token) as c:
        await asyncio.gather(*(c.fixtures.get("basketball", FIXTURE_ID) for _ in range(50)))
    assert asked == 1


async def test_many_401s_with_one_stale_token_refresh_it_once(stub: Stub) -> None:
    asked = 0

    def token() -> str:
        nonlocal asked
        asked += 1
        return f"t{asked}"

    async def handle(request: web.Request) -> web.Response:
        if request.headers["Authorization"] == "Bearer t1":
            await asyncio.sleep(0.05)  # all 50 are refused with the same stale token
            return web.json_response({"error": "expired"}, status=401)
        return web.json_response(fixture())

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    try:
        async with Client(str(server.make_url("")), token=token) as c:
            await asyncio.gather(*(c.fixtures.get("basketball", FIXTURE_ID) for _ in range(50)))
    finally:
        await server.close()
    assert asked == 2
