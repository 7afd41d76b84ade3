"""The Parquet export (asyncsports.store.export): written by pyarrow, partitioned by sport and
season, read back by DuckDB as it is, equal to the database's rows, from SQLite and from
PostgreSQL (a throwaway server, tests/servers.py)."""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import duckdb
import msgspec
import pytest
from test_backfill_postgres import pg_tables, sqlite_tables
from test_sinks import KINDS, plain
from typer.testing import CliRunner

from asyncsports.backfill import Backfill, Scope
from asyncsports.cli import app
from asyncsports.emulator import Emulator
from asyncsports.store.export import export_parquet

SCALE = {"competitions": 1, "seasons": 2, "teams": 4, "fixtures_per_season": 4,
         "actions_per_fixture": 10}  # fmt: skip
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
    with sqlite3.connect(db) as conn:  # a fixture without a season
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
    result = await anyio.to_thread.run_sync(lambda: CliRunner().invoke(app, args))
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
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 13, result.output
    assert result.stderr.count("\n") == 1 and "nope.sqlite" in result.stderr
    assert not (tmp_path / "nope.sqlite").exists()
