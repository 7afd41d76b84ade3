"""The Parquet export (asyncsports.store.export): written by pyarrow, partitioned by sport and
season, read back by DuckDB as it is, equal to the database's rows, from SQLite and from
PostgreSQL (a throwaway server, tests/support/servers.py)."""

from __future__ import annotations

import asyncio
import datetime as dt
import subprocess
import sys
from pathlib import Path
from typing import Any

import duckdb
import msgspec
import pytest
from support import ainvoke, clean_env, invoke
from support.rows import KINDS, pg_tables, plain, sqlite_tables
from support.sqlite import sqlite

from asyncsports import store
from asyncsports.backfill import Backfill, Scope
from asyncsports.emulator import Emulator
from asyncsports.errors import SinkError
from asyncsports.store.export import export_parquet

pytestmark = pytest.mark.slow  # databases and the command in subprocesses

SCALE = {
    "competitions": 1,
    "seasons": 2,
    "teams": 4,
    "fixtures_per_season": 4,
    "actions_per_fixture": 10,
}
SCOPE = Scope(("basketball", "soccer", "tennis"), page_size=50)
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def lake(directory: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every table under ``directory`` as DuckDB reads it (hive partitions), in the
    database's column order, and the season each row is filed under."""
    tables: dict[str, list[tuple[Any, ...]]] = {}
    for table, kinds in KINDS.items():
        # Times as epoch microseconds: DuckDB's own timestamptz needs pytz to reach Python.
        cols = [f"epoch_us({c})" if k == "time" else c for c, k in kinds.items()]
        if "season_id" not in kinds:
            cols.append("season_id")
        sql = (
            f"SELECT {', '.join(cols)} FROM read_parquet('{directory}/{table}/**/*.parquet', "
            "hive_partitioning = true, hive_types = {'sport': VARCHAR, 'season_id': VARCHAR})"
        )
        rows = []
        for read in duckdb.sql(sql).fetchall():
            # DuckDB before 2.0 reads the hive default partition as its name, not NULL.
            row = [None if v == "__HIVE_DEFAULT_PARTITION__" else v for v in read]
            values = [
                EPOCH + dt.timedelta(microseconds=v) if k == "time" and v is not None else v
                for v, k in zip(row, kinds.values(), strict=False)
            ]
            rows.append((*plain(table, values), *row[len(kinds) :]))
        tables[table] = sorted(rows, key=repr)
    return tables


def expected(tables: dict[str, list[tuple[Any, ...]]]) -> dict[str, list[tuple[Any, ...]]]:
    """The database's rows, each with its fixture's season where the table has none."""
    season = {row[0]: row[2] for row in tables["fixtures"]}
    out = {"fixtures": sorted(tables["fixtures"], key=repr)}
    for table in ("actions", "statistics"):
        out[table] = sorted(((*r, season.get(r[0])) for r in tables[table]), key=repr)
    return out


@pytest.mark.emulator(**SCALE)
async def test_an_export_of_sqlite_reads_back_in_duckdb_as_the_database(
    sports_emulator: Emulator, tmp_path: Path
) -> None:
    db = tmp_path / "s.sqlite"
    async with sports_emulator.client() as client:
        assert (await Backfill(client, db, SCOPE).run()).finished
    with sqlite(db) as conn:  # a fixture without a season
        conn.execute(
            "INSERT INTO fixtures SELECT 'no-season', sport, NULL, start_date_utc, status, "
            "name, deleted, json FROM fixtures LIMIT 1"
        )
    rows = sqlite_tables(db)
    counts = await export_parquet(db, tmp_path / "lake")
    assert counts == {t: len(r) for t, r in rows.items()} and counts["actions"] > 0
    assert lake(tmp_path / "lake") == expected(rows)
    assert (tmp_path / "lake/fixtures/sport=basketball").is_dir()
    assert list((tmp_path / "lake/fixtures").glob("*/season_id=__HIVE_DEFAULT_PARTITION__"))
    # Partitioned by sport and season: DuckDB prunes by the path alone.
    filtered = duckdb.sql(
        f"SELECT count(*) FROM read_parquet('{tmp_path}/lake/actions/**/*.parquet', "
        "hive_partitioning = true) WHERE sport = 'soccer'"
    ).fetchall()
    assert filtered == [(sum(1 for r in rows["actions"] if r[2] == "soccer"),)]


@pytest.mark.emulator(**SCALE)
async def test_an_export_of_postgres_reads_back_as_the_database_and_replaces_the_last(
    sports_emulator: Emulator, postgres_url: str, tmp_path: Path
) -> None:
    async with sports_emulator.client() as client:
        assert (await Backfill(client, postgres_url, SCOPE).run()).finished
    out = tmp_path / "lake"
    (out / "actions" / "sport=old").mkdir(parents=True)  # an earlier export's leftovers
    args = ["export", "--db", postgres_url, "--parquet", str(out), "--json"]
    result = await ainvoke(*args)
    assert result.exit_code == 0, result.output
    rows = await pg_tables(postgres_url)
    assert msgspec.json.decode(result.stdout)["rows"] == {t: len(r) for t, r in rows.items()}
    assert lake(out) == expected(rows)
    assert not (out / "actions" / "sport=old").exists()
    # The types survive: timestamptz as a UTC timestamp, boolean as boolean.
    described = duckdb.sql(
        f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM "
        f"read_parquet('{out}/fixtures/**/*.parquet', hive_partitioning = true))"
    ).fetchall()
    types = dict(described)
    assert types["start_date_utc"] == "TIMESTAMP WITH TIME ZONE"
    assert types["deleted"] == "BOOLEAN" and types["json"] == "VARCHAR"


def test_a_missing_database_is_one_line_and_exit_13(tmp_path: Path) -> None:
    args = ["export", "--db", str(tmp_path / "nope.sqlite"), "--parquet", str(tmp_path / "l")]
    result = invoke(*args)
    assert result.exit_code == 13, result.output
    assert result.stderr.count("\n") == 1 and "nope.sqlite" in result.stderr
    assert not (tmp_path / "nope.sqlite").exists()


MIRRORED = ("squads", "events", "snooker_tournaments")  # what the emulator's mirror fills


def test_a_mirror_exports_its_own_tables_too(tmp_path: Path) -> None:
    db, out = tmp_path / "m.sqlite", tmp_path / "lake"
    env = clean_env()
    scale = "fixtures_per_season=3,actions_per_fixture=10"
    sync = subprocess.run(
        [
            sys.executable,
            "-m",
            "asyncsports.cli",
            "--emulator",
            "--emulator-scale",
            scale,
            "sync",
            "--once",
            "--db",
            str(db),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert sync.returncode == 0, sync.stderr
    with sqlite(db) as conn:
        stored = {
            t: {r[0] for r in conn.execute(f"SELECT json FROM {t}")}
            for t in ("fixtures", "actions", "statistics", "standings", *MIRRORED)
        }
    result = invoke("export", "--db", str(db), "--parquet", str(out), "--json")
    assert result.exit_code == 0, result.output
    counts = msgspec.json.decode(result.stdout)["rows"]
    # The resource tables always; the mirror's when they hold rows (standings here: none).
    want = {t: len(j) for t, j in stored.items() if t not in ("standings", *MIRRORED) or j}
    assert counts == want and set(MIRRORED) <= set(counts)
    for table, n in want.items():
        if n == 0:
            continue
        read = duckdb.sql(
            f"SELECT json FROM read_parquet('{out}/{table}/**/*.parquet', hive_partitioning = true)"
        ).fetchall()
        assert len(read) == n and {r[0] for r in read} == stored[table], table  # byte for byte
    assert list(out.glob("squads/sport=*/season_id=*/*.parquet"))
    assert list(out.glob("snooker_tournaments/season_id=*/*.parquet"))
    assert [p.suffix for p in (out / "events").iterdir()] == [".parquet"]  # one, unpartitioned
    described = duckdb.sql(
        f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM "
        f"read_parquet('{out}/events/*.parquet'))"
    ).fetchall()
    types = dict(described)
    assert types["id"] == "BIGINT" and types["live"] == "BOOLEAN"
    assert types["start_date"] == "TIMESTAMP WITH TIME ZONE"


def test_a_mirror_on_postgres_exports_its_tables_byte_for_byte(
    tmp_path: Path, postgres_url: str
) -> None:
    out = tmp_path / "lake"
    scale = "fixtures_per_season=3,actions_per_fixture=10"
    sync = subprocess.run(
        [
            sys.executable,
            "-m",
            "asyncsports.cli",
            "--emulator",
            "--emulator-scale",
            scale,
            "sync",
            "--once",
            "--db",
            postgres_url,
        ],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=120,
    )
    assert sync.returncode == 0, sync.stderr

    async def stored() -> dict[str, set[str]]:
        async with store.open(postgres_url) as reader:
            found: dict[str, set[str]] = {}
            for table in ("fixtures", "actions", "statistics", *MIRRORED):
                found[table] = {r[-1] async for rows in reader.rows(table) for r in rows}
            return found

    want = asyncio.run(stored())
    assert all(want[t] for t in ("fixtures", "actions", *MIRRORED))
    result = invoke("export", "--db", postgres_url, "--parquet", str(out), "--json")
    assert result.exit_code == 0, result.output
    counts = msgspec.json.decode(result.stdout)["rows"]
    assert {t: counts[t] for t in want} == {t: len(j) for t, j in want.items()}
    for table, texts in want.items():
        if texts:
            read = duckdb.sql(
                f"SELECT json FROM read_parquet('{out}/{table}/**/*.parquet', "
                "hive_partitioning = true)"
            ).fetchall()
            assert {r[0] for r in read} == texts, table  # the text as sent, through json


@pytest.mark.emulator(**SCALE)
async def test_open_reads_a_store_on_either_engine_and_refuses_what_is_not_one(
    sports_emulator: Emulator, postgres_url: str, tmp_path: Path
) -> None:
    path = tmp_path / "s.sqlite"
    async with sports_emulator.client() as client:
        for db in (path, postgres_url):
            assert (await Backfill(client, db, SCOPE).run()).finished
    want = sqlite_tables(path)
    for db in (path, postgres_url):
        async with store.open(db) as reader:
            assert reader.version == store.SCHEMA_VERSION
            counts = await reader.counts()
            assert {t: counts[t] for t in want} == {t: len(r) for t, r in want.items()}
            chunks = [len(c) async for c in reader.rows("actions", chunk=7)]
            assert sum(chunks) == len(want["actions"]) and max(chunks) == 7
    other = tmp_path / "other.sqlite"
    with sqlite(other) as conn:
        conn.execute("CREATE TABLE fixtures (x)")
    with pytest.raises(SinkError, match="not an asyncsports database"):
        async with store.open(other):
            pass
    with pytest.raises(SinkError, match="cannot read"):
        async with store.open(tmp_path / "nope.sqlite"):
            pass
    assert not (tmp_path / "nope.sqlite").exists()
