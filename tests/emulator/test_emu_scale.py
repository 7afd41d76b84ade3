"""Scale: a million-fixture list and a huge timeline, by index on demand, streamed."""

from __future__ import annotations

import aiohttp
import pytest
from support import Standalone
from support.api import ACCEPT, Api

from asyncsports.emulator import Emulator
from asyncsports.emulator._world import Fixture, Season, World


def count_fixtures_made(monkeypatch: pytest.MonkeyPatch) -> list[Fixture]:
    """Every fixture the emulator's world makes from now on (its public ``fixture``)."""
    made: list[Fixture] = []
    make = World.fixture

    def counted(world: World, season: Season, i: int) -> Fixture:
        made.append(make(world, season, i))
        return made[-1]

    monkeypatch.setattr(World, "fixture", counted)
    return made


async def test_default_scale_starts_without_making_fixtures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = count_fixtures_made(monkeypatch)
    async with Emulator() as emu, aiohttp.ClientSession() as session:
        assert not made  # starting costs next to nothing: fixtures are made when asked for
        page = await Api(emu, session).json("/soccer/fixtures", {"paged": "true", "size": "5"})
    assert len(page["content"]) == len(made) == 5


@pytest.mark.slow
async def test_a_huge_timeline_is_streamed_in_chunks_without_being_built() -> None:
    server = Standalone("--frozen", "--big-timeline", "200000")
    try:
        base, token = server.info["base URL"], server.info["token"]
        fixture = server.info["big fixture"]
        before = server.peak_rss()
        pattern = b'"fixtureSeqNum":'
        count = size = chunks = 0
        tail = last = b""
        headers = {"Accept": ACCEPT, "Authorization": f"Bearer {token}"}
        async with (
            aiohttp.ClientSession() as session,
            session.get(
                f"{base}/american-football/fixtures/{fixture}/actions", headers=headers
            ) as r,
        ):
            assert r.status == 200
            assert r.headers.get("Transfer-Encoding") == "chunked"
            assert "Content-Length" not in r.headers
            async for chunk in r.content.iter_chunked(64 * 1024):
                buf = tail + chunk
                count += buf.count(pattern)
                tail = buf[-(len(pattern) - 1) :]
                last = (last + chunk)[-8192:]
                size += len(chunk)
                chunks += 1
        assert count == 200_000
        assert last.endswith(b"]") and b'"finished":true' in last
        assert b'"fixtureSeqNum":200000,' in last
        assert size > 100_000_000 and chunks > 100
        after = server.peak_rss()
        if before is not None and after is not None:
            assert after - before < 32 * 1024 * 1024, (before, after, size)
    finally:
        assert server.stop() == 0


@pytest.mark.emulator(big_fixture_list=300_000)
async def test_a_huge_fixture_list_pages_without_a_scan(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    season = api.emu.big_season_id
    assert season is not None
    path = f"/basketball/seasons/{season}/fixtures"
    made = count_fixtures_made(monkeypatch)
    last = await api.json(path, {"paged": "true", "size": "1000", "page": "299"})
    assert len(made) == 1000  # only the page's own fixtures are made
    assert last["totalElements"] == 300_000 and last["last"] and last["numberOfElements"] == 1000
    starts = [f["startDateUTC"] for f in last["content"]]
    assert starts == sorted(starts)
    f = last["content"][-1]
    assert await api.json(f"/basketball/fixtures/{f['id']}") == f
    everything = await api.json("/basketball/fixtures", {"paged": "true", "size": "1"})
    assert everything["totalElements"] == 300_000 + 96
    kept = await api.json(path, {"paged": "true", "includeDeleted": "false", "page": "3"})
    assert 280_000 < kept["totalElements"] < 300_000
    assert not any(f["fixtureDeleted"] for f in kept["content"])
    by_name = await api.json(path, {"paged": "true", "sort": "name,desc", "page": "1000"})
    names = [f["name"] for f in by_name["content"]]
    assert names == sorted(names, reverse=True)


@pytest.mark.emulator(fixtures_per_season=1_000_000, competitions=1, seasons=1)
async def test_a_million_fixtures_in_one_list(api: Api) -> None:
    env = await api.json("/basketball/fixtures", {"paged": "true", "size": "1000", "page": "999"})
    assert env["totalElements"] == 1_000_000 and env["totalPages"] == 1000 and env["last"]
    live = await api.json("/basketball/fixtures", {"live": "true"})
    assert live and all(f["status"] == "Live" for f in live)
