"""Models: hand-written JSON in the shapes of api-spec 2.1-2.7, every quirk, the decode helpers."""

from __future__ import annotations

import base64
import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from asyncsports._wire.decoding import locate, split_message, type_name
from asyncsports.errors import DecodeError
from asyncsports.models import (
    ZERO_UUID,
    Action,
    AdvancedSportStatistics,
    Break,
    Club,
    Data,
    DeviceLocation,
    Duration,
    Event,
    Fixture,
    FixturePage,
    FixtureStatus,
    LineupPlayer,
    Lineups,
    Location,
    Match,
    MatchConditions,
    Playback,
    PlayerAst,
    PlayerImage,
    PlayerProfile,
    PreviousWinner,
    SendType,
    ShotPosition,
    Squad,
    Standings,
    Statistics,
    TeamColours,
    ThreePointShot,
    Tournament,
    TournamentPlayer,
    decode,
    decoder,
    encode,
    format_duration,
    parse_duration,
)

FIX = "6f1d4a2e-5b7c-4d8e-9f00-000000000001"
HOME = "6f1d4a2e-5b7c-4d8e-9f00-0000000000a1"
AWAY = "6f1d4a2e-5b7c-4d8e-9f00-0000000000b2"
ACT = "6f1d4a2e-5b7c-4d8e-9f00-00000000ac01"
P1 = "6f1d4a2e-5b7c-4d8e-9f00-00000000c001"
P2 = "6f1d4a2e-5b7c-4d8e-9f00-00000000c002"


def js(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def at(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0, us: int = 0
) -> datetime:
    return datetime(year, month, day, hour, minute, second, us, tzinfo=UTC)


# --------------------------------------------------------------------------- 2.1 fixtures


def fixture_json(**extra: Any) -> dict[str, Any]:
    return {
        "id": FIX,
        "name": "Home v Away",
        "status": "Scheduled",
        "collectionStatus": "Collected",
        "type": "Official",
        "coverageLevel": "In Venue",
        "startDateUTC": "2023-09-30T18:30:00",
        "teams": [
            {
                "id": HOME,
                "name": "Home",
                "club": {"id": "6f1d4a2e-5b7c-4d8e-9f00-0000000000c1", "name": "Home Club"},
                "category": {"id": 1, "name": "Men"},
                "homeTeam": True,
            },
            {
                "id": AWAY,
                "name": "Away",
                "club": {"id": "6f1d4a2e-5b7c-4d8e-9f00-0000000000c2", "name": "Away Club"},
                "category": {"id": 1, "name": "Men"},
                "homeTeam": False,
            },
        ],
        "stage": {
            "id": "6f1d4a2e-5b7c-4d8e-9f00-0000000000d1",
            "name": "Regular Season",
            "startDateUTC": "2023-09-01T00:00:00",
            "endDateUTC": "2024-04-30T00:00:00",
            "season": {
                "id": "6f1d4a2e-5b7c-4d8e-9f00-0000000000e1",
                "name": "2023/2024",
                "startDateUTC": "2023-08-01T00:00:00",
                "endDateUTC": "2024-06-30T23:59:59",
                "sport": "volleyball",
                "competition": {
                    "id": "6f1d4a2e-5b7c-4d8e-9f00-0000000000f1",
                    "name": "Superliga",
                    "type": "League",
                    "category": {"id": 1, "name": "Men"},
                    "tour": {"id": 7, "name": "Domestic"},
                    "location": {"name": "Spain", "country": {}, "continent": {}},
                    "latestComment": "moved to Sunday",
                    "commentCount": 2,
                },
            },
        },
        "venue": {
            "id": "6f1d4a2e-5b7c-4d8e-9f00-000000000101",
            "name": "Pabellon",
            "location": {"country": {"name": "Spain"}, "continent": {"name": "Europe"}},
        },
        "sport": "volleyball",
        "fixtureDeleted": False,
        **extra,
    }


def page_json(content: list[dict[str, Any]]) -> dict[str, Any]:
    sort = {"empty": False, "unsorted": False, "sorted": True}
    return {
        "content": content,
        "pageable": {
            "pageNumber": 0,
            "pageSize": 20,
            "sort": sort,
            "offset": 0,
            "paged": True,
            "unpaged": False,
        },
        "last": False,
        "first": True,
        "totalPages": 3,
        "totalElements": 41,
        "size": 20,
        "number": 0,
        "numberOfElements": len(content),
        "sort": sort,
        "empty": False,
    }


def test_fixture_page_volleyball_every_field() -> None:
    deleted = fixture_json(
        id="6f1d4a2e-5b7c-4d8e-9f00-000000000002", fixtureDeleted=True, status="Postponed"
    )
    page = decode(FixturePage, js(page_json([fixture_json(), deleted])))

    assert (page.first, page.last, page.number, page.size) == (True, False, 0, 20)
    assert (page.total_pages, page.total_elements, page.number_of_elements) == (3, 41, 2)
    assert page.empty is False
    assert page.sort is not None and page.sort.sorted is True and page.sort.unsorted is False
    assert page.pageable is not None
    assert (page.pageable.page_number, page.pageable.page_size, page.pageable.offset) == (0, 20, 0)
    assert page.pageable.paged is True and page.pageable.unpaged is False

    f = page.content[0]
    assert f.id == uuid.UUID(FIX)
    assert (f.name, f.status, f.type, f.coverage_level) == (
        "Home v Away",
        FixtureStatus.SCHEDULED,
        "Official",
        "In Venue",
    )
    assert f.collection_status == "Collected" and f.sport == "volleyball"
    assert f.start_date_utc == at(2023, 9, 30, 18, 30)
    assert f.fixture_deleted is False and page.content[1].fixture_deleted is True

    home, away = f.teams
    assert home.id == uuid.UUID(HOME) and home.home_team is True and away.home_team is False
    assert isinstance(home.club, Club) and home.club.name == "Home Club"
    assert home.category is not None and (home.category.id, home.category.name) == (1, "Men")

    stage = f.stage
    assert stage is not None and stage.name == "Regular Season"
    assert stage.start_date_utc == at(2023, 9, 1) and stage.end_date_utc == at(2024, 4, 30)
    season = stage.season
    assert season is not None and season.sport == "volleyball"
    assert season.end_date_utc == at(2024, 6, 30, 23, 59, 59)
    comp = season.competition
    assert comp is not None and comp.type == "League" and comp.comment_count == 2
    assert comp.latest_comment == "moved to Sunday"
    assert comp.tour is not None and (comp.tour.id, comp.tour.name) == (7, "Domestic")
    assert comp.category is not None and comp.category.id == 1
    assert f.venue is not None and f.venue.location is not None
    assert f.venue.location.country is not None and f.venue.location.country.name == "Spain"
    assert f.venue.location.name is None


def test_fixture_of_other_sports_lacks_volleyball_fields() -> None:
    body = fixture_json()
    for key in ("collectionStatus", "sport", "fixtureDeleted"):
        del body[key]
    f = decode(Fixture, js(body))
    assert f.collection_status is None and f.sport is None
    assert f.fixture_deleted is False  # false by default


def test_partial_fixture_decodes_with_defaults() -> None:
    f = decode(Fixture, js({"id": FIX}))
    assert f.teams == [] and f.stage is None and f.start_date_utc is None and f.name is None


def test_unknown_enum_like_values_are_kept_as_text() -> None:
    f = decode(
        Fixture, js(fixture_json(status="Abandoned", type="Exhibition", coverageLevel="Drone"))
    )
    assert (f.status, f.type, f.coverage_level) == ("Abandoned", "Exhibition", "Drone")


@pytest.mark.parametrize(
    ("wire", "name", "country", "continent"),
    [
        ({}, None, None, None),
        ({"country": {}, "continent": {}}, None, None, None),
        ({"name": "Spain", "country": {"name": "Spain"}, "continent": {}}, "Spain", "Spain", None),
        ({"country": {}, "continent": {"name": "Europe"}}, None, None, "Europe"),
    ],
)
def test_empty_location_objects(
    wire: dict[str, Any], name: str | None, country: str | None, continent: str | None
) -> None:
    loc = decode(Location, js(wire))
    assert loc.name == name
    assert (loc.country.name if loc.country else None) == country
    assert (loc.continent.name if loc.continent else None) == continent
    if "country" in wire:
        assert loc.country is not None  # an empty object is an empty Country, not None


def test_naive_datetime_becomes_aware_utc_and_other_offsets_are_given_in_utc() -> None:
    f = decode(Fixture, js(fixture_json(startDateUTC="2023-09-30T18:30:00.250")))
    assert f.start_date_utc is not None and f.start_date_utc.tzinfo is UTC
    assert f.start_date_utc == at(2023, 9, 30, 18, 30, 0, 250000)
    # the wire value is kept as sent (naive) in the private field
    assert f._start_date_utc is not None and f._start_date_utc.tzinfo is None
    g = decode(Fixture, js(fixture_json(startDateUTC="2023-09-30T20:30:00+02:00")))
    assert g.start_date_utc == at(2023, 9, 30, 18, 30)
    assert g.start_date_utc is not None and g.start_date_utc.tzinfo is UTC


@given(st.datetimes(timezones=st.none()))
def test_utc_descriptor_equals_replace_tzinfo(value: datetime) -> None:
    f = Fixture(id=uuid.UUID(FIX), _start_date_utc=value)
    assert f.start_date_utc == value.replace(tzinfo=UTC)
    assert f.start_date_utc is not None and f.start_date_utc.tzinfo is UTC


def test_utc_descriptor_assignment_and_class_access() -> None:
    f = decode(Fixture, js({"id": FIX}))
    f.start_date_utc = datetime(2024, 1, 2, 3, 4, 5)
    assert f.start_date_utc == at(2024, 1, 2, 3, 4, 5)
    assert repr(Fixture.start_date_utc) == "utc('_start_date_utc')"


@given(
    extra=st.dictionaries(
        st.text(min_size=1, max_size=12).filter(lambda k: k not in fixture_json()),
        st.recursive(
            st.none()
            | st.booleans()
            | st.integers()
            | st.floats(allow_nan=False, allow_infinity=False)
            | st.text(),
            lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(), kids, max_size=3),
            max_leaves=8,
        ),
        max_size=6,
    )
)
def test_fixture_with_arbitrary_extra_fields_still_decodes(extra: dict[str, Any]) -> None:
    plain = decode(Fixture, js(fixture_json()))
    assert decode(Fixture, js(fixture_json(**extra))) == plain


