"""Plain aiohttp access to an emulator: no client involved."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp
import msgspec

from asyncsports.emulator import Emulator

ACCEPT = "application/vnd.imggaming.dde.api+json;version=1"
Params = Mapping[str, str] | Sequence[tuple[str, str]] | None


@dataclass
class Resp:
    """A response read whole."""

    status: int
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        return msgspec.json.decode(self.body)


class Api:
    """GETs against one emulator with the data service's headers (or without them)."""

    def __init__(self, emu: Emulator, session: aiohttp.ClientSession) -> None:
        self.emu = emu
        self.session = session

    def headers(self) -> dict[str, str]:
        return {"Accept": ACCEPT, "Authorization": f"Bearer {self.emu.token}"}

    async def get(
        self, path: str, params: Params = None, *, headers: Mapping[str, str] | None = None
    ) -> Resp:
        """GET ``path`` on the base URL (``/streaming/...`` paths included)."""
        hdrs = self.headers() if headers is None else dict(headers)
        async with self.session.get(
            self.emu.base_url + path, params=params, headers=hdrs, skip_auto_headers=["Accept"]
        ) as r:
            return Resp(r.status, dict(r.headers), await r.read())

    async def json(self, path: str, params: Params = None) -> Any:
        """GET ``path`` expecting 200, decoded."""
        r = await self.get(path, params)
        assert r.status == 200, (path, r.status, r.body[:300])
        return r.json()

    async def events(self, params: Params = None, *, static: bool = False) -> Resp:
        """GET the events listing with valid credentials."""
        creds = self.emu.static_streaming_credentials if static else self.emu.streaming_credentials
        assert creds is not None
        extra = list(params.items()) if isinstance(params, Mapping) else list(params or [])
        return await self.get("/streaming/api/v2/streaming/events", creds.params() + extra)

    async def fixtures(self, sport: str = "basketball", params: Params = None) -> list[Any]:
        """The whole fixture list of a sport (bare array)."""
        prefix = "/v2" if sport == "volleyball" else ""
        body = await self.json(f"{prefix}/{sport}/fixtures", params)
        content: list[Any] = body["content"] if isinstance(body, dict) else body
        return content


# The emulator's live feeds (websockets), read with plain aiohttp ``ws_connect``.

QUOTED = msgspec.json.Decoder(float_hook=str)  # decimals as their text
WAIT = 3.0


class Feed:
    """One websocket feed read with plain aiohttp: packets, heartbeats, the close."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.raw: list[str] = []

    async def next(self, wait: float = WAIT) -> Any:
        """The next message decoded (decimals as text), or None at the close."""
        msg = await self.ws.receive(timeout=wait)
        if msg.type is not aiohttp.WSMsgType.TEXT:
            return None
        self.raw.append(msg.data)
        return QUOTED.decode(msg.data)

    async def packets(self, n: int | None = None, wait: float = WAIT) -> list[Any]:
        """Data packets (no heartbeats) until ``n`` of them or the close."""
        out: list[Any] = []
        while n is None or len(out) < n:
            m = await self.next(wait)
            if m is None:
                break
            if m.get("type") in ("heartbeat", "authorised"):
                continue
            out.append(m)
        return out


async def connect(
    emu: Emulator,
    session: aiohttp.ClientSession,
    path: str,
    *,
    token: str | None = None,
    ack: bool = True,
    **query: str | int,
) -> Feed:
    params = {k: str(v) for k, v in query.items()}
    ws = await session.ws_connect(emu.live_url + path, params=params)
    await ws.send_json({"authToken": emu.token if token is None else token})
    feed = Feed(ws)
    if ack:
        assert await feed.next() == {"type": "authorised"}
    return feed


async def fixture_id(api: Api, status: str, sport: str = "basketball") -> str:
    """A fixture of that status; for ``scheduled`` the last to start (no record sent yet)."""
    query = {"status": status}
    if status == "scheduled":
        query["sort"] = "startTime,desc"
    fixtures = await api.fixtures(sport, query)
    assert fixtures
    return str(fixtures[0]["id"])


async def rest_actions(api: Api, sport: str, fid: str) -> list[Any]:
    prefix = "/v2" if sport == "volleyball" else ""
    r = await api.get(f"{prefix}/{sport}/fixtures/{fid}/actions")
    assert r.status == 200
    records: list[Any] = QUOTED.decode(r.body)
    return records
