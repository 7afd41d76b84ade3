"""Action timelines (api-spec 2.3 and 3) and the statistics aggregated from them."""

from __future__ import annotations

import re
import uuid
from collections import Counter
from typing import Any

import aiohttp
import pytest
from support.api import Api

from asyncsports.emulator import Emulator

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
NANOS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.(\d{7}|\d{9})Z$")
TRACE = re.compile(r"^[0-9a-f]{32}$")
CLOCKLESS = ("volleyball", "cricket", "snooker")
ALL_SPORTS = [
    "american-football",
    "basketball",
    "soccer",
    "snooker",
    "ice-hockey",
    "cricket",
    "volleyball",
]
NAIVE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$")
DURATION = re.compile(r"^(\d+\.)?\d\d:\d\d:\d\d\.\d{7}$")
CLOCK = re.compile(r"^\d\d:\d\d$")
SPEC_TYPES = {
    1: "Match Conditions",
    2: "Team Colours",
    3: "Lineups",
    4: "Start Fixture",
    6: "Start Period",
    8: "Start Clock",
    19: "Device Location",
    21: "Post Match Check Complete",
}
SEND_TYPES = {("Pending", 1), ("Updated", 2), ("Confirmed", 5), ("Deleted", 3)}


async def completed(api: Api, sport: str) -> list[dict[str, Any]]:
    return await api.fixtures(sport, {"status": "completed"})


def check_timeline(actions: list[dict[str, Any]], fixture: dict[str, Any]) -> None:
    """The rules of api-spec 3 over one complete timeline, and the vendor's extra fields."""
    status = "Scheduled"
    periods: list[dict[str, Any]] = []
    previous_ts = ""
    earlier: set[str] = set()
    clockless = any(f"/{s}/" in fixture.get("_path", "") for s in CLOCKLESS)
    for n, record in enumerate(actions, 1):
        a, s = record["fixtureAction"], record["fixtureSummary"]
        assert TRACE.match(record["traceId"])
        assert set(a["relatedFixtureActionIds"]) <= earlier  # links go back to sent actions
        earlier.add(a["actionId"])
        assert s["finished"] == record["finished"]
        assert s["collectionStatus"] in COLLECTION_STATUSES
        assert (
            ("reason" in s) == ("reasonId" in s) == (s["collectionStatus"] == "CollectionSuspended")
        )
        if clockless:
            assert "currentClockState" not in s
        else:
            assert s["currentClockState"] in ("running", "stopped")
        if a["fixtureActionType"] == "Start Clock" and not clockless:
            assert s["currentClockState"] == "running"
        if "team" in a:
            home = a["team"]["id"] == fixture["teams"][0]["id"]
            assert a["team"]["homeTeam"] is home
        assert a["fixtureSeqNum"] == n and a["fixtureId"] == fixture["id"]
        assert TIMESTAMP.match(a["timestamp"]) and a["timestamp"] >= previous_ts
        previous_ts = a["timestamp"]
        assert CLOCK.match(a["clockTime"]) and s["currentClockTime"] == a["clockTime"]
        assert (a["sendType"], a["sendTypeId"]) in SEND_TYPES
        kind = a["fixtureActionType"]
        if kind == "Lineups":
            assert status in ("Scheduled", "LineUps")
            status = "LineUps"
        elif kind == "Start Period":
            assert status in ("LineUps", "Live")
            status = "Live"
            assert s["periods"][-1]["end"] is None and s["periods"][-1]["id"] == a["period"]
        elif kind == "Post Match Check Complete":
            status = "Completed"
            assert s["collectionStatus"] == "PostMatchChecked"
        assert s["currentStatus"] == status
        if kind == "End Fixture":
            assert s["collectionStatus"] == "CollectionCompleted"
        elif status == "Live" and kind != "Status Updated":
            assert s["collectionStatus"] == "CollectingLive"
        assert record["finished"] == (n == len(actions))
        assert s["currentPeriod"] == a["period"]
        assert s["isTied"] == (s["homeTeamScore"] == s["awayTeamScore"])
        periods = s["periods"]
        home = away = 0
        for p in periods:
            home += p["homeTeamPeriodScore"]
            away += p["awayTeamPeriodScore"]
            assert (p["homeTeamScore"], p["awayTeamScore"]) == (home, away)
            assert NAIVE.match(p["start"]) and p["type"] in ("Regular", "Overtime")
        assert (s["homeTeamScore"], s["awayTeamScore"]) == (home, away)
    assert status == "Completed" and all(p["end"] is not None for p in periods)
    assert actions[0]["fixtureSummary"]["currentPeriod"] == 0