# --------------------------------------------------------------------------- 2.2 squads


SQUADS = [
    {
        "id": "6f1d4a2e-5b7c-4d8e-9f00-000000000201",
        "season": {"id": "6f1d4a2e-5b7c-4d8e-9f00-0000000000e1", "name": "2023/2024"},
        "team": {"id": HOME, "name": "Home"},
        "players": [
            {
                "id": P1,
                "fullName": "Ana Lopez",
                "firstName": "Ana",
                "lastName": "Lopez",
                "shirtNumber": "7",
                "location": {"name": "Spain", "country": {"name": "Spain"}, "continent": {}},
                "verified": True,
            },
            {
                "id": P2,
                "fullName": "Pele",
                "firstName": "Pele",
                "shirtNumber": "_10",
                "location": {"country": {}, "continent": {}},
                "verified": False,
                "someNewField": [1, 2],
            },
        ],
    }
]


def test_squads_absent_last_name_underscore_shirt_and_empty_location() -> None:
    (squad,) = decode(list[Squad], js(SQUADS))
    assert squad.season is not None and squad.season.name == "2023/2024"
    assert squad.team is not None and squad.team.id == uuid.UUID(HOME)
    ana, pele = squad.players
    assert (ana.full_name, ana.first_name, ana.last_name, ana.shirt_number) == (
        "Ana Lopez",
        "Ana",
        "Lopez",
        "7",
    )
    assert ana.verified is True
    assert pele.last_name is None and pele.first_name == "Pele"
    assert pele.shirt_number == "_10"
    assert pele.location is not None and pele.location.country is not None
    assert pele.location.country.name is None and pele.location.name is None


# --------------------------------------------------------------------------- 2.3 actions


def action_json(
    type_id: int | None,
    type_name_: str | None,
    metadata: Any = ...,
    **fa_extra: Any,
) -> dict[str, Any]:
    fa: dict[str, Any] = {
        "actionId": ACT,
        "fixtureId": FIX,
        "fixtureSeqNum": 12,
        "timelineSequence": 3.5,
        "period": 1,
        "clockTime": "07:45",
        "timestamp": "2023-09-10T17:02:03.456Z",
        "sendType": "Confirmed",
        "sendTypeId": 5,
        "team": {"id": HOME, "name": "Home"},
        "player": {"id": P1, "name": "Ana Lopez"},
        **fa_extra,
    }
    if type_id is not None:
        fa["fixtureActionTypeId"] = type_id
    if type_name_ is not None:
        fa["fixtureActionType"] = type_name_
    if metadata is not ...:
        fa["metadata"] = metadata
    return {
        "version": 2,
        "finished": False,
        "fixtureAction": fa,
        "fixtureSummary": {
            "isTied": False,
            "awayTeamScore": 3,
            "homeTeamScore": 7,
            "currentPeriod": 1,
            "currentStatus": "Live",
            "currentClockTime": "07:45",
            "periods": [
                {
                    "id": 1,
                    "type": "Regular",
                    "label": "Q1",
                    "start": "2023-09-10T17:00:00",
                    "end": None,
                    "awayTeamScore": 3,
                    "homeTeamScore": 7,
                    "awayTeamPeriodScore": 3,
                    "homeTeamPeriodScore": 7,
                }
            ],
        },
    }


LINEUP_V2 = {
    "teamId": HOME,
    "startingLineup": [
        {
            "id": P1,
            "fullName": "Ana Lopez",
            "lastName": "Lopez",
            "firstName": "Ana",
            "shirtNumber": "7",
        }
    ],
    "substitutes": [
        {"id": P2, "fullName": "Pele", "lastName": "Pele", "firstName": None, "shirtNumber": "_10"}
    ],
}
LINEUP_V1 = {
    "TeamId": HOME,
    "StartingLineup": [
        {
            "Id": P1,
            "FullName": "Ana Lopez",
            "LastName": "Lopez",
            "FirstName": "Ana",
            "ShirtNumber": "7",
        }
    ],
    "Substitutes": [
        {"Id": P2, "FullName": "Pele", "LastName": "Pele", "FirstName": None, "ShirtNumber": "_10"}
    ],
}
LINEUPS = Lineups(
    team_id=uuid.UUID(HOME),
    starting_lineup=[
        LineupPlayer(
            id=uuid.UUID(P1),
            full_name="Ana Lopez",
            last_name="Lopez",
            first_name="Ana",
            shirt_number="7",
        )
    ],
    substitutes=[
        LineupPlayer(
            id=uuid.UUID(P2),
            full_name="Pele",
            last_name="Pele",
            first_name=None,
            shirt_number="_10",
        )
    ],
)

