"""Fixture lists and fixtures: envelopes, every filter and sort, paging, ids, wire format."""

from __future__ import annotations

import datetime as dt
import itertools
import os
import re
import subprocess
import sys
import uuid
from typing import Any

import pytest
from support.api import Api

from asyncsports.emulator import Emulator

SPORTS = (
    "basketball",
    "ice-hockey",
    "volleyball",
    "cricket",
    "american-football",
    "soccer",
    "snooker",
)
NAIVE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$")
COVERAGE = {
    "noCoverage": "No Coverage",
    "inVenue": "In Venue",
    "lowLatencyStream": "Low Latency Stream",
    "standardStream": "Standard Stream",
    "video(postmatch)": "Video (Postmatch)",
}
ENVELOPE_KEYS = {
    "content",
    "pageable",
    "last",
    "first",
    "totalPages",
    "totalElements",
    "size",
    "number",
    "numberOfElements",
    "sort",
    "empty",
}


def day(f: dict[str, Any]) -> dt.date:
    return dt.datetime.fromisoformat(f["startDateUTC"]).date()


async def test_data_is_the_same_for_the_same_seed_and_differs_for_another(api: Api) -> None:
    fixtures = await api.fixtures()
    async with Emulator(0) as same, Emulator(1) as other:
        for emu, equal in ((same, True), (other, False)):
            twin = Api(emu, api.session)
            assert (await twin.fixtures() == fixtures) is equal


DIGEST = """
import asyncio, hashlib, aiohttp
from asyncsports.emulator import Emulator
async def main():
    async with Emulator(3) as emu, aiohttp.ClientSession() as s:
        h = {"Accept": "application/vnd.imggaming.dde.api+json;version=1",
             "Authorization": "Bearer " + emu.token}
        digest = hashlib.sha256()
        async with s.get(emu.base_url + "/soccer/fixtures", headers=h) as r:
            fixtures = await r.json()
            digest.update(await r.read())
        for f in fixtures[:6]:
            async with s.get(emu.base_url + "/soccer/fixtures/" + f["id"] + "/actions", headers=h) as r:
                digest.update(await r.read())
        async with s.get(emu.base_url + "/snooker/tvfeed/matches/2046", headers=h) as r:
            digest.update(await r.read())
        async with s.get(emu.base_url + "/streaming/api/v2/streaming/events",
                         params=emu.static_streaming_credentials.params()) as r:
            digest.update(await r.read())
        print(digest.hexdigest())
asyncio.run(main())
"""


