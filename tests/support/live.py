"""What the live feed tests share: fixture ids, comparable records, open sockets and tasks."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import msgspec
from aiohttp import web

from asyncsports import Client
from asyncsports.emulator import Emulator
from asyncsports.live import Feed, merge

HEARTBEAT = 0.2
QUOTED = msgspec.json.Decoder(float_hook=str)  # decimals as their text, quoted or not


async def fixture_id(client: Client, status: str, sport: str = "basketball") -> uuid.UUID:
    """A fixture of that status (for ``scheduled``, the last one to start)."""
    sort = "startTime,desc" if status == "scheduled" else None
    async for f in client.fixtures.list(sport, status=status, sort=sort):
        return f.id
    raise AssertionError(f"no {status} {sport} fixture")


def plain(records: list[Any], seq: bool = True) -> list[Any]:
    """Action records comparable across feeds: the metadata decoded (a live packet quotes
    its decimals, so its raw bytes differ), and without fixtureSeqNum unless ``seq`` (it
    counts a connection's packets)."""
    out = []
    for a in records:
        fa = a.fixture_action
        bare = msgspec.structs.replace(
            fa, _metadata=msgspec.Raw(), fixture_seq_num=fa.fixture_seq_num if seq else 0
        )
        typed = fa.metadata if fa.metadata_type is not None else None  # decodes, quoted or not
        raw = QUOTED.decode(bytes(fa._metadata)) if bytes(fa._metadata) else None
        out.append((msgspec.structs.replace(a, fixture_action=bare), typed, raw))
    return out


def unseq(records: list[Any]) -> list[Any]:
    return plain(records, seq=False)


def client_tasks() -> set[asyncio.Task[Any]]:
    """Tasks of this side: not the emulator's (its server's request handlers)."""
    out = set()
    for t in asyncio.all_tasks():
        code = getattr(t.get_coro(), "cr_code", None)
        where = code.co_filename if code is not None else ""
        # The recording's writer (a client's with record=) ends once it has written what
        # the close left pending: the file's, not a socket's.
        own = "web_protocol" not in where and "emulator" not in where
        if not t.done() and own and not where.endswith("_http/transports/record.py"):
            out.add(t)
    return out


async def closed(emu: Emulator) -> None:
    """Wait until the emulator has no live socket open (it saw every close)."""
    for _ in range(200):
        if not emu._live.sockets:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{len(emu._live.sockets)} live sockets still open")


WAY = ["feed"]
"""How :func:`records` reads a feed: set per test by the fixture ``way``."""


async def records(feed: Feed[Any]) -> list[Any]:
    """Every record of ``feed``: iterated (``WAY`` ``feed``), or ``merged``, through a
    merge of it alone, which reads it the pushed way (a callback a message)."""
    if WAY[0] != "merged":
        async with feed:
            return [r async for r in feed]
    async with merge(feed) as m:
        return [r async for _, r in m]


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@contextlib.asynccontextmanager
async def serve(handler: Handler, path: str) -> AsyncIterator[str]:
    """``handler`` at ``path`` on a loopback port: yields the server's ``http://`` origin."""
    app = web.Application()
    app.router.add_get(path, handler)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()
