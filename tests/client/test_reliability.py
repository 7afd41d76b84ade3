"""The session under load, cancellation, deadlines and logging, over loopback.

No test here sleeps to let something happen first or bounds how long a call took: the
servers set events or count what they saw, the client's hooks say what it did, and
``asyncio.timeout`` only turns a hang into a failure.
"""

from __future__ import annotations

import asyncio
import logging

import pytest
from aiohttp import web
from support.samples import FIXTURE_ID, fixture
from support.stub import Reply, Serve, Stub

from asyncsports import Client, RequestInfo, RetryPolicy, StreamingCredentials, Timeout
from asyncsports.errors import APIError, ServerError, TimeoutError, TransportError

PATH = f"/basketball/fixtures/{FIXTURE_ID}"
HANG = 10.0
"""A guard: a test still waiting after this long has hung."""


async def never_answer(request: web.Request) -> web.Response:
    """A server that is slow on purpose: it never answers (closing it cancels the wait)."""
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


async def test_a_thousand_concurrent_calls_through_ten_connections(serve: Serve) -> None:
    active = peak_active = 0
    peers: set[object] = set()

    async def handle(request: web.Request) -> web.Response:
        nonlocal active, peak_active
        assert request.transport is not None
        peers.add(request.transport.get_extra_info("peername"))
        active += 1
        peak_active = max(peak_active, active)
        await asyncio.sleep(0.001)  # slow on purpose: calls overlap
        active -= 1
        return web.json_response(fixture())

    in_use: list[int] = []

    def on_response(info: RequestInfo) -> None:
        in_use.append(c.connections_in_use())

    c = Client(await serve(handle), token="t", max_connections=10, on_response=on_response)
    async with c:
        names = await asyncio.gather(
            *(c.fixtures.get("basketball", FIXTURE_ID) for _ in range(1000))
        )
        assert c.connections_in_use() == 0
    assert len(names) == 1000 and all(f.name for f in names)
    assert c.requests_sent == len(in_use) == 1000
    # Never more than ten connections at once, as the client and the server see it.
    assert max(in_use) <= 10
    assert 1 <= peak_active <= 10 and len(peers) <= 10


async def test_cancelling_a_caller_mid_request_releases_the_connection(serve: Serve) -> None:
    arrived = asyncio.Event()

    async def handle(request: web.Request) -> web.Response:
        arrived.set()
        return await never_answer(request)

    async with Client(await serve(handle), token="t") as c:
        task = asyncio.ensure_future(c.fixtures.get("basketball", FIXTURE_ID))
        async with asyncio.timeout(HANG):
            await arrived.wait()  # the request is at the server: its connection is held
        assert c.connections_in_use() == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert c.connections_in_use() == 0
        # Only the in-process server's own handler may still be running.
        others = asyncio.all_tasks() - {asyncio.current_task()}
        assert all("RequestHandler" in repr(t.get_coro()) for t in others)


async def test_a_deadline_bounds_all_attempts(serve: Serve) -> None:
    served = 0

    async def handle(request: web.Request) -> web.Response:
        nonlocal served
        served += 1
        return await never_answer(request)

    timeout = Timeout(read=0.2, total=0.5)
    retry = RetryPolicy(max_retries=10, base=0.01, cap=0.01)
    async with Client(await serve(handle), token="t", timeout=timeout, retry=retry) as c:
        with pytest.raises(TimeoutError, match="timed out") as info:
            async with asyncio.timeout(HANG):
                await c.fixtures.get("basketball", FIXTURE_ID)
    assert isinstance(info.value, TransportError)
    # Each attempt waits out the 0.2 s read timeout, so a 0.5 s deadline leaves room for
    # three at most, not the eleven that max_retries=10 would allow.
    assert served <= info.value.attempts <= 3
    assert c.requests_sent == info.value.attempts


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


