"""The pyreqwest transport (asyncsports/_http/transports/pyreqwest.py) against aiohttp's: same records,
same retries, same errors. Skipped without pyreqwest (the ``bench`` extra)."""

from __future__ import annotations

import gzip
import socket
import sys
from collections.abc import Callable
from typing import Any

import pytest
from aiohttp import web
from support.stub import Serve

from asyncsports import Client, RetryPolicy
from asyncsports._http.config import Settings
from asyncsports._http.transports.aiohttp import AiohttpTransport
from asyncsports._http.transports.base import Transport
from asyncsports.emulator import Emulator
from asyncsports.errors import (
    APIError,
    BodyTooLargeError,
    MissingDependencyError,
    TransportError,
)

pytest.importorskip("pyreqwest")

from asyncsports._http.transports.pyreqwest import PyreqwestTransport

Factory = Callable[[Settings], Transport]
BOTH: list[Any] = [
    pytest.param(AiohttpTransport, id="aiohttp"),
    pytest.param(PyreqwestTransport, id="pyreqwest"),
]
FAST = RetryPolicy(max_retries=3, base=0, cap=0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.emulator(seed=3, fixtures_per_season=30)
async def test_a_walk_and_a_get_give_the_same_records_over_both(
    sports_emulator: Emulator,
) -> None:
    async with (
        sports_emulator.client() as a,
        sports_emulator.client(transport=PyreqwestTransport) as b,
    ):
        assert isinstance(b._session.transport, PyreqwestTransport)
        over_aiohttp = await a.fixtures.list("basketball", page_size=7).collect()
        over_pyreqwest = await b.fixtures.list("basketball", page_size=7).collect()
        assert len(over_aiohttp) > 14  # several pages
        assert over_pyreqwest == over_aiohttp
        one = over_aiohttp[3].id
        assert await b.fixtures.get("basketball", one) == await a.fixtures.get("basketball", one)
        assert b.connections_in_use() == 0
        assert b.server_time() is not None  # the Date header was read


async def test_a_live_feed_goes_through_the_inner_aiohttp_transport(
    sports_emulator: Emulator,
) -> None:
    async with (
        sports_emulator.client() as a,
        sports_emulator.client(transport=PyreqwestTransport) as b,
    ):
        (done, *_) = await a.fixtures.list("basketball", status="completed").collect()
        got = []
        for c in (a, b):
            async with c.live.actions("basketball", done.id, replay="fast") as feed:
                got.append([x async for x in feed])
            assert feed.finished and feed.connections == 1
        assert got[0] and got[1] == got[0]
    assert sports_emulator.requests["live.actions"] == 2


def test_without_pyreqwest_the_transport_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "pyreqwest", None)
    with pytest.raises(MissingDependencyError, match=r"its bench extra"):
        PyreqwestTransport(Settings(base_url="http://127.0.0.1:1"))


@pytest.mark.emulator(actions_per_fixture=2000)
@pytest.mark.parametrize("factory", BOTH)
async def test_a_streamed_timeline_that_breaks_off_is_resumed_the_same(
    sports_emulator: Emulator, factory: Factory
) -> None:
    async with (
        sports_emulator.client() as plain,
        sports_emulator.client(retry=FAST, transport=factory) as c,
    ):
        (done, *_) = await plain.fixtures.list("basketball", status="completed").collect()
        whole = await plain.actions.list("basketball", done.id).collect()
        fault = sports_emulator.faults.add("actions", reset=100_000, times=1)
        got = await c.actions.list("basketball", done.id).collect()
        assert fault.hits == 1 and c.retries == 1
        assert got == whole and len(whole) == 2000
        assert c.connections_in_use() == 0


@pytest.mark.parametrize("status", [429, 503])
@pytest.mark.parametrize("factory", BOTH)
async def test_a_429_or_503_is_retried_the_same(
    sports_emulator: Emulator, status: int, factory: Factory
) -> None:
    fault = sports_emulator.faults.add("fixtures", status=status, retry_after=0, times=2)
    async with sports_emulator.client(retry=FAST, transport=factory) as c:
        fixtures = await c.fixtures.list("basketball", page_size=5).collect()
        assert fixtures
        assert fault.hits == 2
        assert c.retries == 2
        assert c.connections_in_use() == 0


@pytest.mark.parametrize("factory", BOTH)
async def test_a_refused_connection_is_a_transport_error_after_retries(factory: Factory) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    retry = RetryPolicy(max_retries=1, base=0)
    async with Client(url, token="t", retry=retry, transport=factory) as c:
        with pytest.raises(TransportError) as info:
            await c.fixtures.get("basketball", "6a0b2c1e-0f6e-4c1a-9a51-7f3a0f8d1c11")
    assert info.value.attempts == 2  # broken, so retried: not final
    assert "connection failed" in str(info.value)
    assert "Bearer" not in str(info.value) and info.value.__cause__ is None


@pytest.mark.parametrize("factory", BOTH)
async def test_a_redirect_is_not_followed_and_a_bomb_is_refused_as_it_inflates(
    serve: Serve, factory: Factory
) -> None:
    inflated = b'{"pad": "' + b"0" * (8 << 20) + b'"}'
    packed = gzip.compress(inflated)
    seen: list[str] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        seen.append(request.path)
        if "soccer" in request.path:
            raise web.HTTPFound("/elsewhere")
        response = web.StreamResponse(headers={"Content-Encoding": "gzip"})
        response.content_length = len(packed)
        await response.prepare(request)
        await response.write(packed)
        await response.write_eof()
        return response

    url = await serve(handle)
    fid = "6a0b2c1e-0f6e-4c1a-9a51-7f3a0f8d1c11"
    async with Client(url, token="t", max_body_size=1 << 20, transport=factory) as c:
        with pytest.raises(APIError) as info:
            await c.fixtures.get("soccer", fid)
        assert info.value.status == 302
        with pytest.raises(BodyTooLargeError, match="decoded"):
            await c.fixtures.get("basketball", fid)
        assert c.connections_in_use() == 0
    assert "/elsewhere" not in seen and len(seen) == 2
