"""List and filter fixtures, then carry on a listing from where it stopped.

Runs as is against the embedded emulator: ``python examples/fixtures.py``. Against the
service, replace the emulator with ``Client(base_url, token=...)``.
"""

import asyncio
import datetime as dt

from asyncsports import Client
from asyncsports.emulator import Emulator


async def show(client: Client) -> None:
    # The live fixtures: a listing sends nothing until iterated, then walks every page.
    async for fixture in client.fixtures.list("basketball", status="live"):
        print("live:", fixture.start_date_utc, fixture.name)

    # Completed fixtures of the last week, newest first, 10 a page.
    week_ago = dt.date(2026, 5, 25)
    done = client.fixtures.list(
        "basketball",
        status="completed",
        date_from=week_ago,
        sort="startTime,desc",
        page_size=10,
    )
    latest = await done.collect()
    print(f"{len(latest)} completed since {week_ago}; the latest: {latest[0].name}")

    # Stop after a few, keep the resume token, carry on later: no gap, no repeat.
    listing = client.fixtures.list("soccer", page_size=5)
    first = []
    async for fixture in listing:
        first.append(fixture.id)
        if len(first) == 7:
            break
    token = str(listing.resume_token)  # text, for a file or a database
    rest = await client.fixtures.list("soccer", page_size=5, resume=token).collect()
    assert not set(first) & {f.id for f in rest}
    print(f"resumed at {token}: {len(first)} + {len(rest)} fixtures, none twice")


async def main() -> None:
    async with Emulator(seed=0) as emu, emu.client() as client:
        await show(client)


if __name__ == "__main__":
    asyncio.run(main())