METADATA_CASES = [
    (
        2,
        "Team Colours",
        {"awayTeamColour": "0, 0, 255", "homeTeamColour": "255, 0, 0"},
        {"AwayTeamColour": "0, 0, 255", "HomeTeamColour": "255, 0, 0"},
        TeamColours(away_team_colour="0, 0, 255", home_team_colour="255, 0, 0"),
    ),
    (
        1,
        "Match Conditions",
        {
            "pitchConditions": {"quality": 2, "surface": 1},
            "weatherConditions": {"rain": 0, "wind": 3, "temperature": -2},
        },
        {
            "PitchConditions": {"Quality": 2, "Surface": 1},
            "WeatherConditions": {"Rain": 0, "Wind": 3, "Temperature": -2},
        },
        msgspec.convert(
            {
                "pitchConditions": {"quality": 2, "surface": 1},
                "weatherConditions": {"rain": 0, "wind": 3, "temperature": -2},
            },
            MatchConditions,
        ),
    ),
    (
        19,
        "Device Location",
        {"latitude": 40.4168, "longitude": -3.7038},
        {"Latitude": 40.4168, "Longitude": -3.7038},
        DeviceLocation(latitude=40.4168, longitude=-3.7038),
    ),
    (3, "Lineups", LINEUP_V2, LINEUP_V1, LINEUPS),
    (
        233,
        "3PT Shot",
        {"courtPosition": {"x": 12.5, "y": 80.25, "zone": "LeftCorner"}},
        {"CourtPosition": {"X": 12.5, "Y": 80.25, "Zone": "LeftCorner"}},
        ThreePointShot(court_position=ShotPosition(x=12.5, y=80.25, zone="LeftCorner")),
    ),
]


@pytest.mark.parametrize("spelling", ["v2", "v1"])
@pytest.mark.parametrize(("type_id", "name", "v2", "v1", "expected"), METADATA_CASES)
def test_metadata_of_the_five_types_in_both_spellings(
    spelling: str, type_id: int, name: str, v2: Any, v1: Any, expected: Any
) -> None:
    wire = v2 if spelling == "v2" else v1
    (action,) = decode(list[Action], js([action_json(type_id, name, wire)]))
    md = action.fixture_action.metadata
    assert type(md) is type(expected)
    assert md == expected


@pytest.mark.parametrize(("type_id", "name", "v2", "v1", "expected"), METADATA_CASES)
def test_metadata_type_falls_back_to_the_type_name(
    type_id: int, name: str, v2: Any, v1: Any, expected: Any
) -> None:
    action = decode(Action, js(action_json(None, name, v2)))
    assert action.fixture_action.metadata_type is type(expected)
    assert action.fixture_action.metadata == expected


def test_lineup_first_name_may_be_null() -> None:
    md = decode(Action, js(action_json(3, "Lineups", LINEUP_V2))).fixture_action.metadata
    assert isinstance(md, Lineups)
    assert md.substitutes[0].first_name is None and md.substitutes[0].shirt_number == "_10"
    assert md.starting_lineup[0].first_name == "Ana"


def test_metadata_of_an_unknown_type_is_a_plain_dict() -> None:
    wire = {"Yards": 12, "nested": {"Keep": "as sent"}}
    fa = decode(Action, js(action_json(777, "Rushing Play", wire))).fixture_action
    assert fa.metadata_type is None
    assert fa.metadata == wire  # keys untouched for types without a Struct


@pytest.mark.parametrize("wire", [..., None])
def test_absent_or_null_metadata_is_none(wire: Any) -> None:
    fa = decode(Action, js(action_json(4, "Start Fixture", wire))).fixture_action
    assert fa.metadata is None
    assert fa.metadata_as(TeamColours) is None


def test_metadata_as_decodes_into_a_chosen_type() -> None:
    fa = decode(Action, js(action_json(900, "Kick", {"awayTeamColour": "1, 2, 3"}))).fixture_action
    assert fa.metadata_as(TeamColours) == TeamColours(away_team_colour="1, 2, 3")


def test_bad_metadata_raises_decode_error_naming_the_path() -> None:
    wire = {"courtPosition": {"x": "far", "y": 1.0, "zone": "Top"}}
    fa = decode(Action, js(action_json(233, "3PT Shot", wire))).fixture_action  # lazy: no error
    with pytest.raises(DecodeError) as info:
        _ = fa.metadata
    err = info.value
    assert err.target == "ThreePointShot"
    assert err.path == "$.fixtureAction.metadata.courtPosition.x"
    assert err.snippet == '"far"'
    assert ACT in err.reason and "233" in err.reason


def test_action_record_fields_and_quirks() -> None:
    wire = action_json(
        2,
        "Team Colours",
        {"awayTeamColour": "0, 0, 255"},
        timelineSequence=1.0e-16,
        fixtureActionSubType="Colour Change",
        fixtureActionSubTypeId=41,
        sendType="Deleted",
        sendTypeId=9,
        somethingNew={"a": 1},
    )
    wire["fixtureSummary"]["isHomeTeamInPossesion"] = True
    wire["fixtureSummary"]["currentStatus"] = "Suspended"
    text = js([wire]).replace(b"1e-16", b"1.0E-16")
    assert b"1.0E-16" in text
    (action,) = decode(list[Action], text)
    assert action.version == 2 and action.finished is False
    fa = action.fixture_action
    assert fa.action_id == uuid.UUID(ACT) and fa.fixture_id == uuid.UUID(FIX)
    assert fa.timeline_sequence == 1.0e-16
    assert (fa.fixture_seq_num, fa.period, fa.clock_time) == (12, 1, "07:45")
    assert (fa.fixture_action_type, fa.fixture_action_type_id) == ("Team Colours", 2)
    assert (fa.fixture_action_sub_type, fa.fixture_action_sub_type_id) == ("Colour Change", 41)
    assert (fa.send_type, fa.send_type_id) == ("Deleted", 9)  # values beyond the three listed
    assert fa.send_type != SendType.CONFIRMED
    assert fa.timestamp == at(2023, 9, 10, 17, 2, 3, 456000)
    assert fa.team is not None and fa.team.name == "Home"
    assert fa.player is not None and fa.player.id == uuid.UUID(P1)
    s = action.fixture_summary
    assert s is not None and s.current_status == "Suspended" and s.is_home_team_in_possesion
    assert (s.home_team_score, s.away_team_score, s.is_tied, s.current_period) == (7, 3, False, 1)
    (period,) = s.periods
    assert period.start == at(2023, 9, 10, 17) and period.end is None
    assert (period.home_team_period_score, period.away_team_period_score) == (7, 3)


def test_closing_action_has_finished_and_period_end() -> None:
    wire = action_json(21, "Post Match Check Complete")
    wire["finished"] = True
    wire["fixtureSummary"]["currentStatus"] = "Completed"
    wire["fixtureSummary"]["periods"][0]["end"] = "2023-09-10T17:15:00"
    action = decode(Action, js(wire))
    assert action.finished is True
    assert action.fixture_summary is not None
    assert action.fixture_summary.periods[0].end == at(2023, 9, 10, 17, 15)


def test_metadata_survives_a_reused_input_buffer() -> None:
    buf = bytearray(js([action_json(2, "Team Colours", {"awayTeamColour": "1, 2, 3"})]))
    (action,) = decode(list[Action], buf)
    buf[:] = b" " * len(buf)  # the caller reuses its buffer
    assert action.fixture_action.metadata == TeamColours(away_team_colour="1, 2, 3")


def test_action_encodes_back_with_metadata_or_without() -> None:
    with_md = decode(Action, js(action_json(2, "Team Colours", {"awayTeamColour": "1, 2, 3"})))
    without = decode(Action, js(action_json(4, "Start Fixture")))
    for action in (with_md, without):
        again = decode(Action, encode(action))
        assert again == action
        assert again.fixture_action.metadata == action.fixture_action.metadata


