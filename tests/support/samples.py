"""JSON written by hand from api-spec section 2, in the service's own spelling."""

from __future__ import annotations

import copy
from typing import Any

FIXTURE_ID = "6a0b2c1e-0f6e-4c1a-9a51-7f3a0f8d1c11"
SEASON_ID = "0f9d1d3b-6a61-4c9b-bb5c-9d2f4e1a7b22"

LOCATION = {"name": "Riga", "country": {"name": "Latvia"}, "continent": {"name": "Europe"}}

FIXTURE: dict[str, Any] = {
    "id": FIXTURE_ID,
    "name": "Riga Wolves v Tallinn Bears",
    "status": "Scheduled",
    "type": "Official",
    "coverageLevel": "In Venue",
    "startDateUTC": "2024-03-01T18:30:00",
    "fixtureDeleted": False,
    "teams": [
        {
            "id": "3b3e5a52-9a7e-4f0b-8f3a-1c1d2e3f4a01",
            "name": "Riga Wolves",
            "club": {"id": "3b3e5a52-9a7e-4f0b-8f3a-1c1d2e3f4a02", "name": "Wolves BC"},
            "category": {"id": 1, "name": "Men"},
            "homeTeam": True,
        },
        {
            "id": "3b3e5a52-9a7e-4f0b-8f3a-1c1d2e3f4a03",
            "name": "Tallinn Bears",
            "club": {"id": "3b3e5a52-9a7e-4f0b-8f3a-1c1d2e3f4a04", "name": "Bears BC"},
            "category": {"id": 1, "name": "Men"},
            "homeTeam": False,
        },
    ],
    "stage": {
        "id": "5c6d7e8f-1111-4222-8333-944455556666",
        "name": "Regular Season",
        "startDateUTC": "2023-09-01T00:00:00",
        "endDateUTC": "2024-05-01T00:00:00",
        "season": {
            "id": SEASON_ID,
            "name": "2023/24",
            "startDateUTC": "2023-09-01T00:00:00",
            "endDateUTC": "2024-05-31T00:00:00",
            "competition": {
                "id": "7d8e9f00-1111-4222-8333-944455557777",
                "name": "Baltic League",
                "category": {"id": 1, "name": "Men"},
                "tour": {"id": 4, "name": "Baltic"},
                "location": {"country": {}, "continent": {}},
            },
        },
    },
    "venue": {
        "id": "8e9f0011-1111-4222-8333-944455558888",
        "name": "Arena Riga",
        "location": LOCATION,
    },
}


def fixture(i: int = 0, **changes: Any) -> dict[str, Any]:
    """A copy of FIXTURE with a distinct id and name."""
    f = copy.deepcopy(FIXTURE)
    f["id"] = f"6a0b2c1e-0f6e-4c1a-9a51-{i:012d}"
    f["name"] = f"Home {i} v Away {i}"
    f.update(changes)
    return f