COLLECTION_STATUSES = {
    "CollectionScheduled",
    "CollectingLive",
    "CollectionSuspended",
    "CollectionCompleted",
    "PostMatchChecked",
}


def prefix(sport: str) -> str:
    return "/v2" if sport == "volleyball" else ""


@pytest.mark.parametrize("sport", ALL_SPORTS)
async def test_timelines_follow_the_spec_transitions(api: Api, sport: str) -> None:
    """Every sport of the emulator serves actions (and statistics, below)."""
    for f in (await completed(api, sport))[:6]:
        path = f"{prefix(sport)}/{sport}/fixtures/{f['id']}/actions"
        actions = await api.json(path)
        check_timeline(actions, dict(f, _path=path))
        types = {
            r["fixtureAction"]["fixtureActionTypeId"]: r["fixtureAction"]["fixtureActionType"]
            for r in actions
        }
        assert SPEC_TYPES.items() <= types.items()


def metadata_of(actions: list[dict[str, Any]], type_id: int) -> list[dict[str, Any]]:
    return [
        r["fixtureAction"].get("metadata", {})
        for r in actions
        if r["fixtureAction"]["fixtureActionTypeId"] == type_id
    ]


async def test_action_metadata_shapes(api: Api) -> None:
    f = (await completed(api, "basketball"))[0]
    actions = await api.json(f"/basketball/fixtures/{f['id']}/actions")
    (conditions,) = metadata_of(actions, 1)
    assert set(conditions["pitchConditions"]) == {"quality", "surface"}
    assert set(conditions["weatherConditions"]) == {"rain", "wind", "temperature"}
    (colours,) = metadata_of(actions, 2)
    for value in colours.values():
        assert re.match(r"^\d{1,3}, \d{1,3}, \d{1,3}$", value)
    (location,) = metadata_of(actions, 19)
    assert isinstance(location["latitude"], float) and isinstance(location["longitude"], float)
    lineups = metadata_of(actions, 3)
    assert [m["teamId"] for m in lineups] == [t["id"] for t in f["teams"]]
    for m in lineups:
        assert len(m["startingLineup"]) == 5 and m["substitutes"]
        for p in m["startingLineup"] + m["substitutes"]:
            assert set(p) == {"id", "fullName", "lastName", "firstName", "shirtNumber"}
            assert isinstance(p["shirtNumber"], str)
    shots = metadata_of(actions, 233)
    assert shots and all(set(m["courtPosition"]) == {"x", "y", "zone"} for m in shots)


async def test_timeline_quirks_occur(api: Api) -> None:
    bodies = []
    for sport in ("basketball", "soccer", "ice-hockey"):
        for f in await completed(api, sport):
            r = await api.get(f"/{sport}/fixtures/{f['id']}/actions")
            bodies.append(r.body)
    raw = b"".join(bodies)
    assert b'"timelineSequence":1.0E-16' in raw
    assert b'"AwayTeamColour"' in raw and b'"version":1,' in raw
    assert b'"firstName":null' in raw
    assert b'"sendType":"Deleted"' in raw and b'"sendType":"Pending"' in raw
    assert b'"fixtureActionSubType"' in raw and b'"isHomeTeamInPossesion"' in raw
    assert b'"collectionStatus":"CollectionSuspended"' in raw and b'"reasonId":1' in raw
    assert b'"delayStatus":"Delayed"' in raw