# --------------------------------------------------------------------------- 2.4 standings


def team_stats_json(**over: Any) -> dict[str, Any]:
    return {
        "teamId": HOME,
        "name": "Home",
        "totalWins": 10,
        "homeWins": 6,
        "awayWins": 4,
        "totalLosses": 3,
        "homeLosses": 1,
        "awayLosses": 2,
        "lossesByWalkover": 0,
        "totalDraws": 2,
        "homeDraws": 1,
        "awayDraws": 1,
        "points": 32,
        "last10GamesWinLose": "W W D L W W W D W L",
        "overtimeGamesWinLose": "",
        "currentStreak": -1,
        "longestWinningStreak": 5,
        "homeStreak": 3,
        "awayStreak": -2,
        "score": 30,
        "homeScore": 18,
        "awayScore": 12,
        "opponentsScore": 14,
        "homeOpponentsScore": 5,
        "awayOpponentsScore": 9,
        "averageScore": 2.0,
        "averageOpponentsScore": 0.93,
        "averageHomeOpponentsScore": 0.63,
        "averageAwayOpponentsScore": 1.29,
        "averageHomeScore": 2,
        "averageAwayScore": 1.71,
        "gamesPlayed": 15,
        "gamesWinPercentage": 0.667,
        "rank": 1,
        "advancedTeamStatistics": "null",
        **over,
    }


def standings_json(key: str, teams: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        key: teams,
        "timestamp": "2023-10-01T12:00:00",
        "stage": {"id": "6f1d4a2e-5b7c-4d8e-9f00-0000000000d1", "name": "Regular Season"},
        "group": {"id": "6f1d4a2e-5b7c-4d8e-9f00-0000000000d9", "name": None},
    }


@pytest.mark.parametrize("key", ["teamsStatistics", "teamStatistics"])
def test_standings_team_list_under_either_name(key: str) -> None:
    (packet,) = decode(list[Standings], js([standings_json(key, [team_stats_json()])]))
    (team,) = packet.teams_statistics
    assert team.team_id == uuid.UUID(HOME) and team.rank == 1 and team.points == 32
    assert packet.timestamp == at(2023, 10, 1, 12)
    assert packet.stage is not None and packet.stage.name == "Regular Season"
    assert packet.group is not None and packet.group.name is None


def test_standings_team_statistics_fields_and_quirks() -> None:
    t = decode(Standings, js(standings_json("teamsStatistics", [team_stats_json()])))
    (team,) = t.teams_statistics
    assert team.overtime_games_win_lose is None  # "" on the wire
    assert team.advanced_team_statistics is None  # the text "null"
    assert team.last10_games_win_lose == "W W D L W W W D W L"
    assert (team.current_streak, team.away_streak, team.longest_winning_streak) == (-1, -2, 5)
    assert (team.total_wins, team.home_wins, team.away_wins) == (10, 6, 4)
    assert (team.total_losses, team.losses_by_walkover, team.total_draws) == (3, 0, 2)
    assert (team.score, team.opponents_score, team.home_opponents_score) == (30, 14, 5)
    assert team.average_home_score == 2.0 and team.average_away_score == 1.71
    assert team.games_win_percentage == 0.667 and team.games_played == 15


@pytest.mark.parametrize(
    ("wire", "expected"), [("", None), (3, 3), ("4", 4), (None, None), ("n/a", None)]
)
def test_overtime_games_int_or_empty_text(wire: Any, expected: int | None) -> None:
    packet = decode(
        Standings,
        js(standings_json("teamStatistics", [team_stats_json(overtimeGamesWinLose=wire)])),
    )
    assert packet.teams_statistics[0].overtime_games_win_lose == expected


@pytest.mark.parametrize(
    ("wire", "expected"), [("null", None), (None, None), ("elo 1500", "elo 1500")]
)
def test_advanced_team_statistics_null_text(wire: Any, expected: str | None) -> None:
    body = js(standings_json("teamsStatistics", [team_stats_json(advancedTeamStatistics=wire)]))
    assert decode(Standings, body).teams_statistics[0].advanced_team_statistics == expected


def test_standings_without_team_list_and_encode_round_trip() -> None:
    empty = decode(Standings, b"{}")
    assert empty.teams_statistics == [] and empty.timestamp is None
    packet = decode(Standings, js(standings_json("teamStatistics", [team_stats_json()])))
    assert decode(Standings, encode(packet)) == packet


# --------------------------------------------------------------------------- 2.5 statistics


def statistics_json(advanced: Any = ..., **over: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "seqNum": 412,
        "traceId": "b7f1c2",
        "version": 2,
        "finished": True,
        "fixtureId": FIX,
        "timestamp": "2023-11-05T21:14:07.123456789Z",
        "teamActionAggregates": [
            {
                "team": {"id": HOME, "name": "Home"},
                "gameActionAggregates": [
                    {
                        "action": "Point",
                        "actionId": 10,
                        "actionAggregate": 25,
                        "subActionAggregates": [
                            {"subAction": "Ace", "subActionId": 101, "subActionAggregate": 4}
                        ],
                    },
                    {
                        "action": "Timeout",
                        "actionId": 11,
                        "actionAggregate": 2,
                        "subActionAggregates": [],
                    },
                ],
                "periodActionAggregates": [
                    {
                        "period": 1,
                        "aggregates": [
                            {
                                "action": "Point",
                                "actionId": 10,
                                "actionAggregate": 12,
                                "subActionAggregates": [],
                            }
                        ],
                    }
                ],
                "playerActionAggregates": [],
            }
        ],
        **over,
    }
    if advanced is not ...:
        body["advancedSportStatistics"] = advanced
    return body


BALLS = {
    "redBalls": 3,
    "blueBalls": 1,
    "pinkBalls": 0,
    "blackBalls": 2,
    "brownBalls": 0,
    "greenBalls": 0,
    "yellowBalls": 0,
}
CUE = {
    "startingStriker": P1,
    "breaksStatistics": {
        "breaks": [
            {
                "score": 27,
                "breakSeq": 1,
                "playerId": P1,
                "playerName": "Ana Lopez",
                "pottedBalls": BALLS,
                "startTimestamp": "2023-11-05T20:01:00.5",
                "endTimestamp": "2023-11-05T20:03:10",
                "periodNumber": 1,
            }
        ]
    },
    "remainingBallsStatistics": {
        "possiblePoints": 75,
        "remainingBalls": {**BALLS, "redBalls": 12, "yellowBalls": 1},
        "nextExpectedBall": "Red",
    },
    "averageShotTimeStatistics": {
        "averageShotTimes": {P1: "00:00:21.5000000", P2: "1.02:03:04.0000001"},
        "playersShotTimes": {
            P1: {
                "playerId": P1,
                "shotTimes": [
                    {
                        "shotStart": "2023-11-05T20:01:00",
                        "shotEnd": "2023-11-05T20:01:19.25",
                        "duration": "00:00:19.2500000",
                    }
                ],
            }
        },
    },
    "someUnknownKey": {"kept": [1, 2, 3]},
}


def test_statistics_packet_and_nanosecond_timestamp() -> None:
    stats = decode(Statistics, js(statistics_json()))
    assert (stats.seq_num, stats.trace_id, stats.version, stats.finished) == (
        412,
        "b7f1c2",
        2,
        True,
    )
    assert stats.fixture_id == uuid.UUID(FIX)
    # nanoseconds on the wire, rounded to microseconds, aware
    assert stats.timestamp == at(2023, 11, 5, 21, 14, 7, 123457)
    assert stats.timestamp is not None and stats.timestamp.tzinfo is not None
    (team,) = stats.team_action_aggregates
    assert team.team is not None and team.team.name == "Home"
    point, timeout = team.game_action_aggregates
    assert (point.action, point.action_id, point.action_aggregate) == ("Point", 10, 25)
    assert point.sub_action_aggregates[0].sub_action == "Ace"
    assert point.sub_action_aggregates[0].sub_action_aggregate == 4
    assert timeout.sub_action_aggregates == []
    assert team.period_action_aggregates[0].period == 1
    assert team.period_action_aggregates[0].aggregates[0].action_aggregate == 12
    assert team.player_action_aggregates == []
    assert stats.advanced_sport_statistics is None


