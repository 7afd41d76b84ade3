"""What the real service does beyond api-spec, over loopback: its error bodies, its sports."""

from __future__ import annotations

import pytest
from support.samples import FIXTURE_ID, SEASON_ID, STANDINGS, STATISTICS, fixture
from support.stub import Reply, Stub

from asyncsports import Client
from asyncsports.errors import AuthenticationError, NotFoundError

PATH = f"/soccer/fixtures/{FIXTURE_ID}"
NOT_AUTHENTICATED = "Supplied token could not be authenticated"


@pytest.mark.parametrize(
    "reply",
    [
        Reply({"errorMessage": NOT_AUTHENTICATED}, status=401),
        Reply(text=f'{{ "errorMessage" : "{NOT_AUTHENTICATED}" }}\n', status=401),
    ],
)
async def test_error_message_body_gives_the_text(stub: Stub, reply: Reply) -> None:
    stub.add(PATH, reply)
    async with Client(stub.url, token="not-a-token", max_retries=0) as c:
        with pytest.raises(AuthenticationError) as info:
            await c.fixtures.get("soccer", FIXTURE_ID)
    err = info.value
    assert err.status == 401
    assert err.message == NOT_AUTHENTICATED  # the text, not the JSON around it
    assert err.body == {"errorMessage": NOT_AUTHENTICATED}
    assert NOT_AUTHENTICATED in str(err) and "errorMessage" not in str(err)


async def test_error_message_on_a_streamed_listing(stub: Stub) -> None:
    stub.add(f"{PATH}/actions", Reply({"errorMessage": "Fixture is not covered"}, status=404))
    async with Client(stub.url, token="t", max_retries=0) as c:
        with pytest.raises(NotFoundError) as info:
            await c.actions.list("soccer", FIXTURE_ID).collect()
    assert info.value.message == "Fixture is not covered"


# The vendor documents actions, statistics and fixtures for more sports than api-spec names;
# every resource method takes any of them (the path each goes to is the vendor's).
VENDOR_SPORTS = [
    ("soccer", "/soccer"),
    ("basketball", "/basketball"),
    ("volleyball", "/v2/volleyball"),
    ("v2/volleyball", "/v2/volleyball"),  # as the vendor writes it
    ("Ice Hockey", "/ice-hockey"),
    ("american-football", "/american-football"),
    ("cricket", "/cricket"),
    ("snooker", "/snooker"),
    ("Table Tennis", "/v2/tabletennis"),
    ("tabletennis", "/v2/tabletennis"),
    ("darts", "/darts"),
    ("v3/padel", "/v3/padel"),  # a sport under a version the client does not know yet
]


@pytest.mark.parametrize(("sport", "base"), VENDOR_SPORTS)
async def test_every_resource_method_takes_any_sport(
    stub: Stub, client: Client, sport: str, base: str
) -> None:
    stub.add(f"{base}/fixtures", [fixture(1)])
    stub.add(f"{base}/fixtures/{FIXTURE_ID}", fixture())
    stub.add(f"{base}/fixtures/{FIXTURE_ID}/actions", [])
    stub.add(f"{base}/fixtures/{FIXTURE_ID}/statistics", STATISTICS)
    stub.add(f"{base}/seasons/{SEASON_ID}/squads", [])
    stub.add(f"{base}/squads/{SEASON_ID}", [])
    stub.add(f"{base}/seasons/{SEASON_ID}/standings", [STANDINGS])
    stub.add(f"{base}/stages/{SEASON_ID}/standings", [STANDINGS])
    assert len(await client.fixtures.list(sport).collect()) == 1
    await client.fixtures.get(sport, FIXTURE_ID)
    await client.actions.list(sport, FIXTURE_ID).collect()
    await client.statistics.get(sport, FIXTURE_ID)
    await client.squads.list(sport, season_id=SEASON_ID).collect()
    await client.squads.list(sport, team_id=SEASON_ID).collect()
    await client.standings.get(sport, season_id=SEASON_ID)
    await client.standings.get(sport, stage_id=SEASON_ID)
    assert {s.path.rsplit("/fixtures", 1)[0] for s in stub.seen if "/fixtures" in s.path} == {base}
    assert all(s.path.startswith(base + "/") for s in stub.seen)


EMULATED = [
    "basketball",
    "ice-hockey",
    "volleyball",
    "cricket",
    "american-football",
    "soccer",
    "snooker",
]


@pytest.mark.parametrize("sport", EMULATED)
async def test_the_emulator_serves_actions_and_statistics_of_every_sport(
    sports_client: Client, sport: str
) -> None:
    """And the client reads the vendor's fields from them."""
    done = await sports_client.fixtures.list(sport, status="completed").collect()
    fixture = next(f for f in done if not f.fixture_deleted)
    actions = await sports_client.actions.list(sport, fixture.id).collect()
    assert actions and actions[-1].finished and actions[-1].fixture_summary is not None
    assert all(a.trace_id and len(a.trace_id) == 32 for a in actions)
    summaries = [a.fixture_summary for a in actions if a.fixture_summary is not None]
    assert summaries[-1].collection_status == "PostMatchChecked" and summaries[-1].finished
    assert {s.collection_status for s in summaries} >= {"CollectionScheduled", "CollectingLive"}
    home_id = fixture.teams[0].id
    for a in actions:
        team = a.fixture_action.team
        assert team is None or team.home_team is (team.id == home_id)
    stats = await sports_client.statistics.get(sport, fixture.id)
    home, away = stats.team_action_aggregates
    assert home.team is not None and home.team.home_team is True
    assert away.team is not None and away.team.home_team is False
    labels = {p.id: p.label for p in summaries[-1].periods}
    for team in (home, away):
        assert all(p.label == labels[p.period] for p in team.period_action_aggregates)
        assert all(p.type in ("Regular", "Overtime") for p in team.period_action_aggregates)
        for player in team.player_action_aggregates:
            assert player.player is not None and player.game_action_aggregates
    assert home.player_action_aggregates or away.player_action_aggregates