class Retried(logging.Handler):
    """Sets ``event`` when the client logs that it will retry (it has decided, and paused)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.event = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("retrying"):
            self.event.set()


async def test_after_a_429_the_whole_client_waits(stub: Stub) -> None:
    other = f"/ice-hockey/fixtures/{FIXTURE_ID}"
    stub.add(PATH, Reply(status=429, text="", headers={"Retry-After": "0.3"}), fixture())
    stub.add(other, fixture())
    retried = Retried()
    logger = logging.getLogger("asyncsports")
    logger.addHandler(retried)
    try:
        async with Client(stub.url, token="t") as c, asyncio.timeout(HANG):
            loop = asyncio.get_running_loop()
            started = loop.time()
            first = asyncio.ensure_future(c.fixtures.get("basketball", FIXTURE_ID))
            await retried.event.wait()  # the 429 has arrived; the client is paused
            await c.fixtures.get("ice-hockey", FIXTURE_ID)
            waited = loop.time() - started
            await first
    finally:
        logger.removeHandler(retried)
    # The unrelated call waited out the pause too (at least the Retry-After).
    assert waited >= 0.28
    assert [s.path for s in stub.seen] in ([PATH, PATH, other], [PATH, other, PATH])


async def test_rate_limit_spaces_requests(stub: Stub) -> None:
    stub.add(PATH, fixture())
    async with Client(stub.url, token="t", rate_limit=20) as c:
        loop = asyncio.get_running_loop()
        started = loop.time()
        await asyncio.gather(*(c.fixtures.get("basketball", FIXTURE_ID) for _ in range(10)))
        elapsed = loop.time() - started
    # No burst: the tenth goes at least 9/20 s after the first (tests/client/test_ratelimit.py
    # counts at the server).
    assert elapsed >= 0.45


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


@pytest.mark.slow
async def test_a_rate_limit_below_one_per_second_works(stub: Stub) -> None:
    stub.add(PATH, fixture())
    sent: list[float] = []
    loop = asyncio.get_running_loop()
    on_request = lambda info: sent.append(loop.time())  # noqa: E731
    async with Client(stub.url, token="t", rate_limit=0.8, on_request=on_request) as c:
        got = await asyncio.gather(*(c.fixtures.get("basketball", FIXTURE_ID) for _ in range(2)))
    assert all(f.name for f in got) and len(stub.seen) == 2
    # One request every 1.25 s: the second waited its turn, and no longer than a turn more.
    assert 1.2 <= sent[1] - sent[0] < 2.5


class Drip:
    """A fixture body sent a byte at a time, ``pause`` apart: slow on purpose, never idle."""

    def __init__(self, chunks: int, pause: float) -> None:
        self.body = b'{"id": "6a0b2c1e-0f6e-4c1a-9a51-7f3a0f8d1c11", "name": "'
        self.body += b"x" * chunks + b'"}'
        self.pause = pause
        self.served = self.sent = 0

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.served += 1
        resp = web.StreamResponse()
        resp.content_length = len(self.body)
        await resp.prepare(request)
        for i in range(len(self.body)):
            await resp.write(self.body[i : i + 1])
            self.sent += 1
            await asyncio.sleep(self.pause)
        return resp


async def test_the_total_deadline_covers_reading_the_body(serve: Serve) -> None:
    drip = Drip(100, 0.05)  # about 8 s to send, never idle for a read timeout
    async with Client(await serve(drip.handle), token="t", timeout=Timeout(total=0.5)) as c:
        with pytest.raises(TimeoutError, match=r"timed out \(Timeout.total\)") as info:
            async with asyncio.timeout(HANG):
                await c.fixtures.get("basketball", FIXTURE_ID)
    # One attempt, cut off midway through its body; no retry once the deadline passed.
    assert info.value.attempts == drip.served == 1
    assert 0 < drip.sent < len(drip.body)


async def test_retries_are_one_budget_across_bodies_that_break(serve: Serve) -> None:
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
    retry = RetryPolicy(max_retries=3, base=0, cap=0)
    async with Client(await serve(flaky.handle), token="t", retry=retry) as c:
        with pytest.raises(TransportError) as info:
            await c.fixtures.get("basketball", FIXTURE_ID)
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


async def test_many_401s_with_one_stale_token_refresh_it_once(serve: Serve) -> None:
    asked = stale = 0
    all_stale = asyncio.Event()

    def token() -> str:
        nonlocal asked
        asked += 1
        return f"t{asked}"

    async def handle(request: web.Request) -> web.Response:
        nonlocal stale
        if request.headers["Authorization"] == "Bearer t1":
            # No 401 leaves before all 50 calls have been refused with the same stale token.
            stale += 1
            if stale == 50:
                all_stale.set()
            await all_stale.wait()
            return web.json_response({"error": "expired"}, status=401)
        return web.json_response(fixture())

    async with Client(await serve(handle), token=token) as c, asyncio.timeout(HANG):
        await asyncio.gather(*(c.fixtures.get("basketball", FIXTURE_ID) for _ in range(50)))
    assert stale == 50 and asked == 2
