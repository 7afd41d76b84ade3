"""Back-fill one season of basketball into SQLite: fixtures, actions and statistics.

Runs as is against the embedded emulator (``python examples/backfill.py``, writes
``season.sqlite`` here). Run again, it resumes, or upserts the same rows once done.
The same job from the shell: ``asyncsports backfill --emulator --sports basketball
--season-id SEASON_ID --db season.sqlite``.
"""

import asyncio
import contextlib
import sqlite3

from asyncsports.backfill import Backfill, Scope
from asyncsports.emulator import Emulator


async def main() -> None:
    async with Emulator(seed=0) as emu, emu.client() as client:
        # A season id from the listings: the season of the latest completed fixture.
        done = client.fixtures.list(
            "basketball", status="completed", sort="startTime,desc"
        )
        async with done:
            fixture = await anext(aiter(done))
        assert fixture.stage is not None and fixture.stage.season is not None
        season = str(fixture.stage.season.id)
        scope = Scope(sports=["basketball"], seasons=[season])
        report = await Backfill(client, "season.sqlite", scope).run()
        rows = ", ".join(f"{n} {table}" for table, n in report.rows.items())
        print(f"season {season}: {rows} in {report.seconds:.1f} s")

    # closing(): a connection's own `with` ends a transaction; it does not close.
    with contextlib.closing(sqlite3.connect("season.sqlite")) as db:
        query = "SELECT status, count(*) FROM fixtures GROUP BY status ORDER BY status"
        for status, count in db.execute(query):
            print(f"{status:<10} {count}")


if __name__ == "__main__":
    asyncio.run(main())