def test_cue_sport_advanced_statistics() -> None:
    adv = decode(Statistics, js(statistics_json(CUE))).advanced_sport_statistics
    assert isinstance(adv, AdvancedSportStatistics)
    assert adv.starting_striker == P1
    ast = adv.average_shot_time_statistics
    assert ast is not None
    assert ast.average_shot_times[P1] == timedelta(seconds=21.5)
    assert isinstance(ast.average_shot_times[P1], timedelta)
    assert ast.average_shot_times[P2] == timedelta(days=1, hours=2, minutes=3, seconds=4)
    (shot,) = ast.players_shot_times[P1].shot_times
    assert ast.players_shot_times[P1].player_id == P1
    assert shot.duration == timedelta(seconds=19.25)
    assert shot.shot_start == at(2023, 11, 5, 20, 1) and shot.shot_end == at(
        2023, 11, 5, 20, 1, 19, 250000
    )
    assert adv.breaks_statistics is not None
    (brk,) = adv.breaks_statistics.breaks
    assert (brk.score, brk.break_seq, brk.player_id, brk.player_name) == (27, 1, P1, "Ana Lopez")
    assert brk.period_number == 1
    assert brk.potted_balls is not None and brk.potted_balls.red_balls == 3
    assert brk.potted_balls.black_balls == 2
    assert brk.start_timestamp == at(2023, 11, 5, 20, 1, 0, 500000)
    rem = adv.remaining_balls_statistics
    assert rem is not None and rem.possible_points == 75 and rem.next_expected_ball == "Red"
    assert rem.remaining_balls is not None and rem.remaining_balls.red_balls == 12
    assert adv.raw["someUnknownKey"] == {"kept": [1, 2, 3]}
    assert adv.raw["averageShotTimeStatistics"]["averageShotTimes"][P1] == "00:00:21.5000000"


def test_non_cue_advanced_statistics_keep_everything_raw() -> None:
    other = {"possessionShare": {"home": 0.54}, "heatMap": [[0, 1], [2, 3]]}
    adv = decode(Statistics, js(statistics_json(other))).advanced_sport_statistics
    assert adv is not None
    assert adv.raw == other
    assert adv.starting_striker is None and adv.breaks_statistics is None
    assert adv.remaining_balls_statistics is None and adv.average_shot_time_statistics is None


def test_statistics_encode_round_trip_keeps_durations_and_raw() -> None:
    stats = decode(Statistics, js(statistics_json(CUE)))
    again = decode(Statistics, encode(stats))
    assert again == stats
    assert again.advanced_sport_statistics is not None
    ast = again.advanced_sport_statistics.average_shot_time_statistics
    assert ast is not None and ast.average_shot_times[P2] == timedelta(1, 7384, 0)


def test_bad_shot_time_names_the_map_key() -> None:
    bad = json.loads(json.dumps(CUE))
    bad["averageShotTimeStatistics"]["averageShotTimes"][P2] = "soon"
    with pytest.raises(DecodeError) as info:
        decode(Statistics, js(statistics_json(bad)))
    err = info.value
    assert err.target == "Statistics"
    assert err.path == (
        f'$.advancedSportStatistics.averageShotTimeStatistics.averageShotTimes["{P2}"]'
    )
    assert err.snippet == '"soon"' and "invalid duration" in err.reason


def test_bad_cue_break_names_the_nested_path() -> None:
    bad = json.loads(json.dumps(CUE))
    bad["breaksStatistics"]["breaks"][0]["score"] = "27"
    with pytest.raises(DecodeError) as info:
        decode(Statistics, js(statistics_json(bad)))
    assert info.value.path == "$.advancedSportStatistics.breaksStatistics.breaks[0].score"
    assert info.value.snippet == '"27"'


# --------------------------------------------------------------------------- durations


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("00:00:21.5000000", timedelta(seconds=21.5)),
        ("01:02:03.0000000", timedelta(hours=1, minutes=2, seconds=3)),
        ("1.02:03:04.0000001", timedelta(days=1, hours=2, minutes=3, seconds=4)),
        ("1.02:03:04.0000005", timedelta(days=1, hours=2, minutes=3, seconds=4, microseconds=1)),
        ("00:00:00.1234565", timedelta(microseconds=123457)),
        ("00:00:05", timedelta(seconds=5)),
        ("-00:00:01.5000000", timedelta(seconds=-1.5)),
        ("26:00:00", timedelta(hours=26)),
        ("PT1M30S", timedelta(seconds=90)),
    ],
)
def test_parse_duration(text: str, expected: timedelta) -> None:
    d = parse_duration(text)
    assert isinstance(d, Duration) and d == expected


@pytest.mark.parametrize(
    "text", ["", "soon", "1:2:3", "00:60:00", "00:00:60", "1.24:00:00", "00:00:01.", "P", "1 day"]
)
def test_parse_duration_rejects_bad_text(text: str) -> None:
    with pytest.raises(ValueError, match="invalid duration"):
        parse_duration(text)


def test_format_duration() -> None:
    assert format_duration(timedelta(seconds=21.5)) == "00:00:21.5000000"
    assert format_duration(timedelta(days=1, hours=2, minutes=3, seconds=4)) == "1.02:03:04.0000000"
    assert format_duration(timedelta(seconds=-1.5)) == "-00:00:01.5000000"


@given(st.timedeltas(min_value=timedelta(days=-9999), max_value=timedelta(days=9999)))
def test_parse_duration_round_trips_the_formatter(value: timedelta) -> None:
    assert parse_duration(format_duration(value)) == value


