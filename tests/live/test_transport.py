"""The transport seam: the session reaches the network through its Transport only."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from support.live import fixture_id

from asyncsports import Client
from asyncsports._http.transport import AiohttpTransport, Kind, Listener, Pushed, Reply, Transport
from asyncsports.emulator import Emulator
from asyncsports.errors import TransportError

HTTP = Path(__file__).parents[2] / "asyncsports" / "_http"


class Recording:
    """A second transport written as a module would write one: aiohttp's, with a log."""

    def __init__(self, inner: AiohttpTransport) -> None:
        self.inner = inner
        self.errors = inner.errors
        self.sent: list[tuple[str, bool]] = []
        self.connected: list[str] = []

    @property
    def is_open(self) -> bool:
        return self.inner.is_open

    def open(self) -> None:
        self.inner.open()

    async def close(self) -> None:
        await self.inner.close()

    def in_use(self) -> int:
        return self.inner.in_use()

    async def send(self, url: str, headers: Mapping[str, str], whole: bool) -> Reply:
        self.sent.append((url, whole))
        return await self.inner.send(url, headers, whole)

    def failure(self, exc: BaseException) -> tuple[Kind, str]:
        return self.inner.failure(exc)

    async def listen(
        self, url: str, headers: Mapping[str, str] | None, max_size: int, listener: Listener
    ) -> Pushed:
        self.connected.append(url)
        return await self.inner.listen(url, headers, max_size, listener)

    def abort(self, ws: Pushed) -> Any:
        return self.inner.abort(ws)


def _recording(client: Client) -> Recording:
    # No public way to choose a transport yet (a later step): the session's own.
    session = client._session
    rec = Recording(AiohttpTransport(client.settings))
    checked: Transport = rec  # the protocol, checked by mypy
    session.transport = checked
    return rec


async def test_requests_bodies_and_websockets_all_go_through_the_transport(
    sports_emulator: Emulator,
) -> None:
    client = sports_emulator.client()
    rec = _recording(client)
    async with client:
        fid = await fixture_id(client, "completed")
        actions = await client.actions.list("basketball", fid).collect()
        async with client.live.actions("basketball", fid, speed="fast") as feed:
            live = [a async for a in feed]
        assert client.connections_in_use() == rec.in_use() == 0
    assert not rec.is_open and not client.is_open
    base, live_url = sports_emulator.base_url, sports_emulator.live_url
    assert len(live) == len(actions) > 0
    # Every request on the wire (the websocket's too) was one of the transport's.
    assert len(rec.sent) + len(rec.connected) == client.requests_sent
    # The actions listing is the one body read as it arrives; the pages are read whole.
    streamed = [url for url, whole in rec.sent if not whole]
    assert streamed == [f"{base}/basketball/fixtures/{fid}/actions"]
    assert all(url.startswith(base) for url, _ in rec.sent)
    assert len(rec.connected) == 1 and rec.connected[0].startswith(live_url)


async def test_a_failed_send_is_sorted_by_the_transport() -> None:
    client = Client("http://127.0.0.1:9", token="t", max_retries=0)
    rec = _recording(client)
    async with client:
        with pytest.raises(TransportError, match="connection failed: ClientConnectorError"):
            await client.fixtures.get("basketball", "00000000-0000-0000-0000-000000000001")
    assert len(rec.sent) == 1 and client.requests_sent == 1


@pytest.mark.parametrize("name", ["session.py", "bodies.py", "live.py"])
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
