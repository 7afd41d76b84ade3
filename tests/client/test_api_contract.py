"""The public surface fixed by issue 10: names, awaiting a listing, no-record answers, live=False."""

from __future__ import annotations

import aiohttp
import pytest
import yarl
from support.samples import SEASON_ID, envelope, fixture
from support.stub import Stub

import asyncsports.models
import asyncsports.resources
from asyncsports import Client
from asyncsports.emulator import Emulator
from asyncsports.errors import NoRecordError, NotFoundError


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
    it = client.fixtures.list("basketball", page_size=3)
    await anext(it)
    token = it.resume_token
    assert str(token) == f"0:1:{token.listing}"
    # The same listing carries on; its text form works as well as the token.
    rest = await client.fixtures.list("basketball", page_size=3, resume=str(token)).collect()
    assert [f.name for f in rest] == ["Home 1 v Away 1", "Home 2 v Away 2"]
    sent = len(stub.seen)
    others = [
        lambda: client.fixtures.list("ice-hockey", page_size=3, resume=token),
        lambda: client.fixtures.list("basketball", page_size=3, status="live", resume=token),
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
    rest = await client.fixtures.list("basketball", page_size=3, resume="0:2").collect()
    assert [f.name for f in rest] == ["Home 2 v Away 2"]


def _live_params(emu: Emulator) -> list[str | None]:
    """The ``live`` query value of each request the emulator logged (None: not sent)."""
    out: list[str | None] = []
    for record in emu.log:
        query = dict(yarl.URL(record.path_qs).query)
        out.append(query.get("live"))
    return out


async def test_live_false_means_no_live_filter_in_both_listings(sports_emulator: Emulator) -> None:
    async with sports_emulator.client() as c:
        every = await c.fixtures.list("soccer").collect()
        not_filtered = await c.fixtures.list("soccer", live=False).collect()
        live = await c.fixtures.list("soccer", live=True).collect()
        assert [f.id for f in not_filtered] == [f.id for f in every]
        assert live and {f.status for f in live} == {"Live"}
        assert any(f.status != "Live" for f in not_filtered)  # not "only fixtures not live"
        events = await c.events.list().collect()
        events_not_filtered = await c.events.list(live=False).collect()
        live_events = await c.events.list(live=True).collect()
        assert [e.id for e in events_not_filtered] == [e.id for e in events]
        assert live_events and len(live_events) < len(events_not_filtered)
        assert {e.id for e in live_events} <= {e.id for e in events_not_filtered}
        # Nothing is sent for live=False, on either listing.
        assert set(_live_params(sports_emulator)) == {None, "true"}


async def test_the_emulator_reads_live_the_same_on_both_listings(sports_emulator: Emulator) -> None:
    async with aiohttp.ClientSession() as http:
        headers = {
            "Accept": f"application/vnd.{sports_emulator.vendor}.dde.api+json;version=1",
            "Authorization": f"Bearer {sports_emulator.token}",
        }
        creds = sports_emulator.streaming_credentials
        targets = [
            (f"{sports_emulator.base_url}/soccer/fixtures", {"size": "1000"}, headers),
            (f"{sports_emulator.streaming_url}/api/v2/streaming/events", {}, {}),
        ]
        for url, query, hdrs in targets:
            bodies = {}
            for live in (None, "false", "FALSE", "true", "yes"):
                params = dict(query) if hdrs else dict(query, **dict(creds.params()))
                if live is not None:
                    params["live"] = live
                async with http.get(url, params=params, headers=hdrs) as resp:
                    bodies[live] = (resp.status, await resp.read())
            assert bodies["false"] == bodies["FALSE"] == bodies[None]
            assert bodies["true"][0] == 200 and bodies["true"] != bodies[None]
            assert bodies["yes"][0] == 400


@pytest.mark.parametrize("data", [None, []], ids=["null", "empty"])
async def test_a_snooker_answer_without_a_record_is_no_record_not_404(
    stub: Stub, client: Client, data: object
) -> None:
    stub.add("/snooker/tvfeed/current-tournament-winner/101", {"data": data})
    stub.add("/snooker/tvfeed/player-info/1/101", {"data": data})
    calls = [
        lambda: client.snooker.current_tournament_winner(101),
        lambda: client.snooker.player_info(1, 101),
    ]
    for call in calls:
        with pytest.raises(NoRecordError, match="the body held no record") as info:
            await call()
        assert not isinstance(info.value, NotFoundError)
        assert info.value.status == 200
        assert info.value.url.startswith(f"{stub.url}/snooker/tvfeed/")  # the whole URL


async def test_a_snooker_404_is_still_not_found(stub: Stub, client: Client) -> None:
    # The stub answers 404 for a path it does not know.
    with pytest.raises(NotFoundError) as info:
        await client.snooker.current_tournament_winner(999)
    assert info.value.status == 404
    with pytest.raises(NotFoundError):
        await client.snooker.player_info("p-9", "t-9")


async def test_standings_get_returns_a_list_of_packets_and_says_so(
    stub: Stub, client: Client
) -> None:
    from support.samples import STANDINGS

    from asyncsports.models import Standings
    from asyncsports.resources import StandingsResource

    doc = StandingsResource.get.__doc__ or ""
    assert "LIST of packets, one per table" in doc
    stub.add(f"/soccer/seasons/{SEASON_ID}/standings", [STANDINGS, STANDINGS])
    stub.add(f"/basketball/seasons/{SEASON_ID}/standings", STANDINGS)  # one object
    two = await client.standings.get("soccer", season_id=SEASON_ID)
    one = await client.standings.get("basketball", season_id=SEASON_ID)
    assert isinstance(two, list) and len(two) == 2 and isinstance(two[0], Standings)
    assert isinstance(one, list) and len(one) == 1