@given(
    st.integers(0, 99),
    st.integers(0, 23),
    st.integers(0, 59),
    st.integers(0, 59),
    st.integers(0, 9_999_999),
)
def test_parse_duration_of_seven_digit_ticks(d: int, h: int, m: int, s: int, ticks: int) -> None:
    text = f"{d}.{h:02d}:{m:02d}:{s:02d}.{ticks:07d}"
    expected = timedelta(days=d, hours=h, minutes=m, seconds=s, microseconds=(ticks + 5) // 10)
    assert parse_duration(text) == expected


def test_duration_field_rejects_non_text() -> None:
    with pytest.raises(DecodeError) as info:
        decode(dict[str, Duration], b'{"a": 12}')
    assert "Expected duration text" in info.value.reason


# --------------------------------------------------------------------------- 2.6 snooker


TEXT_IDS = {
    "competitionId": FIX,
    "seasonId": "6f1d4a2e-5b7c-4d8e-9f00-0000000000e1",
    "stageId": "6f1d4a2e-5b7c-4d8e-9f00-0000000000d1",
}


def player_ids(person: str = P1) -> dict[str, str]:
    return {"personId": person, "clubId": HOME, "teamId": AWAY}


def test_snooker_tournaments() -> None:
    body = {
        "data": [
            {
                "tournamentId": 1401,
                "externalTournamentId": TEXT_IDS,
                "tournamentName": "UK Championship",
                "startDate": "2023-11-25T00:00:00Z",
                "endDate": "2023-12-03T00:00:00",
                "seasonId": 2023,
                "seasonStartYear": 2023,
                "seasonEndYear": 2024,
                "seasonName": "2023/2024",
            }
        ]
    }
    (t,) = decode(Data[list[Tournament]], js(body)).data
    assert t.tournament_id == 1401 and t.tournament_name == "UK Championship"
    assert t.start_date == at(2023, 11, 25) and t.end_date == at(2023, 12, 3)
    assert t.external_tournament_id is not None
    assert t.external_tournament_id.competition_id == uuid.UUID(FIX)
    assert (t.season_id, t.season_start_year, t.season_end_year, t.season_name) == (
        2023,
        2023,
        2024,
        "2023/2024",
    )


MATCH = {
    "matchId": 9001,
    "matchExternalId": FIX,
    "tournamentMatchNumber": 12,
    "player1Id": 5,
    "player2Id": 6,
    "player1FirstName": "Ronnie",
    "player1LastName": "O'Sullivan",
    "player2FirstName": "Judd",
    "player2LastName": "Trump",
    "roundNumber": 7,
    "roundName": "Final",
    "isWalkover": False,
    "player1Break": 147,
    "player1Points": 610,
    "player1Frames": 10,
    "player2Break": 98,
    "player2Points": 420,
    "player2Frames": 7,
    "player1FrameBreaks": "147, 56",
    "player2FrameBreaks": "98",
    "player1Shots": 301,
    "player2Shots": 288,
    "bestOutOfFrames": 19,
}


def test_snooker_matches_and_data_holding_one_or_many() -> None:
    (m,) = decode(Data[list[Match]], js({"data": [MATCH]})).data
    assert m.match_id == 9001 and m.match_external_id == uuid.UUID(FIX)
    assert (m.player1_first_name, m.player2_last_name) == ("Ronnie", "Trump")
    assert (m.player1_break, m.player1_frames, m.player2_frames) == (147, 10, 7)
    assert m.player1_frame_breaks == "147, 56" and m.best_out_of_frames == 19
    assert (m.round_number, m.round_name, m.is_walkover) == (7, "Final", False)
    assert (m.player1_shots, m.player2_shots, m.tournament_match_number) == (301, 288, 12)
    either = Data[list[Match] | Match]
    assert decode(either, js({"data": MATCH})).data == m
    assert decode(either, js({"data": [MATCH, MATCH]})).data == [m, m]


def test_snooker_ast_with_all_zero_person_id() -> None:
    body = {
        "data": [
            {
                "playerId": 5,
                "playerExternalId": player_ids(str(ZERO_UUID)),
                "playerFirstName": "Ronnie",
                "playerLastName": "O'Sullivan",
                "playerAst": 17.84,
                "tournamentId": 1401,
                "tournamentExternalId": TEXT_IDS,
            },
            {"playerId": 6, "playerExternalId": player_ids(), "playerAst": 24},
        ]
    }
    zero, known = decode(Data[list[PlayerAst]], js(body)).data
    assert zero.player_external_id is not None
    assert zero.player_external_id.person_id is None  # all-zero means unknown
    assert zero.player_external_id.club_id == uuid.UUID(HOME)
    assert zero.player_ast == 17.84 and zero.tournament_id == 1401
    assert zero.tournament_external_id is not None
    assert zero.tournament_external_id.stage_id == uuid.UUID(TEXT_IDS["stageId"])
    assert known.player_external_id is not None
    assert known.player_external_id.person_id == uuid.UUID(P1)
    assert known.player_ast == 24.0


def test_snooker_tournament_players() -> None:
    body = {
        "data": [
            {
                "playerId": 5,
                "playerExternalId": player_ids(),
                "playerFirstName": "Ronnie",
                "playerSecondName": "O'Sullivan",
                "country": "England",
                "dateOfBirth": "1975-12-05T00:00:00",
            }
        ]
    }
    (p,) = decode(Data[list[TournamentPlayer]], js(body)).data
    assert (p.player_first_name, p.player_second_name, p.country) == (
        "Ronnie",
        "O'Sullivan",
        "England",
    )
    assert p.date_of_birth == at(1975, 12, 5)


def test_snooker_century_breaks() -> None:
    body = {
        "data": [
            {
                "tournamentId": 1401,
                "tournamentExternalId": TEXT_IDS,
                "break": 147,
                "playerId": 5,
                "playerExternalId": player_ids(),
                "playerFirstName": "Ronnie",
                "playerLastName": "O'Sullivan",
                "opponentId": 6,
                "opponentExternalId": player_ids(str(ZERO_UUID)),
                "opponentFirstName": "Judd",
                "opponentLastName": "Trump",
                "roundId": 7,
                "roundName": "Final",
                "frame": 11,
                "date": "2023-12-03T20:15:30.1234567",
            }
        ]
    }
    (b,) = decode(Data[list[Break]], js(body)).data
    assert b.break_ == 147 and b.frame == 11 and b.round_name == "Final"
    assert b.date == at(2023, 12, 3, 20, 15, 30, 123457)
    assert b.opponent_external_id is not None and b.opponent_external_id.person_id is None
    assert b.opponent_id == 6 and b.opponent_last_name == "Trump"


def test_snooker_current_winner_profile_as_one_object() -> None:
    body = {
        "data": {
            "playerId": 5,
            "playerExternalId": player_ids(),
            "playerFirstName": "Ronnie",
            "playerLastName": "O'Sullivan",
            "dateOfBirth": "1975-12-05T00:00:00",
            "placeOfBirth": "Wordsley",
            "nationality": "ENG",
            "lives": "Essex",
            "seasonRanking": 1,
            "seasonAst": 18.2,
            "matchesPlayed": 40,
            "matchesWon": 31,
            "matchesLost": 9,
            "highestBreak": 147,
        }
    }
    p = decode(Data[PlayerProfile], js(body)).data
    assert p.twitter is None  # optional
    assert (p.nationality, p.lives, p.place_of_birth) == ("ENG", "Essex", "Wordsley")
    assert (p.season_ranking, p.season_ast, p.highest_break) == (1, 18.2, 147)
    assert (p.matches_played, p.matches_won, p.matches_lost) == (40, 31, 9)
    assert p.date_of_birth == at(1975, 12, 5)


def test_snooker_previous_winners() -> None:
    winner = {
        "playerId": 5,
        "playerExternalId": player_ids(),
        "playerFirstName": "Ronnie",
        "playerLastName": "O'Sullivan",
        "tournamentId": 1401,
        "year": 2023,
    }
    body = {"data": [winner]}
    (w,) = decode(Data[list[PreviousWinner]], js(body)).data
    assert (w.player_id, w.tournament_id, w.year) == (5, 1401, 2023)


def test_snooker_player_image_content_is_bytes() -> None:
    png = b"\x89PNG\r\n\x1a\n\x00\x00"
    body = {
        "data": {
            "fileName": "ronnie.png",
            "fileContent": base64.b64encode(png).decode(),
            "fileType": "image/png",
        }
    }
    img = decode(Data[PlayerImage], js(body)).data
    assert img.file_content == png and img.file_type == "image/png"
    assert img.file_name == "ronnie.png"


# --------------------------------------------------------------------------- 2.7 events


EVENT = {
    "id": 4711,
    "title": "Home v Away",
    "tournament": {
        "id": 12,
        "name": "Superliga",
        "property": {"id": 3, "name": "Liga", "sport": {"id": 1, "name": "Volleyball"}},
    },
    "updatedAt": "2023-09-30T12:00:00+0000",
    "startDate": "2023-09-30T18:30:00+0000",
    "endDate": "2023-09-30T20:30:00Z",
    "vendorDataID": FIX,
    "restrictionRequest": "whitelist",
    "countryList": ["GB", "IE"],
    "subDivisionList": ["US-NY"],
}


def test_event_with_plus_0000_offsets() -> None:
    (e,) = decode(list[Event], js([EVENT]))
    assert e.id == 4711 and e.title == "Home v Away"
    assert e.updated_at == at(2023, 9, 30, 12) and e.updated_at is not None
    assert e.updated_at.utcoffset() == timedelta(0)
    assert e.start_date == at(2023, 9, 30, 18, 30) and e.end_date == at(2023, 9, 30, 20, 30)
    assert e.vendor_data_id == FIX and e.restriction_request == "whitelist"
    assert e.country_list == ["GB", "IE"] and e.sub_division_list == ["US-NY"]
    assert e.tournament is not None and e.tournament.property is not None
    assert e.tournament.property.sport is not None
    assert e.tournament.property.sport.name == "Volleyball"


def test_event_minimal_and_img_data_id_spelling() -> None:
    e = decode(Event, js({"id": 1, "imgDataID": "abc"}))
    assert e.vendor_data_id == "abc" and e.country_list == [] and e.updated_at is None
    both = decode(Event, js({"id": 1, "imgDataID": "abc", "vendorDataID": "xyz"}))
    assert both.vendor_data_id == "xyz"


def test_playback() -> None:
    p = decode(Playback, js({"eventId": 4711, "hlsUrl": "https://cdn.example/x.m3u8"}))
    assert (p.event_id, p.hls_url) == (4711, "https://cdn.example/x.m3u8")


# --------------------------------------------------------------------------- decode helpers


def test_decoder_is_cached_per_type() -> None:
    assert decoder(list[Fixture]) is decoder(list[Fixture])
    assert decoder(Fixture).type is Fixture


def test_validation_error_names_type_path_and_snippet() -> None:
    bad = fixture_json()
    bad["teams"][1]["id"] = "not-a-uuid"
    with pytest.raises(DecodeError) as info:
        decode(list[Fixture], js([fixture_json(), bad]), url="http://svc/basketball/fixtures")
    err = info.value
    assert err.target == "list[Fixture]"
    assert err.path == "$[1].teams[1].id"
    assert err.snippet == '"not-a-uuid"'
    assert err.reason == "Invalid UUID"
    assert err.url == "http://svc/basketball/fixtures"
    assert "$[1].teams[1].id" in str(err) and "list[Fixture]" in str(err)


def test_missing_required_field_snippet_is_the_object() -> None:
    with pytest.raises(DecodeError) as info:
        decode(FixturePage, js({"content": [{"id": FIX}, {"name": "no id"}]}))
    assert info.value.path == "$.content[1]"
    assert info.value.snippet == '{"name":"no id"}'
    assert "missing required field `id`" in info.value.reason


def test_snippet_is_at_most_200_chars() -> None:
    with pytest.raises(DecodeError) as info:
        decode(list[Fixture], js([{"name": "x" * 1000}]))
    assert len(info.value.snippet) <= 200 and info.value.snippet.startswith('{"name":"xxx')


def test_malformed_json_reports_offset_and_surrounding_bytes() -> None:
    body = b'[{"id": "' + FIX.encode() + b'", "name": "A v B",, "x": 1}]'
    with pytest.raises(DecodeError) as info:
        decode(list[Fixture], body)
    err = info.value
    assert err.offset == body.index(b",,") + 1
    assert '"A v B",,' in err.snippet and len(err.snippet) <= 200
    assert "malformed" in err.reason and err.target == "list[Fixture]"


def test_truncated_json() -> None:
    body = js([fixture_json()])[:-40]
    with pytest.raises(DecodeError) as info:
        decode(list[Fixture], body)
    assert info.value.offset == len(body)
    assert "truncated" in info.value.reason


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        (b"<!DOCTYPE html><html><body>502 Bad Gateway</body></html>", "HTML"),
        (b"  \n<html>", "HTML"),
        (b"Request is missing required HTTP header 'Accept'", "text"),
        (b"{The supplied authentication is invalid}", None),
    ],
)
def test_html_or_text_where_json_was_expected(body: bytes, kind: str | None) -> None:
    with pytest.raises(DecodeError) as info:
        decode(FixturePage, body)
    err = info.value
    if kind is None:  # starts like JSON: a malformed-JSON error at the first bad byte
        assert err.offset == 1 and "malformed" in err.reason
    else:
        assert err.reason == f"expected JSON, got {kind}"
        assert err.snippet == body.strip().decode()[:200]


