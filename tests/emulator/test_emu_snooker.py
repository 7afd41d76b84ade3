"""The snooker proxy (api-spec 2.6 and 4.7): the data envelope and every endpoint."""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any

import pytest
from support.api import Api

FEED = "/snooker/tvfeed"
ZERO = "00000000-0000-0000-0000-000000000000"


async def data(api: Api, suffix: str, params: Any = None) -> Any:
    body = await api.json(f"{FEED}/{suffix}", params)
    assert set(body) == {"data"}
    return body["data"]


async def world_championship(api: Api, season: int = 2024) -> dict[str, Any]:
    found = await data(api, "tournaments", {"seasonId": str(season)})
    return next(t for t in found if t["tournamentName"] == "World Championship")


async def test_tournaments_from_1973_to_now(api: Api) -> None:
    everything = await data(api, "tournaments")
    seasons = {t["seasonStartYear"] for t in everything}
    assert min(seasons) == 1973 and max(seasons) == 2025 and len(seasons) == 53
    for t in everything:
        assert t["seasonName"] == f"{t['seasonStartYear']}/{t['seasonEndYear']}"
        assert t["seasonEndYear"] == t["seasonStartYear"] + 1
        assert set(t["externalTournamentId"]) == {"competitionId", "seasonId", "stageId"}
        assert t["startDate"].endswith("Z") and t["startDate"] <= t["endDate"]
    starts = [t["startDate"] for t in everything]
    assert starts == sorted(starts)
    first = await data(api, "tournaments", {"seasonId": "1973"})
    assert [t["tournamentName"] for t in first] == ["World Championship"]


async def test_tournament_filters_and_sort_options(api: Api) -> None:
    spring = await data(api, "tournaments", {"start": "2025-01-01", "end": "2025-05-31"})
    assert spring and all(
        t["endDate"] >= "2025-01-01" and t["startDate"] <= "2025-05-31T" for t in spring
    )
    by_name = await data(
        api, "tournaments", [("seasonId", "2024"), ("sortOptions", "tournamentName,desc")]
    )
    names = [t["tournamentName"] for t in by_name]
    assert names == sorted(names, reverse=True)
    r = await api.get(f"{FEED}/tournaments", {"sortOptions": "colour"})
    assert r.status == 400
    assert (await api.get(f"{FEED}/tournaments", {"start": "soon"})).status == 400


async def test_matches_make_a_consistent_draw(api: Api) -> None:
    t = await world_championship(api)
    matches = await data(api, f"matches/{t['tournamentId']}")
    assert len(matches) == 31
    by_round: dict[int, list[dict[str, Any]]] = {}
    for m in matches:
        by_round.setdefault(m["roundNumber"], []).append(m)
        need = m["bestOutOfFrames"] // 2 + 1
        assert max(m["player1Frames"], m["player2Frames"]) == need
        assert min(m["player1Frames"], m["player2Frames"]) < need
        for side in ("1", "2"):
            breaks = [int(b) for b in m[f"player{side}FrameBreaks"].split(", ") if b]
            assert m[f"player{side}Break"] == max(breaks, default=0)
    assert [len(by_round[r]) for r in sorted(by_round)] == [16, 8, 4, 2, 1]
    assert by_round[5][0]["roundName"] == "Final"
    for r in range(1, 5):
        winners = [
            m["player1Id"] if m["player1Frames"] > m["player2Frames"] else m["player2Id"]
            for m in by_round[r]
        ]
        assert winners == [p for m in by_round[r + 1] for p in (m["player1Id"], m["player2Id"])]
    semis = await data(api, f"matches/{t['tournamentId']}", {"roundNumber": "4"})
    assert semis == by_round[4]
    for key in ("stageId", "seasonId"):
        external = t["externalTournamentId"][key]
        assert await data(api, f"matches/external/{external}") == matches


async def test_a_competition_id_means_the_latest_edition(api: Api) -> None:
    old = await world_championship(api, 2000)
    latest = await world_championship(api, 2025)
    competition = old["externalTournamentId"]["competitionId"]
    assert competition == latest["externalTournamentId"]["competitionId"]
    got = await data(api, f"matches/external/{competition}")
    assert got == await data(api, f"matches/{latest['tournamentId']}")


