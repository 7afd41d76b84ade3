"""The one walk of a mirror database's change log, in commit order: :func:`change_batches`.

The mirror's :func:`~asyncsports.sync.feed` decodes what it reads; the bus publisher
(:mod:`asyncsports.bus`) passes it on as stored.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from asyncsports.store._mirror import ChangeLog
from asyncsports.store._types import ChangeLine

__all__ = ["RECHECK", "change_batches"]

RECHECK = 10.0
"""Seconds a follower of a PostgreSQL feed waits for a NOTIFY before it looks anyway (a
connection cut without a word tells nothing)."""


async def change_batches(
    reader: ChangeLog,
    after: int,
    *,
    follow: bool,
    until: asyncio.Event | None = None,
    wake: asyncio.Event | None = None,
    limit: int = 500,
    idle: Callable[[], Awaitable[None]] | None = None,
    recheck: float | None = None,
) -> AsyncGenerator[list[ChangeLine], None]:
    """The lines of ``changes`` after ``after`` as stored, at most ``limit`` at a time,
    in commit order. ``follow=False`` ends at the last one committed, ``until`` once it
    is set and every change committed before has been given; ``wake`` set (by a writer
    in this process) looks again at once. ``idle`` is awaited after each wait that found
    nothing (waits of at most ``recheck`` seconds)."""
    while True:
        if wake is not None:
            wake.clear()  # before the read: a commit during it sets it again
        lines = await reader.change_rows(after, limit)
        if lines:
            yield lines
            after = lines[-1].seq
            continue
        if not follow or (until is not None and until.is_set()):
            return
        await _wait(reader, RECHECK if recheck is None else recheck, until, wake)
        if idle is not None:
            await idle()


async def _wait(reader: ChangeLog, at_most: float, *events: asyncio.Event | None) -> None:
    """Until the store says changes may be there (``at_most`` seconds), or one of
    ``events`` is set."""
    waits: list[asyncio.Future[Any]] = [asyncio.ensure_future(reader.wait(at_most))]
    waits += [asyncio.ensure_future(e.wait()) for e in events if e is not None]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for w in waits:
            w.cancel()
        # The reader's connection is free again only once its wait has unwound.
        await asyncio.gather(*waits, return_exceptions=True)