def test_empty_body() -> None:
    with pytest.raises(DecodeError, match="empty body"):
        decode(Fixture, b"  ")


def test_wrong_root_kind() -> None:
    with pytest.raises(DecodeError) as info:
        decode(list[Fixture], js({"error": "nope", "status": 500}))
    assert info.value.path == "$" and info.value.reason == "Expected `array`, got `object`"
    assert info.value.snippet == '{"error":"nope","status":500}'


def test_decode_accepts_str_and_memoryview() -> None:
    text = json.dumps({"id": FIX})
    assert decode(Fixture, text).id == uuid.UUID(FIX)
    assert decode(Fixture, memoryview(text.encode())).id == uuid.UUID(FIX)


def test_split_message_joins_nested_paths() -> None:
    assert split_message("Expected `int`, got `str` - at `$.a[0]` - at `$.b`") == (
        "Expected `int`, got `str`",
        "$.b.a[0]",
    )
    assert split_message("Expected `array`, got `object`") == (
        "Expected `array`, got `object`",
        "$",
    )


def test_locate_resolves_dict_keys_by_kind_or_stops() -> None:
    doc = {"m": {"a": 1, "b": "x", "c": 2}}
    assert locate(doc, "$.m[...]", "Expected `int`, got `str`") == ('$.m["b"]', "x")
    # two candidates of the kind: stop at the dict, keep msgspec's path
    assert locate(doc, "$.m[...]", "Expected `str`, got `int`") == ("$.m[...]", doc["m"])
    assert locate(doc, "$.q[3]", "") == ("$.q[3]", doc)


def test_type_name() -> None:
    assert type_name(Data[list[Match] | Match]) == "Data[list[Match] | Match]"
    assert type_name(dict[str, Duration]) == "dict[str, Duration]"
    assert type_name(Fixture | None) == "Fixture | None"


# --------------------------------------------------------------------------- the real service
# Fields of the vendor's samples and field tables that api-spec does not list (issue 11).


def test_version_3_action_fields() -> None:
    from support.samples import ACTION_V3, DISALLOWED_ID, GOAL_ID, HOME_TEAM

    action = decode(Action, js(ACTION_V3))
    assert action.trace_id == "5e0c9a1f7d3b42c8a6e1f0b9d2c47a31"
    assert action.version == 3 and action.finished is False
    fa = action.fixture_action
    assert fa.action_id == uuid.UUID(DISALLOWED_ID)
    assert fa.related_fixture_action_ids == (uuid.UUID(GOAL_ID),)  # the goal it disallows
    assert fa.delay_status == "Delayed"
    assert fa.team is not None and fa.team.id == uuid.UUID(HOME_TEAM["id"])
    assert fa.team.home_team is True
    assert fa.timestamp == at(2024, 3, 1, 19, 41, 7, 318842)
    s = action.fixture_summary
    assert s is not None
    assert (s.collection_status, s.current_clock_state) == ("CollectionSuspended", "stopped")
    assert (s.reason, s.reason_id, s.finished) == ("Video feed lost", 4, False)
    assert s.is_home_team_in_possession is False  # the documented spelling
    assert [(p.label, p.type) for p in s.periods] == [
        ("1st half", "Regular"),
        ("2nd half", "Regular"),
    ]
    assert s.periods[1].end is None and s.periods[0].end == at(2024, 3, 1, 19, 17, 40)