async def test_ast_players_centuries_and_winners(api: Api) -> None:
    t = await world_championship(api)
    tid = t["tournamentId"]
    ast = await data(api, f"ast/{tid}")
    assert len(ast) == 32 and all(a["tournamentId"] == tid for a in ast)
    assert [a["playerAst"] for a in ast] == sorted(a["playerAst"] for a in ast)
    season_ast = await data(api, f"ast/{tid}", {"forSeason": "true"})
    assert {a["playerId"] for a in season_ast} == {a["playerId"] for a in ast}
    assert season_ast != ast

    players = await data(api, f"tournament-players/{tid}")
    assert {p["playerId"] for p in players} == {a["playerId"] for a in ast}
    assert all({"playerSecondName", "country", "dateOfBirth"} <= set(p) for p in players)
    stage = t["externalTournamentId"]["stageId"]
    named = await data(api, f"tournament-players/external/{stage}", {"sortOptions": "true"})
    keys = [(p["playerSecondName"], p["playerFirstName"]) for p in named]
    assert keys == sorted(keys)

    matches = await data(api, f"matches/{tid}")
    centuries = await data(api, f"centuries/{tid}")
    made = sorted(
        int(b)
        for m in matches
        for s in ("1", "2")
        for b in m[f"player{s}FrameBreaks"].split(", ")
        if b and int(b) >= 100
    )
    assert sorted(c["break"] for c in centuries) == made
    assert all(c["date"].count(".") == 1 for c in centuries)
    season = await data(api, f"centuries/{tid}", {"forSeason": "true"})
    assert len(season) > len(centuries)

    winner = await data(api, f"current-tournament-winner/{tid}")
    final = matches[-1]
    champion = (
        final["player1Id"]
        if final["player1Frames"] > final["player2Frames"]
        else (final["player2Id"])
    )
    assert isinstance(winner, dict) and winner["playerId"] == champion
    assert len(winner["nationality"]) == 3 and winner["matchesWon"] >= 5
    assert winner["matchesPlayed"] == winner["matchesWon"] + winner["matchesLost"]

    previous = await data(api, f"previous-tournament-winner/{tid}")
    years = [p["year"] for p in previous]
    assert years == sorted(years, reverse=True) and years[-1] == 1974 and len(years) == 51


async def test_tour_players_and_external_ids(api: Api) -> None:
    tour = await data(api, "tour-players")
    assert len(tour) > 32
    assert all(set(p["playerExternalId"]) == {"personId", "clubId", "teamId"} for p in tour)
    everyone = [
        p
        for t in await data(api, "tournaments", {"seasonId": "2010"})
        for p in await data(api, f"tournament-players/{t['tournamentId']}")
    ]
    assert ZERO in {p["playerExternalId"]["personId"] for p in everyone + tour}


async def test_player_images_are_valid_png(api: Api) -> None:
    t = await world_championship(api)
    player = (await data(api, f"tournament-players/{t['tournamentId']}"))[0]
    image = await data(api, f"player-info/{player['playerId']}/{t['tournamentId']}")
    assert image["fileType"] == "image/png" and image["fileName"].endswith(".png")
    png = base64.b64decode(image["fileContent"])
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    at = 8
    kinds = []
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        kind, body = png[at + 4 : at + 8], png[at + 8 : at + 8 + length]
        (crc,) = struct.unpack(">I", png[at + 8 + length : at + 12 + length])
        assert zlib.crc32(kind + body) == crc
        if kind == b"IDAT":
            zlib.decompress(body)
        kinds.append(kind)
        at += 12 + length
    assert kinds == [b"IHDR", b"IDAT", b"IEND"]
    person = player["playerExternalId"]["personId"]
    if person != ZERO:
        stage = t["externalTournamentId"]["stageId"]
        assert await data(api, f"player-info/external/{person}/{stage}") == image


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("matches/999999", 404),
        ("matches/abc", 400),
        ("matches/external/00000000-0000-4000-8000-000000000000", 404),
        ("ast/999999", 404),
        ("player-info/1/1046", 404),
        ("current-tournament-winner/1", 404),
    ],
)
async def test_snooker_errors(api: Api, path: str, status: int) -> None:
    r = await api.get(f"{FEED}/{path}")
    assert r.status == status and r.json()["status"] == status


async def test_snooker_ids_in_the_path_name_what_is_wrong(api: Api) -> None:
    t = (await world_championship(api))["tournamentId"]
    bad = await api.get(f"{FEED}/player-info/abc/{t}")
    assert bad.status == 400 and "playerId: not an integer: abc" in bad.body.decode()
    bad = await api.get(f"{FEED}/matches/abc")
    assert bad.status == 400 and "tournamentId: not an integer: abc" in bad.body.decode()
    gone = await api.get(f"{FEED}/player-info/999999/{t}")
    assert gone.status == 404 and "Player not found: 999999" in gone.body.decode()
    gone = await api.get(f"{FEED}/ast/999999")
    assert gone.status == 404 and "Tournament not found: 999999" in gone.body.decode()


async def test_snooker_takes_the_data_service_headers_and_its_feed(api: Api) -> None:
    assert (await api.get(f"{FEED}/tour-players", headers={})).status == 400
    r = await api.get(f"{FEED}/tour-players", headers={"Accept": api.headers()["Accept"]})
    assert r.status == 401
    assert (await api.get("/snooker/otherfeed/tour-players")).status == 404
