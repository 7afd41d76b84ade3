"""aiohttp's transport wrapped as a user's module would wrap it: every call passed on to
it, for a test's transport to override the calls it watches or changes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from asyncsports.transports import AiohttpTransport, Kind, Listener, Pushed, Reply, Settings


class Wrapping:
    """A transport (the public ``Transport`` protocol) that passes each call to aiohttp's."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        inner = self.inner = AiohttpTransport(settings)
        self.errors = inner.errors

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
        return await self.inner.send(url, headers, whole)

    def failure(self, exc: BaseException) -> tuple[Kind, str]:
        return self.inner.failure(exc)

    async def listen(
        self, url: str, headers: Mapping[str, str] | None, max_size: int, listener: Listener
    ) -> Pushed:
        return await self.inner.listen(url, headers, max_size, listener)

    def abort(self, ws: Pushed) -> Any:
        return self.inner.abort(ws)
