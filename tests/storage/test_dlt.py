"""The dlt source (asyncsports.dlt) and `asyncsports load`: the emulator into DuckDB, the
same rows as the backfill's into SQLite; a second run after the emulator's clock moved
loads only what changed; PostgreSQL as a dlt destination; the command."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from support import clean_env, lines, run
from support.sqlite import sqlite

from asyncsports.backfill import Backfill, Scope
from asyncsports.dlt._bridge import Bridge
from asyncsports.emulator import Emulator

dlt = pytest.importorskip("dlt")
duckdb = pytest.importorskip("duckdb")

from asyncsports.dlt import TABLES, sports_source  # noqa: E402

SCALE = {
    "competitions": 1,
    "seasons": 2,
    "teams": 4,
    "fixtures_per_season": 8,
    "actions_per_fixture": 30,
}
SCALE_ARG = ",".join(f"{k}={v}" for k, v in SCALE.items())
BACKFILLED = ("fixtures", "actions", "statistics")
HOURS = 3 * 3600.0


def _pipeline(tmp: Path, name: str = "load", destination: Any = None) -> Any:
    dest = destination or dlt.destinations.duckdb(str(tmp / f"{name}.duckdb"))
    return dlt.pipeline(
        name, destination=dest, dataset_name="sports", pipelines_dir=str(tmp / "pipelines")
    )


async def _load(pipe: Any, client: Any, **kw: Any) -> dict[str, int]:
    """One run of the source; the rows it loaded per data table."""
    await asyncio.to_thread(pipe.run, sports_source(client, **kw))
    counts = pipe.last_trace.last_normalize_info.row_counts
    return {t: n for t, n in counts.items() if not t.startswith("_dlt")}


def _duck(tmp: Path, name: str = "load") -> dict[str, dict[tuple[str, ...], str]]:
    """Each backfilled table of the DuckDB file: key -> JSON."""
    with duckdb.connect(str(tmp / f"{name}.duckdb")) as db:
        return {
            t: _keyed(
                t,
                db.execute(f"SELECT * FROM sports.{t}").fetchall(),
                [d[0] for d in db.description],
            )
            for t in BACKFILLED
        }


def _sqlite(path: Path) -> dict[str, dict[tuple[str, ...], str]]:
    with sqlite(path) as db:
        out = {}
        for t in BACKFILLED:
            cur = db.execute(f"SELECT * FROM {t}")
            out[t] = _keyed(t, cur.fetchall(), [d[0] for d in cur.description])
        return out


def _keyed(table: str, rows: list[Any], names: list[str]) -> dict[tuple[str, ...], str]:
    key = TABLES[table].key
    found = {}
    for row in rows:
        r = dict(zip(names, row, strict=True))
        json = r["json"]
        found[tuple(str(r[k]) for k in key)] = json if isinstance(json, str) else str(json)
    return found


async def _backfill(client: Any, db: Path) -> dict[str, dict[tuple[str, ...], str]]:
    report = await Backfill(client, db, Scope()).run()
    assert report.finished
    return _sqlite(db)


# ------------------------------------------------------------------ the bridge


async def test_a_pipeline_run_on_the_clients_own_loop_is_refused() -> None:
    """It would block the loop the client needs: a clear error, not a deadlock."""
    async with Emulator(seed=1, **SCALE) as emu, emu.client() as client:
        bridge = Bridge(client, asyncio.get_running_loop())
        with bridge.using(), pytest.raises(RuntimeError, match=r"asyncio\.to_thread"):
            bridge.call(client.fixtures.get, "basketball", "x")


# ------------------------------------------------------------------ loads


@pytest.mark.slow
@pytest.mark.emulator(**SCALE)
@pytest.mark.parametrize("mode", ["round_robin", "fifo"])
async def test_the_first_load_has_the_backfills_rows_and_the_second_only_changes(
    sports_emulator: Emulator, tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # fifo: dlt runs each resource to its end before the next; they share one listing still.
    monkeypatch.setenv("EXTRACT__NEXT_ITEM_MODE", mode)
    pipe = _pipeline(tmp_path)
    async with sports_emulator.client() as client:
        first = await _load(pipe, client)
        before = await _backfill(client, tmp_path / "before.sqlite")
        loaded = _duck(tmp_path)
        for t in BACKFILLED:
            assert first[t] == len(before[t]) > 0, t
            assert loaded[t].keys() == before[t].keys(), t
        # Every other resource loaded something from the emulator.
        assert set(first) == set(TABLES), first

        sports_emulator.clock.advance(HOURS)
        second = await _load(pipe, client)
        after = await _backfill(client, tmp_path / "after.sqlite")
        loaded = _duck(tmp_path)
        for t in BACKFILLED:
            changed = {k for k, json in after[t].items() if before[t].get(k) != json}
            assert changed, t  # the clock moved: fixtures went live, timelines grew
            assert second.get(t, 0) == len(changed), t
            assert loaded[t].keys() == after[t].keys(), t
        assert "squads" not in second  # read once per season

        # Nothing moved since: nothing to load, and no request for a finished fixture.
        sent = client.requests_sent
        assert await _load(pipe, client) == {}
        third = client.requests_sent - sent
    assert 0 < third < sent / 4


@pytest.mark.slow
@pytest.mark.emulator(**SCALE)
async def test_a_source_made_outside_a_loop_runs_the_client_on_its_own(
    sports_emulator: Emulator, tmp_path: Path
) -> None:
    """Plain synchronous code: the source opens the client for the run and closes it."""
    client = sports_emulator.client()

    def sync() -> tuple[dict[str, int], bool]:
        pipe = _pipeline(tmp_path)
        pipe.run(sports_source(client.settings, ["basketball"], events=False))
        counts = pipe.last_trace.last_normalize_info.row_counts
        return counts, client.is_open

    counts, still_open = await asyncio.to_thread(sync)
    assert counts["fixtures"] > 0 and counts["actions"] > 0 and not still_open


@pytest.mark.slow
@pytest.mark.emulator(**SCALE)
async def test_postgresql_as_a_dlt_destination(
    sports_emulator: Emulator, postgres_url: str, tmp_path: Path
) -> None:
    pytest.importorskip("psycopg2")
    # dlt asks for a password; the throwaway server trusts local connections and ignores it.
    url = postgres_url.replace("postgresql://postgres@", "postgresql://postgres:unused@")
    pipe = _pipeline(tmp_path, destination=dlt.destinations.postgres(url))
    async with sports_emulator.client() as client:
        first = await _load(pipe, client, sports=["basketball", "soccer"])
        with pipe.sql_client() as sql:
            counts = {t: sql.execute_sql(f"SELECT count(*) FROM {t}")[0][0] for t in BACKFILLED}
            name = sql.execute_sql("SELECT json->>'name' FROM fixtures LIMIT 1")[0][0]
        assert await _load(pipe, client, sports=["basketball", "soccer"]) == {}
    assert counts == {t: first[t] for t in BACKFILLED} and counts["actions"] > 0
    assert " v " in name  # the record's JSON, queryable as JSON


# ------------------------------------------------------------------ the command


@pytest.mark.slow
def test_the_load_command_loads_then_nothing_new_then_all_on_refresh(tmp_path: Path) -> None:
    env = clean_env(DESTINATION__DUCKDB__CREDENTIALS=str(tmp_path / "cli.duckdb"))
    args = [
        "--emulator",
        "--emulator-scale",
        SCALE_ARG,
        "--json",
        "load",
        "--pipelines-dir",
        str(tmp_path / "pipelines"),
        "-s",
        "basketball",
        "-s",
        "soccer",
    ]
    (first,) = lines(run(*args, env=env))
    assert first["destination"] == "duckdb" and first["dataset"] == "sports"
    assert first["loaded"]["fixtures"] > 0 and first["loaded"]["actions"] > 0
    assert first["requests"] > 0
    with duckdb.connect(str(tmp_path / "cli.duckdb")) as db:
        (n,) = db.execute("SELECT count(*) FROM sports.fixtures").fetchone() or (0,)
    assert n == first["loaded"]["fixtures"]
    (again,) = lines(run(*args, env=env))
    assert again["loaded"] == {}
    (refreshed,) = lines(run(*args, "--refresh", env=env))
    assert refreshed["loaded"] == first["loaded"]