def test_version_1_action_record_with_capitalised_metadata_keys() -> None:
    from support.samples import ACTION_V1

    (action,) = decode(list[Action], js([ACTION_V1]))
    assert action.version == 1 and action.trace_id is not None
    fa = action.fixture_action
    assert fa.metadata == TeamColours(away_team_colour="0, 51, 153", home_team_colour="204, 0, 0")
    assert fa.timeline_sequence == 1.0e-16 and fa.related_fixture_action_ids == ()
    assert fa.team is None and fa.delay_status is None
    s = action.fixture_summary
    assert s is not None and s.is_home_team_in_possession is True  # spelt as the service sends it
    assert s.is_home_team_in_possesion is True  # the old attribute name reads the same flag
    assert s.collection_status is None and s.current_clock_state is None and s.periods == []


def test_fields_absent_in_older_records_default_to_nothing() -> None:
    action = decode(Action, js(action_json(4, "Start Fixture")))
    assert action.trace_id is None
    fa, s = action.fixture_action, action.fixture_summary
    assert fa.related_fixture_action_ids == () and fa.delay_status is None
    assert fa.team is not None and fa.team.home_team is None
    assert s is not None and s.is_home_team_in_possession is None
    assert (s.collection_status, s.current_clock_state, s.finished, s.reason, s.reason_id) == (
        None,
        None,
        None,
        None,
        None,
    )


def test_reason_id_may_be_text() -> None:
    wire = action_json(4, "Start Fixture")
    wire["fixtureSummary"].update(reason="Crowd trouble", reasonId="R-7")
    s = decode(Action, js(wire)).fixture_summary
    assert s is not None and (s.reason, s.reason_id) == ("Crowd trouble", "R-7")


def test_fixture_rules_update_count_and_collection_status() -> None:
    from support.samples import SOCCER_FIXTURE

    f = decode(Fixture, js(SOCCER_FIXTURE))
    assert f.update_count == 3 and f.collection_status == "CollectingLive"
    assert [r.rule for r in f.rules] == [  # type: ignore[union-attr]
        "ExtraTime",
        "PeriodLength",
        "ExtraTimeLength",
        "PenaltyShootout",
        "PenaltyShootoutType",
    ]
    assert f.rule("PeriodLength") == "45" and f.rule("PenaltyShootoutType") == "ABBA"
    assert f.rule("ExtraTimeLength") == "null"  # as written: the text null
    assert f.rule("NoSuchRule") is None
    assert f.teams[0].home_team is True and f.teams[1].home_team is False
    again = decode(Fixture, encode(f))
    assert again == f and again.rule("ExtraTime") == "false"


def test_fixture_rules_as_an_object_or_with_plain_json_values() -> None:
    f = decode(Fixture, js(fixture_json(rules={"ExtraTime": True, "PeriodLength": 45})))
    assert f.rule("ExtraTime") is True and f.rule("PeriodLength") == 45
    g = decode(Fixture, js(fixture_json(rules=[{"rule": "PeriodLength", "value": 20}, {}])))
    assert g.rule("PeriodLength") == 20
    assert decode(Fixture, js(fixture_json())).rules == []


def test_statistics_period_labels_player_aggregates_text_flags_and_seven_digits() -> None:
    from support.samples import PLAYER_A, STATISTICS_V2

    stats = decode(Statistics, js(STATISTICS_V2))
    assert stats.timestamp == at(2024, 3, 1, 20, 29, 51, 441733)  # 7 digits, rounded to us
    home, away = stats.team_action_aggregates
    assert home.team is not None and home.team.home_team is True  # sent as "true"
    assert away.team is not None and away.team.home_team is False  # sent as "false"
    first, extra = home.period_action_aggregates
    assert (first.period, first.label, first.type) == (1, "1st half", "Regular")
    assert (extra.period, extra.label, extra.type) == (3, "1st half extra time", "ExtraTime")
    assert extra.aggregates[0].sub_action_aggregates[0].sub_action == "Header"
    (player,) = home.player_action_aggregates
    assert player.player is not None and player.player.id == uuid.UUID(PLAYER_A["id"])
    assert player.player.name == "Janis Berzins"
    assert player.game_action_aggregates[0].action_aggregate == 2
    assert player.period_action_aggregates[0].label is None  # absent: None
    assert player.period_action_aggregates[0].aggregates[0].action == "Goal"
    assert away.player_action_aggregates == []
    assert decode(Statistics, encode(stats)) == stats


@pytest.mark.parametrize(
    "text",
    [
        "2024-03-01T20:29:51.4417326Z",
        "2024-03-01T20:29:51.441732600Z",
        "2024-03-01T20:29:51.4417326",
        "2024-03-01T20:29:51.4417326+00:00",
    ],
)
def test_statistics_timestamps_with_seven_or_nine_digits(text: str) -> None:
    stats = decode(Statistics, js(statistics_json(timestamp=text)))
    assert stats.timestamp == at(2024, 3, 1, 20, 29, 51, 441733)


TRUE_TEXTS = ["true", "True", "TRUE", " true ", "1", "yes"]
FALSE_TEXTS = ["false", "False", "FALSE", "0", "no"]
FLAG_VALUES = st.sampled_from(
    [(True, True), (False, False), (None, None)]
    + [(t, True) for t in TRUE_TEXTS]
    + [(t, False) for t in FALSE_TEXTS]
    + [("", None), ("null", None), ("maybe", None)]
)


@given(
    sent=st.one_of(st.none(), FLAG_VALUES),
    documented=st.one_of(st.none(), FLAG_VALUES),
)
def test_possession_under_either_spelling_and_any_flag_form(
    sent: tuple[Any, bool | None] | None, documented: tuple[Any, bool | None] | None
) -> None:
    wire = action_json(8, "Start Clock")
    summary = wire["fixtureSummary"]
    if sent is not None:
        summary["isHomeTeamInPossesion"] = sent[0]
    if documented is not None:
        summary["isHomeTeamInPossession"] = documented[0]
    s = decode(Action, js(wire)).fixture_summary
    assert s is not None
    expected = documented[1] if documented is not None else None
    if expected is None and sent is not None:
        expected = sent[1]
    assert s.is_home_team_in_possession is expected
    assert s.is_home_team_in_possesion is expected


@given(value=FLAG_VALUES)
def test_home_team_flags_read_booleans_and_their_text(value: tuple[Any, bool | None]) -> None:
    wire, expected = value
    stats = decode(
        Statistics,
        js(statistics_json(teamActionAggregates=[{"team": {"id": HOME, "homeTeam": wire}}])),
    )
    team = stats.team_action_aggregates[0].team
    assert team is not None and team.home_team is expected
    action = decode(
        Action, js(action_json(4, "Start Fixture", team={"id": HOME, "homeTeam": wire}))
    )
    assert action.fixture_action.team is not None
    assert action.fixture_action.team.home_team is expected
    fixture = decode(Fixture, js(fixture_json(teams=[{"id": HOME, "homeTeam": wire}])))
    assert fixture.teams[0].home_team is expected


@given(text=st.text())
def test_any_flag_text_decodes(text: str) -> None:
    from asyncsports.models._types import loose_bool

    assert loose_bool(text) in (True, False, None)
    team = decode(Fixture, js(fixture_json(teams=[{"id": HOME, "homeTeam": text}]))).teams[0]
    assert team.home_team is loose_bool(text)


def test_a_flag_of_another_json_kind_is_a_decode_error() -> None:
    with pytest.raises(DecodeError) as info:
        decode(Fixture, js(fixture_json(teams=[{"id": HOME, "homeTeam": 1}])))
    assert info.value.path == "$.teams[0].homeTeam"
