"""Test your own code against the emulator with the pytest plugin.

Installing asyncsports gives the ``sports_emulator`` and ``sports_client`` fixtures; a
test that asks for them runs under pytest-asyncio in its default (strict) mode, with no
marker or ini setting of its own. Run: ``pytest examples/test_with_plugin.py``.
"""

import datetime as dt

import pytest
from asyncsports import Client


async def next_kickoff(client: Client, sport: str) -> dt.datetime | None:
    """The code under test: when the next scheduled fixture of ``sport`` starts."""
    order = "startTime,asc"
    listing = client.fixtures.list(sport, status="scheduled", sort=order, page_size=1)
    async with listing:
        async for fixture in listing:
            return fixture.start_date_utc
    return None


async def test_next_kickoff_is_ahead(sports_client: Client, sports_emulator) -> None:
    start = await next_kickoff(sports_client, "soccer")
    assert start is not None and start > sports_emulator.clock.now()


@pytest.mark.emulator(seed=7, fixtures_per_season=6)  # Emulator arguments for this test
async def test_the_clock_moves_the_schedule(sports_client: Client, sports_emulator):
    before = await next_kickoff(sports_client, "soccer")
    assert before is not None
    # One minute after its start, that fixture is live: the next one is another.
    sports_emulator.clock.set(before + dt.timedelta(minutes=1))
    assert await next_kickoff(sports_client, "soccer") != before
