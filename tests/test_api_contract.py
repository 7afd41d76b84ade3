"""The public surface fixed by issue 10: names, awaiting a listing, no-record answers, live=False."""

from __future__ import annotations

import pytest
from conftest import Stub
from samples import SEASON_ID, envelope, fixture

import asyncsports.models
import asyncsports.resources
from asyncsports import Client


def test_resource_classes_share_no_name_with_a_model(client: Client) -> None:
    resources = set(asyncsports.resources.__all__)
    assert resources.isdisjoint(asyncsports.models.__all__)
    assert all(name.endswith("Resource") for name in resources)
    assert type(client.standings).__name__ == "StandingsResource"
    assert type(client.statistics).__name__ == "StatisticsResource"


async def test_awaiting_a_listing_is_a_type_error_that_says_what_to_do(
    stub: Stub, client: Client
) -> None:
    with pytest.raises(TypeError, match=r"'async for x in \.\.\.'.*'await \.\.\.\.collect\(\)'"):
        await client.fixtures.list("basketball")
    with pytest.raises(TypeError, match="not awaitable"):
        await client.snooker.tour_players()
    assert stub.seen == []


async def test_a_resume_token_of_another_listing_is_refused(stub: Stub, client: Client) -> None:
    stub.add("/basketball/fixtures", envelope([fixture(i) for i in range(3)], 0, 3, 3))
    it = client.fixtures.list("basketball", size=3)
    await anext(it)
    token = it.resume_token
    assert str(token) == f"0:1:{token.listing}"
    # The same listing carries on; its text form works as well as the token.
    rest = await client.fixtures.list("basketball", size=3, resume=str(token)).collect()
    assert [f.name for f in rest] == ["Home 1 v Away 1", "Home 2 v Away 2"]
    sent = len(stub.seen)
    others = [
        lambda: client.fixtures.list("ice-hockey", size=3, resume=token),
        lambda: client.fixtures.list("basketball", size=3, status="live", resume=token),
        lambda: client.fixtures.list("basketball", resume=token),  # another page size
        lambda: client.squads.list("cricket", season_id=SEASON_ID, resume=token),
        lambda: client.snooker.tour_players(resume=str(token)),
        lambda: client.events.list(resume=token),
    ]
    for other in others:
        with pytest.raises(ValueError, match=r"resume: .* belongs to another listing"):
            other()
    assert len(stub.seen) == sent


async def test_a_token_without_fingerprint_is_still_taken(stub: Stub, client: Client) -> None:
    stub.add("/basketball/fixtures", envelope([fixture(i) for i in range(3)], 0, 3, 3))
    rest = await client.fixtures.list("basketball", size=3, resume="0:2").collect()
    assert [f.name for f in rest] == ["Home 2 v Away 2"]
