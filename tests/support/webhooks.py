"""A webhook receiver for the tests of ``changes --to https://...``: real HTTP on loopback.

:class:`Receiver` is an aiohttp server that checks each request's signature with the
``standardwebhooks`` package (an implementation of the specification that is not ours),
keeps every attempt and every change it took (2xx), and answers as the test says
(:attr:`Receiver.answer`: a 500, a 400, an answer slower than the sender waits). It can
be taken down and brought back on the same port.
"""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web
from standardwebhooks import Webhook, WebhookVerificationError

from asyncsports._wire.bus import message, origin
from asyncsports.store import open_mirror

SECRET = "whsec_" + base64.b64encode(bytes(range(7, 39))).decode()
"""The tests' webhook secret (32 bytes)."""

Answer = Callable[[int, str, bytes], Awaitable[web.StreamResponse | None]]
"""What a test answers to attempt number n (from 1) of the change with this webhook-id
and body; None: take it (204)."""


@dataclass(frozen=True)
class Try:
    """One request as the receiver got it."""

    at: float  # time.monotonic()
    id: str
    body: bytes
    headers: dict[str, str]
    peer: object = None  # the sender's address and port: its connection


class Receiver:
    """A Standard Webhooks receiver on 127.0.0.1 (port chosen at the first start)."""

    def __init__(self, secret: str = SECRET) -> None:
        self.hook = Webhook(secret)
        self.tries: list[Try] = []
        self.taken: list[tuple[str, bytes]] = []  # (webhook-id, body) of each 2xx
        self.bad: list[str] = []  # what failed to verify
        self.answer: Answer | None = None
        self.in_flight = 0
        self.most = 0  # requests in flight at once, at most
        self.port = 0
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook"

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        headers = dict(request.headers)
        try:
            self.hook.verify(body, headers)
        except WebhookVerificationError as exc:
            self.bad.append(f"{headers.get('webhook-id')}: {exc}")
        hid = headers.get("webhook-id", "")
        peer = request.transport.get_extra_info("peername") if request.transport else None
        self.tries.append(Try(time.monotonic(), hid, body, headers, peer))
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            if self.answer is not None:
                got = await self.answer(len(self.tries), hid, body)
                if got is not None:
                    return got
            self.taken.append((hid, body))
            return web.Response(status=204)
        finally:
            self.in_flight -= 1

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/hook", self.handle)
        runner = web.AppRunner(app, handle_signals=False, shutdown_timeout=0.1)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", self.port)
        await site.start()
        self._runner = runner
        self.port = runner.addresses[0][1]

    async def stop(self) -> None:
        """Down: connections refused until :meth:`start`."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def first(self) -> list[str]:
        """The ids taken, each once, in the order first taken; every copy of one had the
        same body."""
        bodies: dict[str, bytes] = {}
        for hid, body in self.taken:
            assert bodies.setdefault(hid, body) == body, f"{hid} taken with two bodies"
        return list(bodies)


async def feed(db: str) -> list[tuple[str, bytes]]:
    """Every change of the mirror database ``db`` as a webhook: (webhook-id, body)."""
    store = await open_mirror(db)
    try:
        lines = await store.change_rows(0, 10**9)
    finally:
        await store.close()
    if not lines:
        return []
    source = origin(lines[0].committed_at)
    return [(f"{source}:{line.seq}", message(*line).body) for line in lines]


async def slow(seconds: float) -> web.StreamResponse:
    """A 200 after ``seconds``."""
    await asyncio.sleep(seconds)
    return web.Response(status=200)
