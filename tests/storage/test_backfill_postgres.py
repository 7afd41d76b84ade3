"""Whole backfills into PostgreSQL (a throwaway server, tests/support/servers.py): the rows of the
same run into SQLite, resumed after a stop, and carried through a database restart."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import asyncpg
import msgspec
import pytest
from support import clean_env, invoke
from support.rows import SCALE, SCOPE, When, clean_run, pg_count, pg_tables
from support.servers import PostgresServer, free_port

from asyncsports.backfill import Backfill
from asyncsports.emulator import Emulator
from asyncsports.errors import SinkError
from asyncsports.store import PgEngine, PgLink, Writer, redact_url

# As tests/storage/test_backfill.py: several pages per sport, a few hundred units.
pytestmark = pytest.mark.slow  # PostgreSQL, and the command in subprocesses


@pytest.fixture
async def reference(sports_emulator: Emulator, tmp_path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """The rows of a clean run into SQLite."""
    return await clean_run(sports_emulator, tmp_path / "clean.sqlite")


@pytest.mark.emulator(**SCALE)
async def test_a_backfill_into_postgres_stores_the_rows_of_sqlite(
    sports_emulator: Emulator, reference: dict[str, Any], postgres_url: str
) -> None:
    async with sports_emulator.client() as client:
        report = await Backfill(client, postgres_url, SCOPE).run()
    assert report.finished and report.db == redact_url(postgres_url)
    assert report.rows == {t: len(rows) for t, rows in reference.items()}
    assert await pg_tables(postgres_url) == reference
    assert await pg_count(postgres_url, "SELECT count(*) FROM jobs WHERE finished_at IS NULL") == 0


@pytest.mark.emulator(**SCALE)
async def test_a_stopped_run_resumes_in_postgres(
    sports_emulator: Emulator, reference: dict[str, Any], postgres_url: str
) -> None:
    async with sports_emulator.client() as client:
        work = Backfill(client, postgres_url, SCOPE, progress=When("actions", lambda: work.stop()))
        first = await work.run()
        assert first.interrupted and not first.finished
        again = await Backfill(client, postgres_url, SCOPE).run()
    assert again.resumed and again.finished and again.skipped > 0
    assert await pg_tables(postgres_url) == reference


@pytest.mark.emulator(**SCALE)
async def test_a_database_restarted_mid_run_is_waited_for_and_nothing_is_lost(
    sports_emulator: Emulator,
    reference: dict[str, Any],
    postgres: PostgresServer,
    postgres_url: str,
) -> None:
    midway = anyio.Event()

    async with sports_emulator.client(rate_limit=100) as client:  # a run of a few seconds
        work = Backfill(client, postgres_url, SCOPE, progress=When("actions", midway.set, 40))
        done: list[Any] = []

        async def run() -> None:
            done.append(await work.run())

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await midway.wait()
            # As a crash: every server process quits at once, connections break.
            await anyio.to_thread.run_sync(postgres.stop, "immediate")
            await anyio.sleep(0.5)  # the writer finds it gone and backs off
            await anyio.to_thread.run_sync(postgres.start)
    (report,) = done
    assert report.finished
    assert work._writer.engine.reconnects >= 1  # type: ignore[attr-defined]
    assert await pg_tables(postgres_url) == reference


@pytest.mark.emulator(fixtures_per_season=2)
def test_the_command_takes_a_postgresql_url_and_never_shows_its_password(
    postgres_url: str,
) -> None:
    url = postgres_url.replace("postgres@", "postgres:s3cret@")  # trust: any password does
    args = [
        "--emulator",
        "--emulator-scale",
        "fixtures_per_season=2",
        "backfill",
        "--db",
        url,
        "--sports",
        "basketball",
        "--json",
    ]
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    summary = msgspec.json.decode(result.stdout)
    assert summary["finished"] is True and summary["rows"]["fixtures"] > 0
    assert summary["db"] == url.replace("s3cret", "***")
    assert "s3cret" not in result.output


async def test_a_database_never_reached_fails_at_once_not_after_the_patience() -> None:
    port = free_port()
    url = f"postgresql://postgres:s3cret@127.0.0.1:{port}/sports"
    engine = PgEngine(url, "job", patience=60)
    with anyio.fail_after(5), pytest.raises(SinkError) as caught:
        await Writer(engine, pending=4).run()
    assert str(caught.value).startswith(
        f"cannot reach the database at 127.0.0.1:{port}: connection refused"
    )
    assert "s3cret" not in str(caught.value) and engine.reconnects == 0


async def test_a_database_lost_is_waited_for_then_fails(postgres: PostgresServer) -> None:
    url = postgres.database_url("postgres")
    link = PgLink(url, patience=0.5)
    assert await link.do(lambda conn: conn.fetchval("SELECT 1")) == 1
    await anyio.to_thread.run_sync(postgres.stop, "immediate")
    try:
        with pytest.raises(SinkError, match=rf"at 127\.0\.0\.1:{postgres.port} for 0\.5 s: "):
            await link.do(lambda conn: conn.fetchval("SELECT 1"))
        assert link.reconnects >= 2  # backed off and tried again before giving up
    finally:
        await anyio.to_thread.run_sync(postgres.start)


def test_a_database_that_does_not_exist_is_one_line_and_exit_13(postgres: PostgresServer) -> None:
    url = postgres.database_url("nowhere")
    args = ["--emulator", "--emulator-scale", "fixtures_per_season=2", "backfill", "--db", url]
    result = invoke(*args)
    assert result.exit_code == 13, result.output
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert (
        f"cannot write {redact_url(url)}" in result.stderr
        and '"nowhere" does not exist' in result.stderr
    )


@pytest.mark.emulator(**SCALE)
async def test_killed_with_sigkill_then_run_again_ends_with_the_clean_rows(
    reference: dict[str, Any], postgres_url: str
) -> None:
    scale = ",".join(f"{k}={v}" for k, v in SCALE.items())
    args = [
        sys.executable,
        "-m",
        "asyncsports.cli",
        "--emulator",
        "--emulator-scale",
        scale,
        "backfill",
        "--db",
        postgres_url,
        "--page-size",
        "5",
        "--json",
    ]
    env = clean_env()
    proc = await anyio.open_process([*args, "--rate-limit", "40"], env=env)
    try:
        with anyio.fail_after(30):
            # Another process's database: nothing to wait on but its rows.
            while await _checkpoints(postgres_url) < 40:  # noqa: ASYNC110
                await anyio.sleep(0.05)
    finally:
        proc.kill()  # SIGKILL: no chance to commit anything more
        await proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert await _checkpoints(postgres_url) >= 40
    unfinished = "SELECT count(*) FROM jobs WHERE finished_at IS NULL"
    assert await pg_count(postgres_url, unfinished) == 1  # the next run resumes it
    again = await anyio.run_process(args, env=env)
    summary = msgspec.json.decode(again.stdout)
    assert summary["resumed"] is True and summary["finished"] is True
    assert summary["skipped"] >= 40
    assert await pg_tables(postgres_url) == reference


async def _checkpoints(url: str) -> int:
    try:
        return await pg_count(url, "SELECT count(*) FROM checkpoints")
    except (asyncpg.UndefinedTableError, OSError, asyncpg.CannotConnectNowError):
        return 0  # not created yet
