"""Every endpoint over loopback HTTP: the path and query sent, the typed result decoded."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from support.samples import (
    BREAK,
    EVENT,
    FIXTURE_ID,
    MATCH,
    PLAYER_AST,
    PLAYER_IMAGE,
    PLAYER_PROFILE,
    PREVIOUS_WINNER,
    SEASON_ID,
    SQUAD,
    STANDINGS,
    STATISTICS,
    TOURNAMENT,
    TOURNAMENT_PLAYER,
    action,
    envelope,
    fixture,
)
from support.stub import Reply, Stub

from asyncsports import Client, Sport

UTC = dt.UTC


async def test_headers_of_the_data_service(stub: Stub, client: Client) -> None:
    stub.add("/basketball/fixtures/" + FIXTURE_ID, fixture())
    await client.fixtures.get("basketball", FIXTURE_ID)
    headers = stub.last().headers
    assert headers["Accept"] == "application/vnd.imggaming.dde.api+json;version=1"
    assert headers["Authorization"] == "Bearer secret-token"
    assert headers["Content-Type"] == "application/json"
    assert headers["User-Agent"].startswith("asyncsports/")


async def test_vendor_changes_the_accept_media_type(stub: Stub) -> None:
    stub.add("/basketball/fixtures/" + FIXTURE_ID, fixture())
    async with Client(stub.url, token="t", vendor="acme") as c:
        await c.fixtures.get(Sport.BASKETBALL, uuid.UUID(FIXTURE_ID))
    assert stub.last().headers["Accept"] == "application/vnd.acme.dde.api+json;version=1"


async def test_get_fixture_decodes_a_typed_fixture(stub: Stub, client: Client) -> None:
    stub.add("/ice-hockey/fixtures/" + FIXTURE_ID, fixture(3))
    f = await client.fixtures.get(Sport.ICE_HOCKEY, FIXTURE_ID)
    assert f.name == "Home 3 v Away 3"
    assert f.start_date_utc == dt.datetime(2024, 3, 1, 18, 30, tzinfo=UTC)
    assert f.teams[0].home_team is True
    assert f.stage.season.competition.tour.name == "Baltic"


async def test_fixture_list_query_is_encoded_as_the_spec_writes_it(
    stub: Stub, client: Client
) -> None:
    stub.add("/basketball/fixtures", envelope([fixture(1)], 0, 50, 1))
    got = await client.fixtures.list(
        "basketball",
        live=True,
        status="completed",
        date_from=dt.date(2024, 1, 1),
        date_to="2024-02-01",
        type="official",
        coverage_level="video(postmatch)",
        sort=["startTime,desc", "name"],
        page_size=50,
        include_deleted=False,
    ).collect()
    assert [f.name for f in got] == ["Home 1 v Away 1"]
    assert stub.last().query == [
        ("paged", "true"),
        ("live", "true"),
        ("status", "completed"),
        ("dateFrom", "2024-01-01"),
        ("dateTo", "2024-02-01"),
        ("type", "official"),
        ("coverageLevel", "video(postmatch)"),
        ("sort", "startTime,desc"),
        ("sort", "name"),
        ("size", "50"),
        ("includeDeleted", "false"),
        ("includeDelete", "false"),
        ("page", "0"),
    ]


async def test_volleyball_gets_its_v2_prefix_and_season_path(stub: Stub, client: Client) -> None:
    path = f"/v2/volleyball/seasons/{SEASON_ID}/fixtures"
    stub.add(path, envelope([fixture(1, sport="volleyball", collectionStatus="Ok")], 0, 20, 1))
    got = await client.fixtures.list(
        "volleyball", season_id=SEASON_ID, include_deleted=True
    ).collect()
    assert got[0].sport == "volleyball"
    assert ("includeDelete", "true") not in stub.last(path).query
    assert ("includeDeleted", "true") in stub.last(path).query


async def test_fixture_pages_are_walked_in_order_until_the_last(stub: Stub, client: Client) -> None:
    fixtures = [fixture(i) for i in range(7)]
    stub.add(
        "/ice-hockey/fixtures",
        *[envelope(fixtures[n * 3 : n * 3 + 3], n, 3, 7) for n in range(3)],
    )
    it = client.fixtures.list("ice-hockey", page_size=3)
    assert stub.seen == []  # nothing is sent until iterated
    names = [f.name async for f in it]
    assert names == [f"Home {i} v Away {i}" for i in range(7)]
    assert [dict(s.query)["page"] for s in stub.seen] == ["0", "1", "2"]


async def test_a_bare_array_is_the_whole_result(stub: Stub, client: Client) -> None:
    stub.add("/basketball/fixtures", [fixture(i) for i in range(5)])
    pages = [p async for p in client.fixtures.list("basketball", page_size=2).pages()]
    assert [len(p) for p in pages] == [5]
    assert len(stub.seen) == 1


async def test_a_server_that_repeats_a_page_ends_the_walk_with_an_error(
    stub: Stub, client: Client
) -> None:
    from asyncsports import PagingError

    page = envelope([fixture(1), fixture(2)], 0, 2, 10)
    page["number"] = None  # a server that ignores paging and does not say so
    page["last"] = False
    stub.add("/basketball/fixtures", page)
    with pytest.raises(PagingError, match="repeats"):
        await client.fixtures.list("basketball", page_size=2).collect()
    assert len(stub.seen) == 2


async def test_squads_by_season_and_by_team(stub: Stub, client: Client) -> None:
    team = "3b3e5a52-9a7e-4f0b-8f3a-1c1d2e3f4a01"
    stub.add(f"/cricket/seasons/{SEASON_ID}/squads", [SQUAD])
    stub.add(f"/v2/volleyball/squads/{team}", [SQUAD, SQUAD])
    by_season = await client.squads.list("cricket", season_id=SEASON_ID).collect()
    by_team = await client.squads.list("volleyball", team_id=uuid.UUID(team)).collect()
    assert len(by_season) == 1 and len(by_team) == 2
    players = by_season[0].players
    assert players[1].last_name is None and players[1].shirt_number == "_10"
    assert players[0].location.country.name == "Latvia"


async def test_actions_of_a_fixture(stub: Stub, client: Client) -> None:
    stub.add(
        f"/american-football/fixtures/{FIXTURE_ID}/actions",
        [
            action(1),
            action(
                2,
                2,
                "Team Colours",
                metadata={"awayTeamColour": "0, 0, 255", "homeTeamColour": "255, 0, 0"},
            ),
        ],
    )
    actions = await client.actions.list(Sport.AMERICAN_FOOTBALL, FIXTURE_ID).collect()
    assert [a.fixture_action.fixture_seq_num for a in actions] == [1, 2]
    assert actions[1].fixture_action.metadata.away_team_colour == "0, 0, 255"
    assert actions[0].fixture_action.timestamp.tzinfo is not None


async def test_standings_by_season_and_by_stage(stub: Stub, client: Client) -> None:
    stage = "5c6d7e8f-1111-4222-8333-944455556666"
    basket = dict(STANDINGS)
    basket["teamStatistics"] = basket.pop("teamsStatistics")
    stub.add(f"/soccer/seasons/{SEASON_ID}/standings", [STANDINGS])
    stub.add(f"/basketball/stages/{stage}/standings", basket)
    soccer = await client.standings.get("soccer", season_id=SEASON_ID)
    by_stage = await client.standings.get("basketball", stage_id=stage)
    for packets in (soccer, by_stage):
        assert packets[0].teams_statistics[0].rank == 1
        assert packets[0].teams_statistics[0].advanced_team_statistics is None


async def test_statistics_of_a_fixture(stub: Stub, client: Client) -> None:
    stub.add(f"/basketball/fixtures/{FIXTURE_ID}/statistics", STATISTICS)
    stats = await client.statistics.get("basketball", FIXTURE_ID)
    assert stats.seq_num == 412
    assert stats.timestamp == dt.datetime(2024, 3, 1, 20, 31, 2, 123457, tzinfo=UTC)
    shot = stats.advanced_sport_statistics.average_shot_time_statistics.average_shot_times
    assert shot["p2"] == dt.timedelta(days=1, seconds=3)


SNOOKER_LISTS = [
    (
        "tournaments",
        lambda c: c.snooker.tournaments(
            season_id=51,
            start=dt.date(2024, 1, 1),
            end="2024-02-01",
            sort=["startDate,desc"],
        ),
        TOURNAMENT,
        [
            ("seasonId", "51"),
            ("start", "2024-01-01"),
            ("end", "2024-02-01"),
            ("sortOptions", "startDate,desc"),
        ],
    ),
    (
        "matches/101",
        lambda c: c.snooker.matches(101, round_number=2),
        MATCH,
        [("roundNumber", "2")],
    ),
    (
        "matches/external/abc",
        lambda c: c.snooker.matches("abc", sort=["a", "b"]),
        MATCH,
        [("sortOptions", "a"), ("sortOptions", "b")],
    ),
    ("ast/101", lambda c: c.snooker.ast(101, for_season=True), PLAYER_AST, [("forSeason", "true")]),
    ("ast/external/abc", lambda c: c.snooker.ast("abc"), PLAYER_AST, []),
    (
        "tournament-players/101",
        lambda c: c.snooker.tournament_players(101, sort="playerId"),
        TOURNAMENT_PLAYER,
        [("sortOptions", "playerId")],
    ),
    (
        "tournament-players/external/abc",
        lambda c: c.snooker.tournament_players("abc", sort=True),
        TOURNAMENT_PLAYER,
        [("sortOptions", "true")],
    ),
    ("tour-players", lambda c: c.snooker.tour_players(), TOURNAMENT_PLAYER, []),
    (
        "centuries/101",
        lambda c: c.snooker.centuries(101, for_season=False),
        BREAK,
        [("forSeason", "false")],
    ),
    ("centuries/external/abc", lambda c: c.snooker.centuries("abc"), BREAK, []),
    (
        "previous-tournament-winner/101",
        lambda c: c.snooker.previous_tournament_winners(101),
        PREVIOUS_WINNER,
        [],
    ),
    (
        "previous-tournament-winner/external/abc",
        lambda c: c.snooker.previous_tournament_winners("abc"),
        PREVIOUS_WINNER,
        [],
    ),
]


@pytest.mark.parametrize(
    ("suffix", "call", "record", "query"), SNOOKER_LISTS, ids=[s[0] for s in SNOOKER_LISTS]
)
async def test_snooker_lists(stub: Stub, client: Client, suffix, call, record, query) -> None:  # type: ignore[no-untyped-def]
    stub.add(f"/snooker/tvfeed/{suffix}", {"data": [record, record]})
    got = await call(client).collect()
    assert len(got) == 2
    assert stub.last().query == query
    assert stub.last().headers["Authorization"] == "Bearer secret-token"


async def test_snooker_data_holding_one_object_is_one_record(stub: Stub, client: Client) -> None:
    stub.add("/snooker/tvfeed/matches/101", {"data": MATCH})
    (match,) = await client.snooker.matches(101).collect()
    assert match.player1_frames == 6 and match.match_external_id == uuid.UUID(
        MATCH["matchExternalId"]
    )


async def test_snooker_single_records(stub: Stub, client: Client) -> None:
    ext = uuid.UUID("61111111-2222-4333-8444-555555555555")
    stub.add("/snooker/tvfeed/current-tournament-winner/101", {"data": PLAYER_PROFILE})
    stub.add(
        f"/snooker/tvfeed/current-tournament-winner/external/{ext}", {"data": [PLAYER_PROFILE]}
    )
    stub.add("/snooker/tvfeed/player-info/1/101", {"data": PLAYER_IMAGE})
    stub.add(f"/snooker/tvfeed/player-info/external/p-1/{ext}", {"data": PLAYER_IMAGE})
    winner = await client.snooker.current_tournament_winner(101)
    assert winner.highest_break == 147 and winner.player_external_id.person_id is None
    assert (await client.snooker.current_tournament_winner(ext)).nationality == "ENG"
    image = await client.snooker.player_info(1, 101)
    assert image.file_content.startswith(b"\x89PNG")
    assert (await client.snooker.player_info("p-1", ext)).file_type == "image/png"


def test_snooker_ids_are_checked(client: Client) -> None:
    with pytest.raises(TypeError, match="tournament"):
        client.snooker.matches(True)
    with pytest.raises(TypeError, match="sort"):
        client.snooker.matches(1, sort=True)  # type: ignore[arg-type]


async def test_snooker_mixed_ids_are_refused_before_sending(stub: Stub, client: Client) -> None:
    with pytest.raises(ValueError, match="two int ids or two external ids"):
        await client.snooker.player_info(1, "abc")
    assert stub.seen == []


async def test_events_listing_sends_credentials_and_flags(stub: Stub, client: Client) -> None:
    stub.add("/api/v2/streaming/events", [EVENT])
    events = await client.events.list(live=True, vendor_data_id=True).collect()
    assert events[0].updated_at == dt.datetime(2024, 1, 14, 12, tzinfo=UTC)
    assert events[0].tournament.property.sport.name == "Snooker"
    assert stub.last().query == [
        ("operatorId", "9"),
        ("auth", "stream-auth"),
        ("timestamp", "1700000000000"),
        ("live", "true"),
        ("vendorDataID", "true"),
    ]
    assert "Authorization" not in stub.last().headers


async def test_events_with_restrictions_are_paged(stub: Stub, client: Client) -> None:
    events = [
        dict(EVENT, id=i, countryList=["GB"], restrictionRequest="whitelist") for i in range(5)
    ]
    stub.add("/api/v2/streaming/events", events[:2], events[2:4], events[4:])
    got = await client.events.list(restrictions="whitelist", page_size=2).collect()
    assert [e.id for e in got] == [0, 1, 2, 3, 4]
    assert got[0].country_list == ["GB"]
    pages = [dict(s.query)["page.page"] for s in stub.seen]
    assert pages == ["0", "1", "2"]
    assert dict(stub.seen[0].query)["page.size"] == "2"


async def test_one_event_object_is_a_one_event_list(stub: Stub, client: Client) -> None:
    stub.add("/api/v2/streaming/events", EVENT)
    assert [e.id for e in await client.events.list().collect()] == [4211]


async def test_playback(stub: Stub, client: Client) -> None:
    stub.add(
        "/api/v2/streaming/events/4211/stream", {"eventId": 4211, "hlsUrl": "https://x/y.m3u8"}
    )
    playback = await client.events.playback(4211)
    assert playback.hls_url == "https://x/y.m3u8" and playback.event_id == 4211
    assert dict(stub.last().query)["operatorId"] == "9"


async def test_hmac_credentials_make_a_token_per_request(stub: Stub) -> None:
    from asyncsports import StreamingCredentials
    from asyncsports.auth import stream_token

    stub.add("/api/v2/streaming/events", [])
    creds = StreamingCredentials.from_secret(
        5, "testtoken", "1.2.3.4", clock=lambda: 1385554442.935
    )
    async with Client(stub.url, streaming_url=stub.url, streaming_credentials=creds) as c:
        await c.events.list().collect()
    query = dict(stub.last().query)
    assert query["auth"] == "51cc11786ddac11c7af450ec5b42aee4"
    assert query["auth"] == stream_token("testtoken", "1.2.3.4", int(query["timestamp"]))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: c.fixtures.list("basketball", status=""), "status"),
        (lambda c: c.fixtures.list("basketball", type=" "), "type"),
        (lambda c: c.fixtures.list("basketball", coverage_level=""), "coverage_level"),
        (lambda c: c.fixtures.list("basketball", sort="$date,asc"), "sort field"),
        (lambda c: c.fixtures.list("basketball", sort="name,up"), "sort direction"),
        (lambda c: c.fixtures.list("basketball", page_size=0), "size"),
        (lambda c: c.fixtures.list("basketball", date_from="2024-13-01"), "date_from"),
        (
            lambda c: c.fixtures.list("basketball", date_from="2024-02-01", date_to="2024-01-01"),
            "date_from",
        ),
        (lambda c: c.fixtures.list("basket/ball"), "sport"),
        (lambda c: c.fixtures.list("basketball", season_id="../x"), "season_id"),
        (lambda c: c.squads.list("cricket"), "season_id or team_id"),
        (lambda c: c.squads.list("cricket", season_id="a", team_id="b"), "both"),
        (lambda c: c.events.list(page_size=501), "page_size"),
        (lambda c: c.events.list(restrictions=""), "restrictions"),
    ],
)
def test_bad_arguments_are_refused_before_anything_is_sent(
    client: Client, call, message: str
) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        call(client)


async def test_standings_needs_exactly_one_id(stub: Stub, client: Client) -> None:
    with pytest.raises(ValueError, match="season_id or stage_id"):
        await client.standings.get("soccer")
    assert stub.seen == []


async def test_follow_yields_each_action_once_updates_and_ends_after_finished(
    stub: Stub, client: Client
) -> None:
    path = f"/american-football/fixtures/{FIXTURE_ID}/actions"
    pending = action(1, sendType="Pending", sendTypeId=1)
    confirmed = action(1)
    closing = dict(action(3, 21, "Post Match Check Complete"), finished=True)
    stub.add(path, [pending], [pending], [confirmed, action(2)], [confirmed, action(2), closing])
    changes = [
        (c.kind, c.record.fixture_action.fixture_seq_num, c.record.fixture_action.send_type)
        async for c in client.actions.follow("american-football", FIXTURE_ID, interval=0)
    ]
    assert changes == [
        ("new", 1, "Pending"),
        ("update", 1, "Confirmed"),
        ("new", 2, "Confirmed"),
        ("new", 3, "Confirmed"),
    ]
    assert len(stub.seen) == 4


async def test_watch_yields_events_going_live_and_ending(stub: Stub, client: Client) -> None:
    a, b = dict(EVENT, id=1), dict(EVENT, id=2)
    stub.add("/api/v2/streaming/events", [a], [a, b], [b], [])
    seen = []
    async for change in client.events.watch(interval=0):
        seen.append((change.kind, change.record.id))
        if len(seen) == 4:
            break
    assert seen == [("live", 1), ("live", 2), ("ended", 1), ("ended", 2)]
    assert all(dict(s.query)["live"] == "true" for s in stub.seen)


async def test_filters_accept_the_response_spelling_of_their_values(
    stub: Stub, client: Client
) -> None:
    from asyncsports.models import CoverageLevel, FixtureStatus

    stub.add("/basketball/fixtures", envelope([], 0, 20, 0))
    await client.fixtures.list(
        "basketball", status=FixtureStatus.LIVE, coverage_level=CoverageLevel.IN_VENUE
    ).collect()
    query = dict(stub.last().query)
    assert query["status"] == "live" and query["coverageLevel"] == "inVenue"


async def test_an_html_page_with_status_200_is_a_decode_error_with_the_status(
    stub: Stub, client: Client
) -> None:
    from asyncsports.errors import DecodeError

    stub.add(f"/basketball/fixtures/{FIXTURE_ID}", Reply(text="<html>maintenance</html>"))
    with pytest.raises(DecodeError) as info:
        await client.fixtures.get("basketball", FIXTURE_ID)
    assert info.value.status == 200 and "status 200" in str(info.value)
    assert "<html>maintenance" in str(info.value)


async def test_other_utc_offsets_are_given_in_utc(stub: Stub, client: Client) -> None:
    stub.add("/api/v2/streaming/events", [dict(EVENT, updatedAt="2024-01-14T12:00:00+0100")])
    (event,) = await client.events.list().collect()
    assert event.updated_at == dt.datetime(2024, 1, 14, 11, tzinfo=UTC)
    assert event.updated_at.tzinfo is UTC


async def test_watchers_ride_out_failed_polls(stub: Stub, client: Client) -> None:
    a, b = dict(EVENT, id=1), dict(EVENT, id=2)
    busy = Reply(status=503, text="busy")
    stub.add("/api/v2/streaming/events", [a], busy, busy, busy, busy, [a, b], [b])
    seen = []
    async for change in client.events.watch(interval=0):
        seen.append((change.kind, change.record.id))
        if len(seen) == 3:
            break
    assert seen == [("live", 1), ("live", 2), ("ended", 1)]


@pytest.mark.parametrize("interval", [-1, float("nan"), float("inf")])
async def test_watch_intervals_are_checked(client: Client, interval: float) -> None:
    with pytest.raises(ValueError, match="interval"):
        await anext(client.events.watch(interval=interval))