def envelope(items: list[Any], number: int, size: int, total: int) -> dict[str, Any]:
    """The paged list envelope of api-spec 2.1."""
    pages = max(1, -(-total // size))
    sort = {"empty": True, "unsorted": True, "sorted": False}
    return {
        "content": items,
        "pageable": {
            "pageNumber": number,
            "pageSize": size,
            "sort": sort,
            "offset": number * size,
            "paged": True,
            "unpaged": False,
        },
        "last": number + 1 >= pages,
        "first": number == 0,
        "totalPages": pages,
        "totalElements": total,
        "size": size,
        "number": number,
        "numberOfElements": len(items),
        "sort": sort,
        "empty": not items,
    }


SQUAD = {
    "id": "11111111-2222-4333-8444-555555555555",
    "season": {"id": SEASON_ID, "name": "2023/24"},
    "team": {"id": "3b3e5a52-9a7e-4f0b-8f3a-1c1d2e3f4a01", "name": "Riga Wolves"},
    "players": [
        {
            "id": "21111111-2222-4333-8444-555555555555",
            "fullName": "Janis Berzins",
            "firstName": "Janis",
            "lastName": "Berzins",
            "shirtNumber": "7",
            "location": LOCATION,
            "verified": True,
        },
        {
            "id": "31111111-2222-4333-8444-555555555555",
            "fullName": "Neymar",
            "firstName": "Neymar",
            "shirtNumber": "_10",
            "location": {"country": {}, "continent": {}},
            "verified": False,
        },
    ],
}


def action(
    seq: int, type_id: int = 8, type_name: str = "Start Clock", **extra: Any
) -> dict[str, Any]:
    """An American football action record of api-spec 2.3."""
    record: dict[str, Any] = {
        "version": 2,
        "finished": False,
        "fixtureAction": {
            "actionId": f"a1111111-2222-4333-8444-{seq:012d}",
            "fixtureId": FIXTURE_ID,
            "fixtureSeqNum": seq,
            "timelineSequence": seq,
            "fixtureActionType": type_name,
            "fixtureActionTypeId": type_id,
            "period": 1,
            "clockTime": "15:00",
            "timestamp": "2024-03-01T18:31:02.123Z",
            "sendType": "Confirmed",
            "sendTypeId": 5,
        },
        "fixtureSummary": {
            "isTied": True,
            "awayTeamScore": 0,
            "homeTeamScore": 0,
            "currentPeriod": 1,
            "currentStatus": "Live",
            "currentClockTime": "15:00",
            "periods": [
                {
                    "id": 1,
                    "type": "Regular",
                    "label": "Q1",
                    "start": "2024-03-01T18:30:00",
                    "end": None,
                    "awayTeamScore": 0,
                    "homeTeamScore": 0,
                    "awayTeamPeriodScore": 0,
                    "homeTeamPeriodScore": 0,
                }
            ],
        },
    }
    record["fixtureAction"].update(extra)
    return record


TEAM_STATS = {
    "teamId": "3b3e5a52-9a7e-4f0b-8f3a-1c1d2e3f4a01",
    "name": "Riga Wolves",
    "totalWins": 3,
    "homeWins": 2,
    "awayWins": 1,
    "totalLosses": 1,
    "homeLosses": 0,
    "awayLosses": 1,
    "lossesByWalkover": 0,
    "totalDraws": 1,
    "homeDraws": 1,
    "awayDraws": 0,
    "points": 10,
    "last10GamesWinLose": "W W D L W",
    "overtimeGamesWinLose": "",
    "currentStreak": 1,
    "longestWinningStreak": 2,
    "homeStreak": 2,
    "awayStreak": -1,
    "score": 9,
    "homeScore": 6,
    "awayScore": 3,
    "opponentsScore": 4,
    "homeOpponentsScore": 1,
    "awayOpponentsScore": 3,
    "averageScore": 1.8,
    "averageOpponentsScore": 0.8,
    "averageHomeOpponentsScore": 0.33,
    "averageAwayOpponentsScore": 1.5,
    "averageHomeScore": 2,
    "averageAwayScore": 1.5,
    "gamesPlayed": 5,
    "gamesWinPercentage": 0.6,
    "rank": 1,
    "advancedTeamStatistics": "null",
}

STANDINGS = {
    "teamsStatistics": [TEAM_STATS],
    "timestamp": "2024-03-02T10:00:00Z",
    "stage": {"id": "5c6d7e8f-1111-4222-8333-944455556666", "name": "Regular Season"},
    "group": {"id": "5c6d7e8f-1111-4222-8333-944455559999", "name": None},
}

STATISTICS = {
    "seqNum": 412,
    "traceId": "abc-123",
    "version": 2,
    "finished": True,
    "fixtureId": FIXTURE_ID,
    "timestamp": "2024-03-01T20:31:02.123456789Z",
    "teamActionAggregates": [
        {
            "team": {"id": "3b3e5a52-9a7e-4f0b-8f3a-1c1d2e3f4a01", "name": "Riga Wolves"},
            "gameActionAggregates": [
                {
                    "action": "3PT Shot",
                    "actionId": 233,
                    "actionAggregate": 11,
                    "subActionAggregates": [
                        {"subAction": "Made", "subActionId": 1, "subActionAggregate": 4}
                    ],
                }
            ],
            "periodActionAggregates": [
                {
                    "period": 1,
                    "aggregates": [
                        {
                            "action": "3PT Shot",
                            "actionId": 233,
                            "actionAggregate": 3,
                            "subActionAggregates": [],
                        }
                    ],
                }
            ],
            "playerActionAggregates": [],
        }
    ],
    "advancedSportStatistics": {
        "startingStriker": "p1",
        "averageShotTimeStatistics": {
            "averageShotTimes": {"p1": "00:00:21.5000000", "p2": "1.00:00:03.0000000"},
            "playersShotTimes": {},
        },
        "somethingNew": {"x": 1},
    },
}

PLAYER_EXT = {
    "personId": "00000000-0000-0000-0000-000000000000",
    "clubId": "41111111-2222-4333-8444-555555555555",
    "teamId": "51111111-2222-4333-8444-555555555555",
}
TOURNAMENT_EXT = {
    "competitionId": "61111111-2222-4333-8444-555555555555",
    "seasonId": "71111111-2222-4333-8444-555555555555",
    "stageId": "81111111-2222-4333-8444-555555555555",
}

TOURNAMENT = {
    "tournamentId": 101,
    "externalTournamentId": TOURNAMENT_EXT,
    "tournamentName": "Masters",
    "startDate": "2024-01-07T00:00:00Z",
    "endDate": "2024-01-14T00:00:00Z",
    "seasonId": 51,
    "seasonStartYear": 2023,
    "seasonEndYear": 2024,
    "seasonName": "2023/2024",
}

MATCH = {
    "matchId": 9001,
    "matchExternalId": "91111111-2222-4333-8444-555555555555",
    "tournamentMatchNumber": 1,
    "player1Id": 1,
    "player2Id": 2,
    "player1FirstName": "Ronnie",
    "player1LastName": "O'Sullivan",
    "player2FirstName": "Judd",
    "player2LastName": "Trump",
    "roundNumber": 1,
    "roundName": "Last 16",
    "isWalkover": False,
    "player1Break": 102,
    "player1Points": 520,
    "player1Frames": 6,
    "player2Break": 88,
    "player2Points": 400,
    "player2Frames": 4,
    "player1FrameBreaks": "102,55",
    "player2FrameBreaks": "88",
    "player1Shots": 210,
    "player2Shots": 190,
    "bestOutOfFrames": 11,
}

PLAYER_AST = {
    "playerId": 1,
    "playerExternalId": PLAYER_EXT,
    "playerFirstName": "Ronnie",
    "playerLastName": "O'Sullivan",
    "playerAst": 17.25,
    "tournamentId": 101,
    "tournamentExternalId": TOURNAMENT_EXT,
}

TOURNAMENT_PLAYER = {
    "playerId": 1,
    "playerExternalId": PLAYER_EXT,
    "playerFirstName": "Ronnie",
    "playerSecondName": "O'Sullivan",
    "country": "England",
    "dateOfBirth": "1975-12-05T00:00:00Z",
}

BREAK = {
    "tournamentId": 101,
    "tournamentExternalId": TOURNAMENT_EXT,
    "break": 147,
    "playerId": 1,
    "playerExternalId": PLAYER_EXT,
    "playerFirstName": "Ronnie",
    "playerLastName": "O'Sullivan",
    "opponentId": 2,
    "opponentExternalId": PLAYER_EXT,
    "opponentFirstName": "Judd",
    "opponentLastName": "Trump",
    "roundId": 3,
    "roundName": "Final",
    "frame": 9,
    "date": "2024-01-14T19:02:11.5Z",
}

PLAYER_PROFILE = {
    "playerId": 1,
    "playerExternalId": PLAYER_EXT,
    "playerFirstName": "Ronnie",
    "playerLastName": "O'Sullivan",
    "dateOfBirth": "1975-12-05T00:00:00Z",
    "placeOfBirth": "Wordsley",
    "nationality": "ENG",
    "lives": "Essex",
    "seasonRanking": 1,
    "seasonAst": 17.1,
    "matchesPlayed": 40,
    "matchesWon": 33,
    "matchesLost": 7,
    "highestBreak": 147,
}

PREVIOUS_WINNER = {
    "playerId": 1,
    "playerExternalId": PLAYER_EXT,
    "playerFirstName": "Ronnie",
    "playerLastName": "O'Sullivan",
    "tournamentId": 101,
    "year": 2017,
}

PNG_1x1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
PLAYER_IMAGE = {"fileName": "ronnie.png", "fileContent": PNG_1x1, "fileType": "image/png"}

EVENT = {
    "id": 4211,
    "title": "Masters Final",
    "tournament": {
        "id": 12,
        "name": "Masters",
        "property": {"id": 3, "name": "World Snooker", "sport": {"id": 9, "name": "Snooker"}},
    },
    "updatedAt": "2024-01-14T12:00:00+0000",
    "startDate": "2024-01-14T13:00:00",
    "endDate": "2024-01-14T22:00:00",
}


# --------------------------------------------------------------------------- the real service
# Records shaped like the vendor's published samples and field tables (fields api-spec does
# not list), written by hand with our own values.

GOAL_ID = "c0a1b2c3-0000-4000-8000-00000000a001"
DISALLOWED_ID = "c0a1b2c3-0000-4000-8000-00000000a002"
HOME_TEAM = {"id": "3b3e5a52-9a7e-4f0b-8f3a-1c1d2e3f4a01", "name": "Riga Wolves"}
AWAY_TEAM = {"id": "3b3e5a52-9a7e-4f0b-8f3a-1c1d2e3f4a03", "name": "Tallinn Bears"}

ACTION_V3: dict[str, Any] = {
    "traceId": "5e0c9a1f7d3b42c8a6e1f0b9d2c47a31",
    "version": 3,
    "finished": False,
    "fixtureAction": {
        "period": 2,
        "actionId": DISALLOWED_ID,
        "team": {**HOME_TEAM, "homeTeam": True},
        "sendType": "Confirmed",
        "clockTime": "63:12",
        "fixtureId": FIXTURE_ID,
        "timestamp": "2024-03-01T19:41:07.318842Z",
        "sendTypeId": 5,
        "fixtureSeqNum": 412,
        "timelineSequence": 2.0000000000000412,
        "fixtureActionType": "Goal Disallowed",
        "fixtureActionTypeId": 137,
        "relatedFixtureActionIds": [GOAL_ID],
        "delayStatus": "Delayed",
    },
    "fixtureSummary": {
        "isTied": True,
        "periods": [
            {
                "id": 1,
                "end": "2024-03-01T19:17:40",
                "type": "Regular",
                "label": "1st half",
                "start": "2024-03-01T18:31:02",
                "awayTeamScore": 1,
                "homeTeamScore": 1,
                "awayTeamPeriodScore": 1,
                "homeTeamPeriodScore": 1,
            },
            {
                "id": 2,
                "end": None,
                "type": "Regular",
                "label": "2nd half",
                "start": "2024-03-01T19:33:15",
                "awayTeamScore": 1,
                "homeTeamScore": 1,
                "awayTeamPeriodScore": 0,
                "homeTeamPeriodScore": 0,
            },
        ],
        "finished": False,
        "awayTeamScore": 1,
        "currentPeriod": 2,
        "currentStatus": "Live",
        "homeTeamScore": 1,
        "collectionStatus": "CollectionSuspended",
        "reason": "Video feed lost",
        "reasonId": 4,
        "currentClockTime": "63:12",
        "currentClockState": "stopped",
        "isHomeTeamInPossession": False,
    },
}
"""A version-3 action: a disallowed goal linked to its goal, while collection is suspended."""

ACTION_V1: dict[str, Any] = {
    "traceId": "0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a",
    "version": 1,
    "finished": False,
    "fixtureAction": {
        "period": 0,
        "actionId": "c0a1b2c3-0000-4000-8000-00000000b001",
        "metadata": {"AwayTeamColour": "0, 51, 153", "HomeTeamColour": "204, 0, 0"},
        "sendType": "Confirmed",
        "clockTime": "00:00",
        "fixtureId": FIXTURE_ID,
        "timestamp": "2024-03-01T17:30:12.5Z",
        "sendTypeId": 5,
        "fixtureSeqNum": 2,
        "timelineSequence": 1.0e-16,
        "fixtureActionType": "Team Colours",
        "fixtureActionTypeId": 2,
    },
    "fixtureSummary": {
        "isTied": True,
        "periods": [],
        "awayTeamScore": 0,
        "currentPeriod": 0,
        "currentStatus": "Scheduled",
        "homeTeamScore": 0,
        "currentClockTime": "00:00",
        "isHomeTeamInPossesion": True,
    },
}
"""A version-1 record: capitalised metadata keys, the possession flag as the service spells it."""

SOCCER_FIXTURE: dict[str, Any] = {
    **fixture(9, sport="soccer"),
    "status": "Live",
    "collectionStatus": "CollectingLive",
    "rules": [
        {"rule": "ExtraTime", "value": "false"},
        {"rule": "PeriodLength", "value": "45"},
        {"rule": "ExtraTimeLength", "value": "null"},
        {"rule": "PenaltyShootout", "value": "true"},
        {"rule": "PenaltyShootoutType", "value": "ABBA"},
    ],
    "updateCount": 3,
}
"""A fixture with the rules and update count of the vendor's field table."""

PLAYER_A = {"id": "21111111-2222-4333-8444-555555555555", "name": "Janis Berzins"}

STATISTICS_V2: dict[str, Any] = {
    "seqNum": 655,
    "traceId": "9a8b7c6d5e4f30211203f4e5d6c7b8a9",
    "version": 2,
    "finished": True,
    "fixtureId": FIXTURE_ID,
    "timestamp": "2024-03-01T20:29:51.4417326Z",
    "teamActionAggregates": [
        {
            "team": {**HOME_TEAM, "homeTeam": "true"},
            "gameActionAggregates": [
                {"action": "Goal", "actionId": 105, "actionAggregate": 2, "subActionAggregates": []}
            ],
            "periodActionAggregates": [
                {
                    "period": 1,
                    "label": "1st half",
                    "type": "Regular",
                    "aggregates": [
                        {
                            "action": "Goal",
                            "actionId": 105,
                            "actionAggregate": 1,
                            "subActionAggregates": [],
                        }
                    ],
                },
                {
                    "period": 3,
                    "label": "1st half extra time",
                    "type": "ExtraTime",
                    "aggregates": [
                        {
                            "action": "Goal",
                            "actionId": 105,
                            "actionAggregate": 1,
                            "subActionAggregates": [
                                {
                                    "subAction": "Header",
                                    "subActionId": 10502,
                                    "subActionAggregate": 1,
                                }
                            ],
                        }
                    ],
                },
            ],
            "playerActionAggregates": [
                {
                    "player": PLAYER_A,
                    "gameActionAggregates": [
                        {
                            "action": "Goal",
                            "actionId": 105,
                            "actionAggregate": 2,
                            "subActionAggregates": [],
                        }
                    ],
                    "periodActionAggregates": [
                        {
                            "period": 1,
                            "aggregates": [
                                {
                                    "action": "Goal",
                                    "actionId": 105,
                                    "actionAggregate": 1,
                                    "subActionAggregates": [],
                                }
                            ],
                        }
                    ],
                }
            ],
        },
        {
            "team": {**AWAY_TEAM, "homeTeam": "false"},
            "gameActionAggregates": [],
            "periodActionAggregates": [],
            "playerActionAggregates": [],
        },
    ],
    "advancedSportStatistics": {},
}
"""A statistics packet: period labels and types, typed player aggregates, text booleans and
a timestamp with seven fraction digits."""
