"""Run a mirror of the service in SQLite and consume its change feed.

Runs as is against the embedded emulator (``python examples/mirror.py``, writes
``mirror.sqlite`` here): the mirror's first pass fills the tables, the emulator's clock
moves on ten minutes, and the feed shows what that changed. The same from the shell:
``asyncsports sync --emulator --db mirror.sqlite --sports basketball --changes``.
"""

import asyncio
import collections

from asyncsports.emulator import Emulator
from asyncsports.sync import Mirror


async def main() -> None:
    async with Emulator(seed=0) as emu, emu.client() as client:
        # clock: the service's time (the emulator's does not follow the wall clock).
        # every: cadences in seconds, short so that the demonstration does not wait.
        every = {"live": 0.2, "fixtures": 0.2, "window": 0.5, "events": 0.2}
        mirror = Mirror(
            client,
            "mirror.sqlite",
            sports=["basketball"],
            every=every,
            clock=emu.clock.time,
        )
        running = asyncio.create_task(mirror.run())
        await mirror.caught_up()
        # A named consumer keeps its cursor in the database: a restart resumes after the
        # last change it was done with. Here, skip to the end of the first pass.
        backlog = [c async for c in mirror.changes(consumer="example", follow=False)]
        print(f"first pass: {len(backlog)} changes")

        emu.clock.advance(600)  # ten minutes on: live fixtures get new actions
        await mirror.caught_up()
        seen: collections.Counter[tuple[str, str]] = collections.Counter()
        async for change in mirror.changes(consumer="example", follow=False):
            seen[change.table, change.op] += 1
            if change.table == "actions" and seen[change.table, change.op] == 1:
                print(change.seq, change.op, change.table, change.key)
        for (table, op), n in sorted(seen.items()):
            print(f"{table:<10} {op:<7} {n}")
        mirror.stop()
        await running


if __name__ == "__main__":
    asyncio.run(main())
