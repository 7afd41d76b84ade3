"""Hostile live servers, each a small aiohttp server on loopback (issue 20, point 6)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import uuid
from collections.abc import AsyncIterator

import pytest
from aiohttp import web
from support import live

from asyncsports import APIError, Client, RetryPolicy, TimeoutError, TransportError

FID = uuid.UUID(int=7)
PATH = f"/basketball/fixtures/{FID}/actions"
SECRET = "live-secret-token"

Handler = live.Handler


def serve(handler: Handler, path: str = PATH) -> contextlib.AbstractAsyncContextManager[str]:
    return live.serve(handler, path)


def client(url: str, retries: int = 0) -> Client:
    policy = RetryPolicy(max_retries=retries, base=0.01, cap=0.02)
    return Client(url, token=SECRET, live_url=url.replace("http", "ws", 1), retry=policy)


async def follow(c: Client, idle: float = 60.0) -> int:
    n = 0
    async with c.live.actions("basketball", FID, idle_timeout=idle) as feed:
        async for _ in feed:
            n += 1
    return n


# ---------------------------------------------------------------------- redirects


@pytest.mark.parametrize("status", [301, 302, 307, 308])
@pytest.mark.parametrize("scheme", ["ws", "http"])  # picows would follow ws, aiohttp http
async def test_a_redirected_handshake_is_refused_and_the_token_stays_home(
    status: int, scheme: str
) -> None:
    elsewhere: list[str] = []  # what the other host was sent
    asked = 0

    async def other(request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        async for msg in ws:
            elsewhere.append(msg.data)
            break  # a redirect followed fails at once: closed, not idle
        return ws

    async with serve(other) as other_url:

        async def redirect(request: web.Request) -> web.StreamResponse:
            nonlocal asked
            asked += 1
            target = other_url.replace("http", scheme, 1) + PATH + "?startPosition=0"
            return web.Response(status=status, headers={"Location": target})

        async with serve(redirect) as url, client(url, retries=3) as c:
            # Refused at the handshake: at once. A feed that waits is a bug: fail within
            # seconds, not after four idle timeouts.
            with pytest.raises(APIError) as info:
                async with asyncio.timeout(10):
                    await follow(c, idle=1.0)
    assert info.value.status == status
    text = str(info.value)
    assert "redirect" in text and "not followed" in text and "127.0.0.1" in text
    assert asked == 1 and elsewhere == []  # not retried, never followed
    assert SECRET not in text


# ---------------------------------------------------------------------- pings and stalls


@pytest.mark.slow
async def test_pings_every_20_ms_are_not_life() -> None:
    connections = 0

    async def pinger(request: web.Request) -> web.StreamResponse:
        nonlocal connections
        connections += 1
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        await ws.receive()  # the token
        with contextlib.suppress(ConnectionError, RuntimeError):
            while not ws.closed:
                await ws.ping(b"alive?")
                await asyncio.sleep(0.02)
        return ws

    loop = asyncio.get_running_loop()
    async with serve(pinger) as url, client(url, retries=2) as c:
        started = loop.time()
        with pytest.raises(TimeoutError, match="idle_timeout"):
            await follow(c, idle=1.0)
        elapsed = loop.time() - started
    assert connections == 3
    assert 3.0 <= elapsed < 3 * (1.0 + 1.0) + 1  # each stalled after 1 s, closed within 1 s


def _ping_frame(payload: bytes) -> bytes:
    return struct.pack("!BB", 0x89, len(payload)) + payload


@contextlib.asynccontextmanager
async def flood(reset_after: float | None = None) -> AsyncIterator[str]:
    """A server that upgrades, then floods pings and never reads: the client's pongs fill
    the buffers (its receive blocks answering one). ``reset_after``: then a TCP reset.
    Yields the URL."""

    async def handler(request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(autoping=False)
        await ws.prepare(request)
        transport = request.transport
        assert transport is not None
        sock = transport.get_extra_info("socket")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        transport.pause_reading()  # never reads: not the token, not a pong, not a close
        frame = _ping_frame(b"p" * 125) * 64
        loop = asyncio.get_running_loop()
        until = loop.time() + (reset_after if reset_after is not None else 30.0)
        while not transport.is_closing() and loop.time() < until:
            transport.write(frame)
            await asyncio.sleep(0.001)
        if reset_after is not None and not transport.is_closing():
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            transport.abort()  # a reset
        return ws

    async with serve(handler) as url:
        yield url


@pytest.mark.slow
async def test_a_stalled_socket_flooded_with_pings_is_closed_within_a_second() -> None:
    loop = asyncio.get_running_loop()
    async with flood() as url, client(url) as c:
        started = loop.time()
        with pytest.raises(TransportError) as info:
            await follow(c, idle=1.0)
        elapsed = loop.time() - started
    # Whichever bound comes first ends it: the idle timeout (pings are no message), or
    # the pongs it never reads piling up past 1 MiB (NotReading: first on a loaded
    # machine, where the flood outruns the idle second).
    if isinstance(info.value, TimeoutError):
        assert "idle_timeout" in str(info.value) and elapsed >= 1.0
    else:
        assert "NotReading" in str(info.value), info.value
    assert elapsed < 2.0 + 1.0  # a second more for a loaded machine (two CI legs at once)


@pytest.mark.parametrize("reset_after", [0.5, 1.5])
@pytest.mark.slow
async def test_a_reset_under_a_ping_flood_is_a_transport_error(reset_after: float) -> None:
    async with flood(reset_after=reset_after) as url, client(url) as c:
        with pytest.raises(TransportError) as info:
            await follow(c, idle=30.0)
    assert type(info.value) is TransportError and "1006" in str(info.value)
