"""A server that drips its answer a byte at a time is bounded as a whole (issue 29, point 2).

aiohttp's read timeout restarts with every byte, so a drip slower than nothing but faster
than ``Timeout.read`` would hold a request for as long as the server likes: these servers
are raw asyncio ones, for control of every byte and of the pace.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import msgspec
import pytest
from support.samples import fixture

from asyncsports import Client, RetryPolicy, Timeout
from asyncsports._http.headwait import HeadersTimeout, HeaderWatch
from asyncsports.errors import TimeoutError as LibraryTimeout

FID = "6a0b2c1e-0f6e-4c1a-9a51-7f3a0f8d1c11"
GAP = 0.02  # between two bytes: far inside every read timeout below
GUARD = 10.0  # a hang fails here, not at pytest's timeout

Handle = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@contextlib.asynccontextmanager
async def raw(handle: Handle) -> AsyncIterator[str]:
    """A loopback server running ``handle`` per connection; its base URL."""
    tasks: set[asyncio.Task[None]] = set()

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        tasks.add(task)
        try:
            await handle(reader, writer)
        except ConnectionError:
            pass  # the client hung up mid-drip: what these tests want
        finally:
            writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.close()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()


async def drip(writer: asyncio.StreamWriter, data: bytes) -> None:
    for i in range(len(data)):
        writer.write(data[i : i + 1])
        await writer.drain()  # raises once the client has hung up
        await asyncio.sleep(GAP)


BODY = msgspec.json.encode(fixture())


def head(length: int) -> bytes:
    """A status line and headers, padded to take seconds when dripped."""
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + b"X-Padding: "
        + b"x" * 200
        + b"\r\nContent-Length: "
        + str(length).encode()
        + b"\r\n\r\n"
    )


async def timed_out(client: Client) -> tuple[LibraryTimeout, float]:
    """The TimeoutError a ``fixtures.get`` ends in, and how long it took (GUARD at most)."""
    started = time.monotonic()
    async with asyncio.timeout(GUARD):
        with pytest.raises(LibraryTimeout) as caught:
            await client.fixtures.get("soccer", FID)
    return caught.value, time.monotonic() - started


async def test_headers_that_drip_end_within_connect_plus_read() -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        await drip(writer, head(len(BODY)))  # about 5 s, a byte every 20 ms

    timeout = Timeout(connect=0.2, read=0.3)
    async with raw(handle) as url, Client(url, token="t", timeout=timeout, max_retries=0) as c:
        error, elapsed = await timed_out(c)
        assert c.connections_in_use() == 0
    text = str(error)
    assert "headers" in text and "Timeout.connect + Timeout.read = 0.5s" in text, text
    assert f"/soccer/fixtures/{FID}" in text and error.attempts == 1
    # Never before the read timeout; within connect + read, with room for a loaded machine.
    assert 0.3 <= elapsed < 0.5 + 0.5, elapsed


async def test_headers_that_drip_are_retried_like_a_read_timeout() -> None:
    served = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal served
        served += 1
        await reader.readuntil(b"\r\n\r\n")
        if served == 1:
            await drip(writer, head(len(BODY)))
        else:
            writer.write(head(len(BODY)) + BODY)
            await writer.drain()
            await reader.read()  # keep-alive: until the client closes

    timeout = Timeout(connect=0.2, read=0.3)
    retry = RetryPolicy(max_retries=2, base=0, cap=0)
    async with raw(handle) as url, Client(url, token="t", timeout=timeout, retry=retry) as c:
        started = time.monotonic()
        async with asyncio.timeout(GUARD):
            got = await c.fixtures.get("soccer", FID)
        elapsed = time.monotonic() - started
        assert str(got.id) == str(fixture()["id"])
        assert served == c.requests_sent == 2
    assert elapsed < 0.5 + 0.5, elapsed  # the drip was cut off, not waited out


async def test_headers_slower_than_a_byte_at_a_time_but_within_read_pass() -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        whole = head(len(BODY))
        await drip(writer, whole[:10])  # about 0.2 s, then the rest at once
        writer.write(whole[10:] + BODY)
        await writer.drain()
        await reader.read()

    timeout = Timeout(connect=0.1, read=1.0)  # looks every 50 ms: many see the drip
    async with raw(handle) as url, Client(url, token="t", timeout=timeout, max_retries=0) as c:
        async with asyncio.timeout(GUARD):
            got = await c.fixtures.get("soccer", FID)
    assert str(got.id) == str(fixture()["id"])


class Proto:
    """What the watch reads of an aiohttp protocol."""

    def __init__(self) -> None:
        self._waiter: object | None = object()  # waiting for its headers
        self._parser = object()  # one per request
        self.error: BaseException | None = None

    def set_exception(self, exc: BaseException) -> None:
        self.error = exc


class Pool:
    def __init__(self) -> None:
        self._acquired: set[Proto] = set()


async def test_the_watch_ends_one_wait_seen_for_read_and_sleeps_when_idle() -> None:
    # The looks driven by hand (no timer): read 0.3 s at a look every 0.1 s is 3 gaps.
    pool, slow, quick = Pool(), Proto(), Proto()
    watch = HeaderWatch(pool, read=0.3, connect=0.2)  # type: ignore[arg-type]
    assert (watch.every, watch.ticks, watch.bound) == (0.1, 3, 0.5)
    watch.wake()
    pool._acquired |= {slow, quick}
    for _ in range(3):
        watch._look()
        quick._parser = object()  # its connection's next request: a new wait
    assert slow.error is None and quick.error is None
    watch._look()  # slow: 0.3 s between its first look and this one
    assert isinstance(slow.error, HeadersTimeout) and quick.error is None
    assert "Timeout.connect + Timeout.read = 0.5s" in str(slow.error)
    quick._waiter = None  # reading its body: not watched
    for _ in range(5):
        watch._look()
    assert quick.error is None and not watch.asleep
    pool._acquired.clear()
    watch._look()
    assert not watch.asleep  # one idle look: still looking
    watch._look()
    assert watch.asleep and watch._handle is None  # no timer held by an idle client
    watch.wake()
    assert not watch.asleep and watch._handle is not None
    watch.stop()
    assert watch._handle is None and not watch.asleep  # never woken again


def test_without_a_connect_timeout_the_bound_is_one_and_a_half_reads() -> None:
    watch = HeaderWatch(Pool(), read=30, connect=None)  # type: ignore[arg-type]
    assert (watch.every, watch.ticks, watch.bound) == (15, 2, 45)
    assert "1.5 x Timeout.read = 45s" in watch.text
    default = HeaderWatch(Pool(), read=30, connect=10)  # type: ignore[arg-type]
    assert (default.every, default.ticks, default.bound) == (5, 6, 40)


async def test_a_whole_body_that_drips_ends_within_timeout_body() -> None:
    # Timeout.body alone (no min_rate): checked as each piece arrives, so a drip ends at
    # the first byte past the bound.
    body = b" " * 1000

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(head(len(body)))
        await drip(writer, body)  # about 20 s

    timeout = Timeout(connect=0.2, read=0.3, body=0.4, min_rate=None)
    async with raw(handle) as url, Client(url, token="t", timeout=timeout, max_retries=0) as c:
        error, elapsed = await timed_out(c)
        assert c.connections_in_use() == 0
    assert "Timeout.body=0.4s" in str(error), error
    assert 0.4 <= elapsed < 0.4 + 0.5, elapsed
