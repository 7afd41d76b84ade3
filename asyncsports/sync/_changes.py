"""The mirror's change feed: every change committed to a mirror database, in commit order,
followed from any process (:func:`feed`, behind ``Mirror.changes`` and ``asyncsports changes``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from asyncsports.store import CONNECT_TIMEOUT, RowChange, change_batches, open_changes

__all__ = ["feed"]


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
    reader = await open_changes(db, connect_timeout=connect_timeout)
    ended = False
    try:
        if consumer is not None and after == 0:
            after = await reader.cursor(consumer)
        async for lines in change_batches(reader, after, follow=follow, until=until, wake=wake):
            for line in lines:
                yield line.decoded()
                if consumer is not None:
                    await reader.save_cursor(consumer, line.seq)
        ended = True
    finally:
        if ended:
            await reader.close()
        else:
            # Not awaited: a consumer that leaves its loop early leaves this generator
            # to the garbage collector, whose finalizer must not have to wait.
            reader.abort()
