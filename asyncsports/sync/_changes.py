"""The mirror's change feed: every change committed to a mirror database, in commit order,
followed from any process (:func:`feed`, behind ``Mirror.changes`` and ``asyncsports changes``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

from asyncsports.store import CONNECT_TIMEOUT, ChangeLine, MirrorStore, RowChange, open_mirror
from asyncsports.store._mirror import as_change

__all__ = ["RECHECK", "batches", "feed"]

RECHECK = 10.0
"""Seconds a follower of a PostgreSQL feed waits for a NOTIFY before it looks anyway (a
connection cut without a word tells nothing)."""


async def feed(
    db: str | Path,
    after: int = 0,
    *,
    consumer: str | None = None,
    follow: bool = True,
    until: asyncio.Event | None = None,
    wake: asyncio.Event | None = None,
    connect_timeout: float = CONNECT_TIMEOUT,
) -> AsyncIterator[RowChange]:
    """Each change committed to the mirror database ``db`` (a path or a
    ``postgresql://`` URL) after ``after`` (or ``consumer``'s saved cursor), in commit
    order, at least once, on a connection of its own: from any process, while a mirror
    writes it or not. ``follow=False`` ends at the last one committed, ``until`` once it
    is set and every change committed before has been given. A PostgreSQL database wakes
    the follower at each commit (``LISTEN/NOTIFY``); a SQLite file is looked at every
    20th of a second, or when ``wake`` is set (by a writer in this process).

    A PostgreSQL database never reached within ``connect_timeout`` seconds is a
    :class:`~asyncsports.errors.SinkError`. A named ``consumer``'s cursor moves past a change when the next one is asked
    for (the consumer is done with it): one that restarts resumes from there.
    """
    reader = await open_mirror(db, connect_timeout=connect_timeout)
    ended = False
    try:
        if consumer is not None and after == 0:
            after = await reader.cursor(consumer)
        async for lines in batches(reader, after, follow=follow, until=until, wake=wake):
            for line in lines:
                yield as_change(*line)
                if consumer is not None:
                    await reader.save_cursor(consumer, line[0])
        ended = True
    finally:
        if ended:
            await reader.close()
        else:
            # Not awaited: a consumer that leaves its loop early leaves this generator
            # to the garbage collector, whose finalizer must not have to wait.
            reader.abort()


async def batches(
    reader: MirrorStore,
    after: int,
    *,
    follow: bool,
    until: asyncio.Event | None = None,
    wake: asyncio.Event | None = None,
    limit: int = 500,
    idle: Callable[[], Awaitable[None]] | None = None,
    recheck: float = RECHECK,
) -> AsyncGenerator[list[ChangeLine], None]:
    """The lines of ``changes`` after ``after`` as stored, at most ``limit`` at a time,
    in commit order: the one walk of a change log (:func:`feed` decodes them, a
    publisher passes them on). ``follow``, ``until`` and ``wake`` as :func:`feed` says;
    ``idle`` is awaited after each wait that found nothing (waits of at most
    ``recheck`` seconds)."""
    while True:
        if wake is not None:
            wake.clear()  # before the read: a commit during it sets it again
        lines = await reader.change_rows(after, limit)
        if lines:
            yield lines
            after = lines[-1][0]
            continue
        if not follow or (until is not None and until.is_set()):
            return
        await _wait(reader, recheck, until, wake)
        if idle is not None:
            await idle()


async def _wait(reader: MirrorStore, at_most: float, *events: asyncio.Event | None) -> None:
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
