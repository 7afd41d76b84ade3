"""The ``api`` fixture: plain aiohttp access to the ``sports_emulator`` fixture (asyncsports.testing.plugin)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest_asyncio
from support.api import Api

from asyncsports.emulator import Emulator


@pytest_asyncio.fixture
async def api(sports_emulator: Emulator) -> AsyncIterator[Api]:
    async with aiohttp.ClientSession() as session:
        yield Api(sports_emulator, session)
