"""The transport seam: the session reaches the network through its Transport only, the one
`Client(transport=...)` makes from its settings."""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest
from support.live import fixture_id
from support.wrapping import Wrapping

import asyncsports.transports
from asyncsports import Client
from asyncsports.emulator import Emulator
from asyncsports.errors import TransportError
from asyncsports.transports import (
    Listener,
    Pushed,
    Reply,
    Settings,
    Transport,
)

HTTP = Path(__file__).parents[2] / "asyncsports" / "_http"


class Recording(Wrapping):
    """A second transport written as a module would write one: aiohttp's, with a log."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(settings)
        self.sent: list[tuple[str, bool]] = []
        self.connected: list[str] = []

    async def send(self, url: str, headers: Mapping[str, str], whole: bool) -> Reply:
        self.sent.append((url, whole))
        return await self.inner.send(url, headers, whole)

    async def listen(
        self, url: str, headers: Mapping[str, str] | None, max_size: int, listener: Listener
    ) -> Pushed:
        self.connected.append(url)
        return await self.inner.listen(url, headers, max_size, listener)


def _recording() -> tuple[list[Recording], Callable[[Settings], Transport]]:
    """A factory for ``Client(transport=...)``, and the transports it made."""
    made: list[Recording] = []

    def factory(settings: Settings) -> Transport:
        made.append(Recording(settings))
        return made[-1]  # the protocol, checked by mypy

    return made, factory


async def test_requests_bodies_and_websockets_all_go_through_the_transport() -> None:
    made, factory = _recording()
    async with Emulator() as emu:
        client = emu.client(transport=factory)
        [rec] = made
        assert rec.settings is client.settings
        async with client:
            fid = await fixture_id(client, "completed")
            actions = await client.actions.list("basketball", fid).collect()
            async with client.live.actions("basketball", fid, replay="fast") as feed:
                live = [a async for a in feed]
            assert client.connections_in_use() == rec.in_use() == 0
        assert not rec.is_open and not client.is_open
        base, live_url = emu.base_url, emu.live_url
    assert len(live) == len(actions) > 0
    # Every request on the wire (the websocket's too) was one of the transport's.
    assert len(rec.sent) + len(rec.connected) == client.requests_sent
    # The actions listing is the one body read as it arrives; the pages are read whole.
    streamed = [url for url, whole in rec.sent if not whole]
    assert streamed == [f"{base}/basketball/fixtures/{fid}/actions"]
    assert all(url.startswith(base) for url, _ in rec.sent)
    assert len(rec.connected) == 1 and rec.connected[0].startswith(live_url)


async def test_a_failed_send_is_sorted_by_the_transport() -> None:
    made, factory = _recording()
    client = Client("http://127.0.0.1:9", token="t", max_retries=0, transport=factory)
    [rec] = made
    async with client:
        with pytest.raises(TransportError, match="connection failed: ClientConnectorError"):
            await client.fixtures.get("basketball", "00000000-0000-0000-0000-000000000001")
    assert len(rec.sent) == 1 and client.requests_sent == 1


def test_a_transport_class_is_its_own_factory() -> None:
    client = Client("http://127.0.0.1:9", token="t", transport=Recording)
    assert isinstance(client._session.transport, Recording)


def test_the_seam_is_public_in_one_module() -> None:
    assert set(asyncsports.transports.__all__) == {
        "AiohttpTransport",
        "Body",
        "Handshake",
        "Kind",
        "Listener",
        "Pushed",
        "Reply",
        "Settings",
        "Transport",
    }
    assert asyncsports.transports.Settings is type(Client("http://h", token="t").settings)


@pytest.mark.parametrize("name", ["session.py", "bodies.py", "live.py", "transports/base.py"])
def test_the_session_imports_no_http_client(name: str) -> None:
    tree = ast.parse((HTTP / name).read_text())
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {
        (node.module or "").split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
    }
    assert imported.isdisjoint({"aiohttp", "httpx", "pyreqwest"}), imported
