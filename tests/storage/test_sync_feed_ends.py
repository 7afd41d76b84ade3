"""The mirror takes a live feed's end for the fixture's only after its finishing record."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from support.mirror import FAST, caught_up

from asyncsports.emulator import Emulator
from asyncsports.sync import Mirror
from asyncsports.sync._keys import Final


async def test_a_feed_that_stops_short_is_reopened_not_taken_for_the_end(
    tmp_path: Path,
) -> None:
    calls: list[tuple[str, int]] = []

    async def feed(sport: str, fid: str, start: int) -> AsyncIterator[Any]:
        # A source that gives two records at a time and then just stops (no finishing
        # record, no error): a proxy's clean close, say.
        calls.append((fid, start))
        for record in (await client.with_json.actions.list(sport, fid).collect())[start:][:2]:
            yield record

    emu = Emulator(seed=3, fixtures_per_season=16, actions_per_fixture=40)
    async with emu, emu.client() as client:
        mirror = Mirror(
            client,
            tmp_path / "m.sqlite",
            sports=["basketball"],
            every=FAST,
            clock=emu.clock.time,
            live_feed=feed,
        )
        running = asyncio.create_task(mirror.run())
        try:
            for _ in range(4):
                await caught_up(mirror)
            live = [t.args[1] for t in mirror.plan.tasks.values() if t.kind == "live"]
            assert live
            for fid in live:
                starts = [s for f, s in calls if f == fid]
                # Reopened where it stopped, again and again; the fixture still followed.
                assert len(starts) >= 2 and starts == sorted(starts) and starts[1] > 0
                assert Final(fid) not in mirror.plan.tasks
        finally:
            mirror.stop()
            await running