@pytest.mark.slow
def test_data_does_not_depend_on_the_process_hash_seed() -> None:
    digests = set()
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run(
            [sys.executable, "-c", DIGEST],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        digests.add(out.stdout.strip())
    assert len(digests) == 1 and len(next(iter(digests))) == 64


@pytest.mark.parametrize("sport", SPORTS)
async def test_every_sport_lists_fixtures_as_a_bare_array(api: Api, sport: str) -> None:
    prefix = "/v2" if sport == "volleyball" else ""
    body = await api.json(f"{prefix}/{sport}/fixtures")
    if sport == "volleyball":
        assert set(body) == ENVELOPE_KEYS
        assert body["totalElements"] == 2 * 2 * 24
        assert {f["sport"] for f in body["content"]} == {"volleyball"}
        assert all("collectionStatus" in f for f in body["content"])
        assert {f["collectionStatus"] for f in body["content"]} <= COLLECTION_STATUSES
    else:
        assert isinstance(body, list) and len(body) == 2 * 2 * 24
        assert all("sport" not in f and "collectionStatus" not in f for f in body)
    fixtures = body["content"] if sport == "volleyball" else body
    assert all(isinstance(f["updateCount"], int) and f["updateCount"] >= 0 for f in fixtures)
    assert all(f["updateCount"] >= 1 for f in fixtures if f["status"] == "Postponed")
    assert all(("rules" in f) == (sport == "soccer") for f in fixtures)


COLLECTION_STATUSES = {
    "CollectionScheduled",
    "CollectingLive",
    "CollectingPostMatch",
    "CollectionSuspended",
    "CollectionDropped",
    "CollectionCompleted",
    "PostMatchChecked",
}


async def test_soccer_fixtures_carry_rules_and_updates_occur(api: Api) -> None:
    fixtures = await api.fixtures("soccer")
    for f in fixtures:
        rules = {r["rule"]: r["value"] for r in f["rules"]}
        assert set(rules) == {
            "ExtraTime",
            "PeriodLength",
            "ExtraTimeLength",
            "PenaltyShootout",
            "PenaltyShootoutType",
        }
        assert all(isinstance(v, str) for v in rules.values())  # the vendor writes text
        cup = "Cup" in f["stage"]["season"]["competition"]["name"]
        assert rules["ExtraTime"] == ("true" if cup else "false")
    counts = {f["updateCount"] for s in SPORTS for f in await api.fixtures(s)}
    assert 0 in counts and len(counts) > 1


async def test_fixture_wire_format(api: Api) -> None:
    fixtures = await api.fixtures("basketball")
    for f in fixtures:
        uuid.UUID(f["id"])
        assert NAIVE.match(f["startDateUTC"])
        home, away = f["teams"]
        assert (home["homeTeam"], away["homeTeam"]) == (True, False)
        assert f["name"] == f"{home['name']} v {away['name']}"
        assert set(home) == {"id", "name", "club", "category", "homeTeam"}
        assert f["status"] in ("Scheduled", "Live", "Completed", "Postponed")
        assert f["type"] in ("Official", "Simulation", "Training")
        assert f["coverageLevel"] in COVERAGE.values()
        assert isinstance(f["fixtureDeleted"], bool)
        stage = f["stage"]
        assert NAIVE.match(stage["startDateUTC"]) and NAIVE.match(stage["season"]["endDateUTC"])
        assert set(stage["season"]["competition"]) == {"id", "name", "category", "tour", "location"}
        assert set(f["venue"]) == {"id", "name", "location"}
    locations = [f["venue"]["location"] for f in fixtures]
    assert {} in locations and any(loc.get("country") == {} for loc in locations)
    volley = (await api.fixtures("volleyball"))[0]["stage"]["season"]
    assert volley["sport"] == "volleyball"
    assert {"type", "latestComment", "commentCount"} <= set(volley["competition"])


async def test_every_status_type_and_coverage_occurs_and_some_fixtures_are_deleted(
    api: Api,
) -> None:
    fixtures = [f for s in SPORTS for f in await api.fixtures(s)]
    assert {f["status"] for f in fixtures} == {"Scheduled", "Live", "Completed", "Postponed"}
    assert {f["type"] for f in fixtures} == {"Official", "Simulation", "Training"}
    assert {f["coverageLevel"] for f in fixtures} == set(COVERAGE.values())
    assert 0 < sum(f["fixtureDeleted"] for f in fixtures) < len(fixtures) // 10


async def test_default_order_is_start_time_then_name(api: Api) -> None:
    fixtures = await api.fixtures("ice-hockey")
    keys = [(f["startDateUTC"], f["name"]) for f in fixtures]
    assert keys == sorted(keys)


SORTS = [
    (["name"], [("name", False)]),
    (["name,desc"], [("name", True)]),
    (["startTime,desc"], [("startTime", True)]),
    (["startTime,asc", "name,desc"], [("startTime", False), ("name", True)]),
    (["name,desc", "startTime,desc"], [("name", True), ("startTime", True)]),
    (["name,asc", "startTime,desc"], [("name", False), ("startTime", True)]),
]


@pytest.mark.parametrize(("params", "keys"), SORTS)
async def test_sort_by_name_and_start_time_in_both_directions(
    api: Api, params: list[str], keys: list[tuple[str, bool]]
) -> None:
    fixtures = await api.fixtures("basketball", [("sort", p) for p in params])
    assert len(fixtures) == 96
    field = {"name": "name", "startTime": "startDateUTC"}
    for a, b in itertools.pairwise(fixtures):
        for name, desc in keys:
            x, y = a[field[name]], b[field[name]]
            if x != y:
                assert (x > y) if desc else (x < y), (name, x, y)
                break


async def test_sort_is_marked_in_the_envelope(api: Api) -> None:
    plain = await api.json("/basketball/fixtures", {"paged": "true"})
    sorted_ = await api.json("/basketball/fixtures", {"paged": "true", "sort": "name"})
    assert plain["sort"] == {"empty": True, "unsorted": True, "sorted": False}
    assert sorted_["sort"] == {"empty": False, "unsorted": False, "sorted": True}
    assert sorted_["pageable"]["sort"] == sorted_["sort"]


FILTERS = [
    ({"status": "scheduled"}, lambda f: f["status"] == "Scheduled"),
    ({"status": "live"}, lambda f: f["status"] == "Live"),
    ({"status": "completed"}, lambda f: f["status"] == "Completed"),
    ({"status": "postponed"}, lambda f: f["status"] == "Postponed"),
    ({"live": "true"}, lambda f: f["status"] == "Live"),
    ({"live": "false"}, lambda f: True),
    ({"type": "official"}, lambda f: f["type"] == "Official"),
    ({"type": "simulation"}, lambda f: f["type"] == "Simulation"),
    ({"type": "training"}, lambda f: f["type"] == "Training"),
    *(({"coverageLevel": k}, lambda f, v=v: f["coverageLevel"] == v) for k, v in COVERAGE.items()),
    ({"includeDeleted": "false"}, lambda f: not f["fixtureDeleted"]),
    ({"includeDeleted": "true"}, lambda f: True),
    ({"includeDelete": "false"}, lambda f: not f["fixtureDeleted"]),
    ({"dateFrom": "2026-06-01"}, lambda f: day(f) >= dt.date(2026, 6, 1)),
    ({"dateTo": "2026-06-01"}, lambda f: day(f) <= dt.date(2026, 6, 1)),
    (
        {"dateFrom": "2026-06-01", "dateTo": "2026-06-01"},
        lambda f: day(f) == dt.date(2026, 6, 1),
    ),
    (
        {"status": "completed", "type": "official", "includeDeleted": "false"},
        lambda f: (
            f["status"] == "Completed" and f["type"] == "Official" and not f["fixtureDeleted"]
        ),
    ),
    ({"live": "true", "status": "completed"}, lambda f: False),
]


@pytest.mark.parametrize(("params", "keep"), FILTERS, ids=[str(p) for p, _ in FILTERS])
@pytest.mark.emulator(fixtures_per_season=40)
async def test_filters(api: Api, params: dict[str, str], keep: Any) -> None:
    everything = await api.fixtures("basketball")
    expected = [f for f in everything if keep(f)]
    assert await api.fixtures("basketball", params) == expected
    paged = await api.json("/basketball/fixtures", {**params, "paged": "true", "size": "1000"})
    assert paged["content"] == expected and paged["totalElements"] == len(expected)


@pytest.mark.emulator(fixtures_per_season=60)
async def test_filters_on_a_season_list_and_with_a_date_range_across_days(api: Api) -> None:
    everything = await api.fixtures("soccer")
    assert {day(f) for f in everything} >= {dt.date(2026, 5, 31), dt.date(2026, 6, 2)}
    listed = await api.fixtures("soccer", {"dateFrom": "2026-05-31", "dateTo": "2026-06-01"})
    assert {day(f) for f in listed} == {dt.date(2026, 5, 31), dt.date(2026, 6, 1)}
    season = everything[-1]["stage"]["season"]["id"]
    got = await api.json(f"/soccer/seasons/{season}/fixtures", {"dateTo": "2026-05-31"})
    assert got and all(f["stage"]["season"]["id"] == season for f in got)
    assert max(day(f) for f in got) == dt.date(2026, 5, 31)


@pytest.mark.parametrize("size", [1, 7, 20, 96, 1000])
async def test_pages_walk_the_whole_list(api: Api, size: int) -> None:
    everything = await api.fixtures("basketball")
    pages = []
    page = 0
    while True:
        env = await api.json(
            "/basketball/fixtures", {"paged": "true", "size": str(size), "page": str(page)}
        )
        assert env["number"] == page == env["pageable"]["pageNumber"]
        assert env["size"] == size == env["pageable"]["pageSize"]
        assert env["pageable"]["offset"] == page * size
        assert env["first"] == (page == 0)
        assert env["totalElements"] == 96 and env["totalPages"] == -(-96 // size)
        assert env["numberOfElements"] == len(env["content"])
        pages.append(env["content"])
        if env["last"]:
            break
        page += 1
    assert [f for p in pages for f in p] == everything
    beyond = await api.json(
        "/basketball/fixtures", {"paged": "true", "size": str(size), "page": str(page + 1)}
    )
    assert beyond["content"] == [] and beyond["empty"] and beyond["last"]


async def test_default_page_size_is_20_and_volleyball_pages_without_paged(api: Api) -> None:
    env = await api.json("/v2/volleyball/fixtures", {"page": "2"})
    assert env["size"] == 20 and env["number"] == 2 and env["numberOfElements"] == 20
    full = await api.fixtures("volleyball", {"size": "1000"})
    assert env["content"] == full[40:60]


async def test_season_fixture_list_holds_that_season_only(api: Api) -> None:
    everything = await api.fixtures("ice-hockey")
    season = everything[0]["stage"]["season"]["id"]
    listed = await api.json(f"/ice-hockey/seasons/{season}/fixtures")
    assert listed == [f for f in everything if f["stage"]["season"]["id"] == season]
    assert len(listed) == 24
    assert (await api.get(f"/basketball/seasons/{season}/fixtures")).status == 404
    assert (await api.get(f"/ice-hockey/seasons/{uuid.uuid4()}/fixtures")).status == 404


async def test_get_one_fixture(api: Api) -> None:
    everything = await api.fixtures("cricket")
    for f in everything[::7]:
        assert await api.json(f"/cricket/fixtures/{f['id']}") == f
    fid = everything[0]["id"]
    assert (await api.get(f"/soccer/fixtures/{fid}")).status == 404
    assert (await api.get(f"/cricket/fixtures/{uuid.uuid4()}")).status == 404
    assert (await api.get("/cricket/fixtures/not-an-id")).status == 404
    volley = (await api.fixtures("volleyball"))[0]["id"]
    assert (await api.get(f"/volleyball/fixtures/{volley}")).status == 404
    assert (await api.get(f"/v2/cricket/fixtures/{fid}")).status == 404
    assert (await api.get("/curling/fixtures")).status == 404


@pytest.mark.parametrize(
    "params",
    [
        {"status": "finished"},
        {"type": "friendly"},
        {"coverageLevel": "radio"},
        {"size": "0"},
        {"size": "1001"},
        {"size": "many"},
        {"page": "-1"},
        {"dateFrom": "2026-13-01"},
        {"dateTo": "yesterday"},
        {"sort": "venue"},
        {"sort": "name,up"},
        {"live": "maybe"},
        {"includeDeleted": "no"},
    ],
)
async def test_bad_parameters_are_400(api: Api, params: dict[str, str]) -> None:
    r = await api.get("/basketball/fixtures", params)
    assert r.status == 400
    assert r.json()["status"] == 400 and r.json()["error"]
