"""Action timelines (api-spec 2.3 and 3) and the statistics aggregated from them."""

from __future__ import annotations

import re
import uuid
from collections import Counter
from typing import Any

import pytest

from .helpers import Api

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
NANOS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$")
NAIVE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$")
DURATION = re.compile(r"^(\d+\.)?\d\d:\d\d:\d\d\.\d{7}$")
CLOCK = re.compile(r"^\d\d:\d\d$")
SPEC_TYPES = {1: "Match Conditions", 2: "Team Colours", 3: "Lineups", 4: "Start Fixture",
              6: "Start Period", 8: "Start Clock", 19: "Device Location",
              21: "Post Match Check Complete"}  # fmt: skip
SEND_TYPES = {("Pending", 1), ("Updated", 2), ("Confirmed", 5), ("Deleted", 3)}


async def completed(api: Api, sport: str) -> list[dict[str, Any]]:
    return await api.fixtures(sport, {"status": "completed"})


def check_timeline(actions: list[dict[str, Any]], fixture: dict[str, Any]) -> None:
    """The rules of api-spec 3 over one complete timeline."""
    status = "Scheduled"
    periods: list[dict[str, Any]] = []
    previous_ts = ""
    for n, record in enumerate(actions, 1):
        a, s = record["fixtureAction"], record["fixtureSummary"]
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
        assert s["currentStatus"] == status
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


@pytest.mark.parametrize("sport", ["american-football", "basketball", "soccer", "snooker"])
async def test_timelines_follow_the_spec_transitions(api: Api, sport: str) -> None:
    for f in (await completed(api, sport))[:6]:
        actions = await api.json(f"/{sport}/fixtures/{f['id']}/actions")
        check_timeline(actions, f)
        types = {r["fixtureAction"]["fixtureActionTypeId"]: r["fixtureAction"]["fixtureActionType"]
                 for r in actions}  # fmt: skip
        assert SPEC_TYPES.items() <= types.items()


def metadata_of(actions: list[dict[str, Any]], type_id: int) -> list[dict[str, Any]]:
    return [r["fixtureAction"].get("metadata", {}) for r in actions
            if r["fixtureAction"]["fixtureActionTypeId"] == type_id]  # fmt: skip


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


def counts(actions: list[dict[str, Any]], team: str) -> Counter[str]:
    c: Counter[str] = Counter()
    for r in actions:
        a = r["fixtureAction"]
        if a.get("team", {}).get("id") != team or a["fixtureActionType"] == "Lineups":
            continue
        c[a["fixtureActionType"]] += -1 if a["sendType"] == "Deleted" else 1
    return +c


@pytest.mark.parametrize("sport", ["basketball", "ice-hockey", "snooker"])
async def test_statistics_aggregate_the_timeline(api: Api, sport: str) -> None:
    for f in (await completed(api, sport))[:4]:
        actions = await api.json(f"/{sport}/fixtures/{f['id']}/actions")
        stats = await api.json(f"/{sport}/fixtures/{f['id']}/statistics")
        assert stats["finished"] is True and stats["version"] == 2
        assert stats["fixtureId"] == f["id"] and stats["seqNum"] == len(actions)
        assert NANOS.match(stats["timestamp"]) and len(stats["traceId"]) == 32
        for agg, team in zip(stats["teamActionAggregates"], f["teams"], strict=True):
            assert agg["team"] == {"id": team["id"], "name": team["name"]}
            game = {a["action"]: a["actionAggregate"] for a in agg["gameActionAggregates"]}
            assert game == dict(counts(actions, team["id"]))
            for a in agg["gameActionAggregates"]:
                assert sum(s["subActionAggregate"] for s in a["subActionAggregates"]) in (
                    0, a["actionAggregate"])  # fmt: skip
            per_period: Counter[str] = Counter()
            for p in agg["periodActionAggregates"]:
                for a in p["aggregates"]:
                    per_period[a["action"]] += a["actionAggregate"]
            assert dict(per_period) == game
            assert agg["playerActionAggregates"] == []


async def test_cue_sport_advanced_statistics(api: Api) -> None:
    durations = []
    for f in await completed(api, "snooker"):
        stats = await api.json(f"/snooker/fixtures/{f['id']}/statistics")
        adv = stats["advancedSportStatistics"]
        assert adv["startingStriker"] in {t["id"] for t in f["teams"]}
        values = {"redBalls": 1, "yellowBalls": 2, "greenBalls": 3, "brownBalls": 4,
                  "blueBalls": 5, "pinkBalls": 6, "blackBalls": 7}  # fmt: skip
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