@pytest.mark.parametrize("sport", ALL_SPORTS)
async def test_reviews_link_to_the_score_they_review(sport: str) -> None:
    linked = 0
    # Timelines long enough for in-play actions besides the scoring ones (cricket's runs
    # fill a default timeline).
    async with Emulator(seed=0, actions_per_fixture=800) as emu, aiohttp.ClientSession() as http:
        api = Api(emu, http)
        timelines = [
            await api.json(f"{prefix(sport)}/{sport}/fixtures/{f['id']}/actions")
            for f in (await completed(api, sport))[:4]
        ]
    for actions in timelines:
        by_id = {r["fixtureAction"]["actionId"]: r["fixtureAction"] for r in actions}
        for r in actions:
            a = r["fixtureAction"]
            for target in a["relatedFixtureActionIds"]:
                score = by_id[target]
                assert a["team"]["id"] == score["team"]["id"] and "player" not in a
                assert score["fixtureSeqNum"] == a["fixtureSeqNum"] - 1
                linked += 1
    assert (linked > 0) == (sport != "snooker")  # snooker has no review action


async def test_a_suspension_pauses_collection_with_a_reason() -> None:
    """Status Updated: suspended with a reason, then resumed; the next records are delayed."""
    seen = 0
    async with Emulator(seed=0, fixtures_per_season=48) as emu, aiohttp.ClientSession() as http:
        api = Api(emu, http)
        for f in await completed(api, "soccer"):
            actions = await api.json(f"/soccer/fixtures/{f['id']}/actions")
            kinds = [r["fixtureAction"]["fixtureActionType"] for r in actions]
            if "Status Updated" not in kinds:
                continue
            seen += 1
            i = kinds.index("Status Updated")
            off, on = actions[i]["fixtureSummary"], actions[i + 1]["fixtureSummary"]
            assert kinds[i - 1] == "End Period" and kinds[i + 1] == "Status Updated"
            assert (off["collectionStatus"], off["reason"], off["reasonId"]) == (
                "CollectionSuspended",
                "No signal from the venue",
                1,
            )
            assert on["collectionStatus"] == "CollectingLive" and "reason" not in on
            delayed = [r["fixtureAction"].get("delayStatus") for r in actions[i + 2 : i + 6]]
            assert delayed == ["Delayed"] * 3 + [None]
    assert seen


async def with_status(api: Api, status: str) -> tuple[str, dict[str, Any]]:
    """A sport and one of its fixtures with this status."""
    for sport in ("basketball", "ice-hockey", "cricket", "american-football", "soccer"):
        found = await api.fixtures(sport, {"status": status})
        if found:
            return sport, found[-1]
    raise AssertionError(f"no {status} fixture")


async def test_actions_of_fixtures_not_started_are_empty_and_unknown_ones_404(api: Api) -> None:
    for status in ("scheduled", "postponed"):
        sport, f = await with_status(api, status)
        assert await api.json(f"/{sport}/fixtures/{f['id']}/actions") == []
    assert (await api.get(f"/soccer/fixtures/{uuid.uuid4()}/actions")).status == 404


async def test_a_live_fixture_has_a_partial_timeline(api: Api) -> None:
    live = await api.fixtures("basketball", {"live": "true"})
    assert live
    actions = await api.json(f"/basketball/fixtures/{live[0]['id']}/actions")
    assert actions and not any(r["finished"] for r in actions)
    assert actions[-1]["fixtureSummary"]["currentStatus"] == "Live"
    assert actions[-1]["fixtureSummary"]["periods"]


def counts(
    actions: list[dict[str, Any]],
    team: str,
    player: str | None = None,
    *,
    with_player: bool = False,
) -> Counter[str]:
    """Actions of ``team`` by type (of one ``player``, or of any player), less deletions."""
    c: Counter[str] = Counter()
    for r in actions:
        a = r["fixtureAction"]
        if a.get("team", {}).get("id") != team or a["fixtureActionType"] == "Lineups":
            continue
        who = a.get("player", {}).get("id")
        if (player is not None and who != player) or (with_player and who is None):
            continue
        c[a["fixtureActionType"]] += -1 if a["sendType"] == "Deleted" else 1
    return +c


