"""Waiting for a condition itself, with a bound, instead of sleeping and hoping."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable

import anyio


async def until(
    condition: Callable[[], object | Awaitable[object]], within: float = 10, every: float = 0.01
) -> None:
    """Return once ``condition()`` (awaited, if it is a coroutine) is true, looking every
    ``every`` seconds; fail (a ``TimeoutError``) after ``within`` seconds."""
    with anyio.fail_after(within):
        while True:
            met = condition()
            if inspect.isawaitable(met):
                met = await met
            if met:
                return
            await anyio.sleep(every)  # state no event tells of: a server's, a process's
