"""What a running mirror says in its log, at a human pace."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter

from ._plan import Plan

__all__ = ["report"]

log = logging.getLogger("asyncsports.sync")


async def report(plan: Plan, committed: Counter[str], stopping: asyncio.Event) -> None:
    """Say, at a human pace, what the mirror does and whether the budget keeps up."""
    loop = asyncio.get_running_loop()
    last = sum(committed.values())
    while not stopping.is_set():
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(60.0):
                await stopping.wait()
        now = loop.time()
        total = sum(committed.values())
        late = plan.late(now)
        live = sum(1 for t in plan.tasks.values() if t.kind == "live")
        ended = stopping.is_set()
        log.info(
            "mirror: %d changes committed %s; %d live fixtures followed %s; %d tasks due",
            total - (0 if ended else last),
            "in all" if ended else "in the last minute",
            live,  # those the database carried and those the listings found
            "at the end" if ended else "now",
            plan.depth(now),
        )
        last = total
        if late:
            worst = max(behind for _, behind in late)
            log.warning(
                "mirror: the budget is too small: %d tasks behind their cadence, "
                "up to %.1f s: raise --rate-limit or lengthen --every",
                len(late),
                worst,
            )