@pytest.mark.parametrize("sport", ALL_SPORTS)
async def test_statistics_aggregate_the_timeline(api: Api, sport: str) -> None:
    for f in (await completed(api, sport))[:4]:
        actions = await api.json(f"{prefix(sport)}/{sport}/fixtures/{f['id']}/actions")
        stats = await api.json(f"{prefix(sport)}/{sport}/fixtures/{f['id']}/statistics")
        assert stats["finished"] is True and stats["version"] == 2
        assert stats["fixtureId"] == f["id"] and stats["seqNum"] == len(actions)
        assert NANOS.match(stats["timestamp"]) and len(stats["traceId"]) == 32
        labels = {
            p["id"]: (p["label"], p["type"]) for p in actions[-1]["fixtureSummary"]["periods"]
        }
        for agg, team in zip(stats["teamActionAggregates"], f["teams"], strict=True):
            text = "true" if team["homeTeam"] else "false"  # text, as the vendor sends it
            assert agg["team"] == {"id": team["id"], "name": team["name"], "homeTeam": text}
            for p in agg["periodActionAggregates"]:
                assert (p["label"], p["type"]) == labels[p["period"]]
            game = {a["action"]: a["actionAggregate"] for a in agg["gameActionAggregates"]}
            assert game == dict(counts(actions, team["id"]))
            for a in agg["gameActionAggregates"]:
                assert sum(s["subActionAggregate"] for s in a["subActionAggregates"]) in (
                    0,
                    a["actionAggregate"],
                )
            per_period: Counter[str] = Counter()
            for p in agg["periodActionAggregates"]:
                for a in p["aggregates"]:
                    per_period[a["action"]] += a["actionAggregate"]
            assert dict(per_period) == game
            by_players: Counter[str] = Counter()
            for player in agg["playerActionAggregates"]:
                assert set(player["player"]) == {"id", "name"}
                mine = {a["action"]: a["actionAggregate"] for a in player["gameActionAggregates"]}
                assert mine == dict(counts(actions, team["id"], player["player"]["id"]))
                by_players.update(mine)
            assert by_players == counts(actions, team["id"], with_player=True)


async def test_cue_sport_advanced_statistics(api: Api) -> None:
    durations = []
    for f in await completed(api, "snooker"):
        stats = await api.json(f"/snooker/fixtures/{f['id']}/statistics")
        adv = stats["advancedSportStatistics"]
        assert adv["startingStriker"] in {t["id"] for t in f["teams"]}
        values = {
            "redBalls": 1,
            "yellowBalls": 2,
            "greenBalls": 3,
            "brownBalls": 4,
            "blueBalls": 5,
            "pinkBalls": 6,
            "blackBalls": 7,
        }
        for n, b in enumerate(adv["breaksStatistics"]["breaks"], 1):
            assert b["breakSeq"] == n
            assert sum(values[k] * v for k, v in b["pottedBalls"].items()) == b["score"]
            assert b["startTimestamp"] <= b["endTimestamp"]
        remaining = adv["remainingBallsStatistics"]
        assert set(remaining["remainingBalls"]) == set(values)
        shot_stats = adv["averageShotTimeStatistics"]
        for pid, shots in shot_stats["playersShotTimes"].items():
            assert shots["playerId"] == pid and pid in shot_stats["averageShotTimes"]
            durations += [s["duration"] for s in shots["shotTimes"]]
        durations += list(shot_stats["averageShotTimes"].values())
    assert durations and all(DURATION.match(d) for d in durations)
    assert any("." in d.split(":")[0] for d in durations)  # a d. day prefix occurs


async def test_statistics_are_404_until_the_fixture_has_ended(api: Api) -> None:
    for status in ("live", "scheduled", "postponed"):
        sport, f = await with_status(api, status)
        assert (await api.get(f"/{sport}/fixtures/{f['id']}/statistics")).status == 404
    assert (await api.get(f"/basketball/fixtures/{uuid.uuid4()}/statistics")).status == 404
