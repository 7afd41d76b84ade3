"""Sharded backfills (asyncsports.backfill.workers) against a throwaway PostgreSQL (tests/support/servers.py):
N workers end with the rows of one run; a worker killed with SIGKILL has its units taken
over once its lease lapses; a stale owner commits nothing. And the pure parts."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import signal
import sys
from pathlib import Path
from typing import Any

import anyio
import asyncpg
import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support import ainvoke, clean_env, invoke, until
from support.rows import SCALE, SCOPE, clean_run, pg_tables, sqlite_tables

from asyncsports.backfill import DEFAULT_SPORTS, Backfill, Scope
from asyncsports.backfill._shards import (
    ShardUnit,
    fixture_units,
    lapsed,
    listing_units,
    parse_unit,
    poll_every,
    renew_every,
    scope_from_json,
    scope_to_json,
)
from asyncsports.backfill.workers import Worker, job_progress, plan_job
from asyncsports.cli.workers import WORKER_KILLED
from asyncsports.emulator import Emulator
from asyncsports.store import Shards, Unit, UnitBatch

names = st.text(st.characters(codec="utf-8", exclude_characters=" /"), min_size=1, max_size=12)


# ------------------------------------------------------------------ pure parts


@given(st.sampled_from(["list", "fixture"]), names, st.none() | names, names)
def test_a_unit_name_gives_the_unit_back(
    kind: str, sport: str, season: str | None, fid: str
) -> None:
    work = ShardUnit(kind, sport, season, fid if kind == "fixture" else None)
    assert parse_unit(work.name, sport, season) == work
    assert work.name.startswith(f"{kind} ")


def test_a_job_starts_with_one_unit_per_listing() -> None:
    scope = Scope(("basketball", "tennis"), seasons=("s1", "s2", "s1"))
    assert [w.name for w in listing_units(scope)] == [
        "list basketball/seasons/s1",
        "list basketball/seasons/s2",
        "list tennis/seasons/s1",
        "list tennis/seasons/s2",
    ]
    assert [w.name for w in listing_units(Scope(("soccer",)))] == ["list soccer"]


def test_a_page_plans_a_unit_per_started_fixture_only() -> None:
    rows = [
        ("f1", "soccer", "s", None, "Completed", "a", 0, "{}"),
        ("f2", "soccer", "s", None, "Scheduled", "b", 0, "{}"),
        ("f3", "soccer", None, None, "Live", "c", 1, "{}"),
        ("f4", "soccer", None, None, None, "d", 0, "{}"),
    ]
    assert fixture_units(rows) == [
        ShardUnit("fixture", "soccer", "s", "f1"),
        ShardUnit("fixture", "soccer", None, "f4"),
    ]


@given(st.floats(0.01, 3600), st.integers(0, 1000))
def test_an_idle_worker_polls_often_enough_to_renew(lease: float, idle: int) -> None:
    assert 0 < poll_every(lease, idle) <= renew_every(lease) < lease
    assert poll_every(lease, idle) <= poll_every(lease, idle + 1)


@given(st.datetimes(), st.timedeltas(dt.timedelta(seconds=-100), dt.timedelta(seconds=100)))
def test_a_lease_lapses_at_its_end(now: dt.datetime, offset: dt.timedelta) -> None:
    assert lapsed(now + offset, now) == (offset <= dt.timedelta(0))
    assert lapsed(None, now)


def test_a_lease_must_be_positive() -> None:
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="lease"):
            renew_every(bad)


@given(
    st.lists(names, min_size=1, max_size=3),
    st.lists(names, max_size=3),
    st.none() | st.dates(),
    st.integers(1, 1000),
)
def test_a_scope_is_stored_and_read_back(
    sports: list[str], seasons: list[str], day: dt.date | None, size: int
) -> None:
    scope = Scope(tuple(sports), tuple(seasons), day, day, size)
    assert scope_from_json(msgspec.json.decode(msgspec.json.encode(scope_to_json(scope)))) == scope


# ------------------------------------------------------------------ against PostgreSQL


@pytest.fixture
async def reference(sports_emulator: Emulator, tmp_path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """The rows of a clean single-process run into SQLite."""
    return await clean_run(sports_emulator, tmp_path / "clean.sqlite")


@pytest.mark.emulator(**SCALE)
async def test_three_workers_end_with_the_rows_of_one_run(
    sports_emulator: Emulator, reference: dict[str, Any], postgres_url: str
) -> None:
    assert await plan_job(postgres_url, "j", SCOPE) is False
    reports = []
    # The work shared by the claims, not by timing: every request is held until each
    # worker holds units (none is done before), and the listings (a unit a sport, the
    # first units) outnumber three workers' two each.
    assert len(DEFAULT_SPORTS) >= 3 * 2
    gate = anyio.Event()

    async def held(_: object) -> None:
        await gate.wait()

    async def one(i: int) -> None:
        async with sports_emulator.client(on_request=held) as client:
            reports.append(await Worker(client, postgres_url, "j", concurrency=2).run())

    async def holding() -> bool:
        (progress,) = await job_progress(postgres_url, "j")
        return progress.workers == 3

    async with anyio.create_task_group() as tg:
        for i in range(3):
            tg.start_soon(one, i)
        await until(holding, within=30, every=0.05)
        gate.set()
    assert await pg_tables(postgres_url) == reference
    (progress,) = await job_progress(postgres_url, "j")
    assert progress.finished and progress.workers == 0
    units = progress.units
    assert units["fixture"]["done"] == units["fixture"]["total"] > 0
    n = len(DEFAULT_SPORTS)
    assert units["list"] == {"total": n, "done": n, "failed": 0, "held": 0}
    # Every unit committed once, by one worker: the counts add up to the job's.
    assert sum(r.units for r in reports) == units["fixture"]["total"] + n
    assert sum(r.written["actions"] for r in reports) == len(reference["actions"])
    assert all(r.units > 0 for r in reports)  # shared: each held listings at the gate


async def test_a_stale_owner_commits_nothing_and_a_lapsed_lease_is_taken_over(
    postgres_url: str,
) -> None:
    await plan_job(postgres_url, "j", Scope(("soccer",)))
    store = Shards(postgres_url)
    try:
        (work,) = await store.claim("j", "a", 5, 0.2)
        assert await store.claim("j", "b", 5, 60) == []  # held: not claimable
        taken: list[Any] = []

        async def lapsed() -> bool:  # a's lease (the database's clock): b can claim it
            taken.extend(await store.claim("j", "b", 5, 60))
            return bool(taken)

        await until(lapsed, within=5, every=0.05)
        assert taken == [work]
        item = UnitBatch(work[0], [Unit("listed soccer", "fixtures")], done=True)
        assert await store.commit("j", "a", [item]) == []  # a lost it: nothing written
        count = await store.link.do(lambda conn: conn.fetchval("SELECT count(*) FROM checkpoints"))
        assert count == 0
        assert await store.commit("j", "b", [item]) == [item]
        assert await store.remaining("j") == 0
        assert await store.commit("j", "b", [item]) == []  # done: never twice
    finally:
        await store.close()


async def test_opening_the_job_tables_waits_on_no_other_workers_transaction(
    postgres_url: str,
) -> None:
    # CREATE INDEX IF NOT EXISTS would wait for this writer's lock even with the index there.
    await plan_job(postgres_url, "j", Scope(("soccer",)))
    other = await asyncpg.connect(postgres_url)
    store = Shards(postgres_url)
    try:
        async with other.transaction():
            await other.execute("LOCK TABLE shard_units IN ROW EXCLUSIVE MODE")
            with anyio.fail_after(5):
                assert await store.remaining("j") > 0
    finally:
        await store.close()
        await other.close()


async def test_a_renewed_lease_holds_and_a_unit_failing_thrice_is_given_up(
    postgres_url: str,
) -> None:
    await plan_job(postgres_url, "j", Scope(("soccer",)))
    store = Shards(postgres_url)
    try:
        (work,) = await store.claim("j", "a", 5, 0.3)
        assert parse_unit(*work) == ShardUnit("list", "soccer")
        for _ in range(3):  # 0.45 s in all: past the first lease, renewed all along
            await anyio.sleep(0.15)
            assert await store.renew("j", "a", 0.3) == 1
            assert await store.claim("j", "b", 5, 60) == []
        await store.release("j", "a")  # given back: claimable at once, no failure
        for attempt in range(3):
            assert await store.claim("j", "b", 5, 60) == [work], attempt
            await store.release("j", "b", work[0], "boom")
        assert await store.claim("j", "c", 5, 60) == []
        assert await store.remaining("j") == 0
        (progress,) = await store.progress("j")
        assert progress.finished and progress.units["list"]["failed"] == 1
    finally:
        await store.close()


async def test_a_worker_without_its_job_is_one_line_and_exit_13(postgres_url: str) -> None:
    args = ["--emulator", "worker", "--db", postgres_url, "--job", "nowhere"]
    result = await ainvoke(*args)
    assert result.exit_code == 13, result.output
    assert "no job 'nowhere'" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.emulator(**SCALE)
async def test_a_worker_killed_with_sigkill_leaves_its_units_to_the_others(
    sports_emulator: Emulator, reference: dict[str, Any], postgres_url: str
) -> None:
    await plan_job(postgres_url, "j", SCOPE)
    env = clean_env()
    env |= {
        "ASYNCSPORTS_BASE_URL": sports_emulator.base_url,
        "ASYNCSPORTS_TOKEN": sports_emulator.token,
    }
    argv = [
        sys.executable,
        "-m",
        "asyncsports.cli",
        "--rate-limit",
        "60",
        "worker",
        "--db",
        postgres_url,
        "--job",
        "j",
        "--lease",
        "1",
        "--json",
    ]
    victim = await anyio.open_process(argv, env=env)
    try:
        with anyio.fail_after(30):
            while await _held(postgres_url, "j") < 3:  # noqa: ASYNC110 (another process)
                await anyio.sleep(0.05)
    finally:
        victim.kill()  # SIGKILL: it cannot give its units back
        await victim.wait()
    assert victim.returncode == -signal.SIGKILL
    # The dead worker's units, still marked its own (whether or not the lease lapsed yet).
    orphans = await _fetch(
        postgres_url,
        "SELECT unit, owner FROM shard_units WHERE done_at IS NULL AND owner IS NOT NULL",
    )
    assert orphans
    survivors = [anyio.run_process(argv, env=env) for _ in range(2)]
    async with anyio.create_task_group() as tg:
        for run in survivors:
            tg.start_soon(lambda run=run: run)
    assert await pg_tables(postgres_url) == reference
    (progress,) = await job_progress(postgres_url, "j")
    assert progress.finished
    taken = dict(await _fetch(postgres_url, "SELECT unit, owner FROM shard_units"))
    for unit, dead in orphans:  # each taken over and done by a survivor
        assert taken[unit] != dead


@pytest.mark.emulator(**SCALE)
async def test_a_worker_killed_midway_through_a_listing_is_resumed_at_its_next_page(
    sports_emulator: Emulator, tmp_path: Path, postgres_url: str
) -> None:
    size = 2
    scope = Scope(("basketball",), page_size=size)
    async with sports_emulator.client() as client:
        assert (await Backfill(client, tmp_path / "clean.sqlite", scope).run()).finished
        reference = sqlite_tables(tmp_path / "clean.sqlite")
        # Pages left after the kill: a batch holds at most 4 items (pending), so at most
        # five pages are committed by then.
        assert len(reference["fixtures"]) >= 6 * size
        await plan_job(postgres_url, "j", scope)

        class Killed(Worker):
            """Dies once two pages of its listing are committed: it gives nothing back."""

            def _wrote(self, batch: Any, kept: Any) -> None:
                super()._wrote(batch, kept)
                if self.report.written["fixtures"] >= 2 * size:
                    stop.cancel()

            async def _give_back(self) -> None:
                pass  # its lease stays until it lapses; its connection is aborted

        killed = Killed(client, postgres_url, "j", concurrency=1, lease=0.5)
        with anyio.CancelScope() as stop:
            await killed.run()
        assert stop.cancelled_caught
        walked = killed.report.written["fixtures"]
        store = Shards(postgres_url)
        try:  # the listing is partly walked: some pages committed, the unit not done
            assert len(await store.pages_done("j", "page basketball ")) == walked // size
            assert await store.remaining("j") > 0
        finally:
            await store.close()
        report = await Worker(client, postgres_url, "j", concurrency=2, lease=0.5).run()
    # From the first page not committed: every other page once, none skipped.
    assert report.written["fixtures"] == len(reference["fixtures"]) - walked
    assert await pg_tables(postgres_url) == reference
    (progress,) = await job_progress(postgres_url, "j")
    assert progress.finished


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # gone meanwhile
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.emulator(**SCALE)
async def test_backfill_workers_with_a_killed_worker_exits_with_the_documented_code(
    sports_emulator: Emulator, postgres_url: str
) -> None:
    env = clean_env()
    env |= {
        "ASYNCSPORTS_BASE_URL": sports_emulator.base_url,
        "ASYNCSPORTS_TOKEN": sports_emulator.token,
    }
    argv = [
        sys.executable,
        "-m",
        "asyncsports.cli",
        "--rate-limit",
        "30",
        "backfill",
        "--db",
        postgres_url,
        "--workers",
        "3",
        "--job",
        "k",
        "--page-size",
        "5",
    ]
    parent = await anyio.open_process(argv, env=env)
    try:
        with anyio.fail_after(30):
            while True:
                assert parent.returncode is None
                with contextlib.suppress(asyncpg.UndefinedTableError):  # not planned yet
                    if await _held(postgres_url, "k") >= 3:
                        break
                await anyio.sleep(0.05)
        workers = _children(parent.pid)
        assert len(workers) == 3
        for pid in workers:  # all of them: one alone would wait out its lease (30 s)
            os.kill(pid, signal.SIGKILL)
        with anyio.fail_after(30):
            await parent.wait()
    finally:
        if parent.returncode is None:
            parent.kill()
            await parent.wait()
    assert parent.stderr is not None
    said = b"".join([chunk async for chunk in parent.stderr]).decode()
    assert parent.returncode == WORKER_KILLED != 256 - signal.SIGKILL
    assert said.endswith(
        "asyncsports: error: a worker was killed by SIGKILL; run the same command again to resume\n"
    )
    # What --help says about it.
    shown = await ainvoke("backfill", "-h")
    text = " ".join(shown.stdout.split())
    assert f"{WORKER_KILLED} when that worker was killed by a signal" in text


def test_the_killed_worker_code_is_no_other_failure_s() -> None:
    from asyncsports.cli.exits import EXIT_CODES, INTERRUPTED, PIPE_CLOSED, TERMINATED

    taken = {code for _, code, _ in EXIT_CODES} | {0, 1, 2, INTERRUPTED, PIPE_CLOSED, TERMINATED}
    assert WORKER_KILLED not in taken


async def _fetch(url: str, query: str) -> list[tuple[Any, ...]]:
    conn = await asyncpg.connect(url)
    try:
        return [tuple(r) for r in await conn.fetch(query)]
    finally:
        await conn.close()


async def _held(url: str, job: str) -> int:
    conn = await asyncpg.connect(url)
    try:
        return int(
            await conn.fetchval(
                "SELECT count(*) FROM shard_units WHERE job = $1 AND lease_until > now()", job
            )
        )
    finally:
        await conn.close()


@pytest.mark.emulator(fixtures_per_season=2)
async def test_backfill_workers_runs_processes_and_jobs_shows_the_job(postgres_url: str) -> None:
    args = [
        "--emulator",
        "--emulator-scale",
        "fixtures_per_season=2",
        "backfill",
        "--db",
        postgres_url,
        "--sports",
        "basketball",
        "--workers",
        "2",
        "--job",
        "b",
        "--json",
    ]
    result = await ainvoke(*args)
    assert result.exit_code == 0, result.output
    summary = msgspec.json.decode(result.stdout)
    assert summary["finished"] is True and summary["codes"] == [0, 0]
    total = sum(u["total"] for u in summary["units"].values())
    assert sum(w["units"] for w in summary["workers"]) == total > 1
    shown = await ainvoke("jobs", "--db", postgres_url, "--json")
    assert shown.exit_code == 0, shown.output
    (line,) = shown.stdout.splitlines()
    assert msgspec.json.decode(line)["units"] == summary["units"]


def test_local_workers_split_the_rate_budget_unless_redis_shares_it() -> None:
    from asyncsports.cli.options import Globals
    from asyncsports.cli.workers import _child_argv

    def rate(cfg: Globals) -> list[str]:
        argv = _child_argv(cfg, "postgresql://db", "j", 4, 8)
        i = argv.index("--rate-limit")
        return argv[i + 1 : i + 2] + argv[i + 3 : i + 7 : 2]

    assert rate(Globals(rate_limit=8.0)) == ["2.0"]
    assert rate(Globals()) == ["0.0"]  # no limit, said outright (a worker defaults to 5)
    shared = Globals(rate_limit=8.0, rate_limit_url="redis://r", rate_limit_key="k")
    assert rate(shared) == ["8.0", "redis://r", "k"]


def test_local_workers_send_the_query_items_they_were_given() -> None:
    from asyncsports.cli.options import Globals
    from asyncsports.cli.workers import _child_argv

    argv = _child_argv(Globals(query=["subscribed=true", "a=b"]), "db", "j", 2, 8)
    assert [argv[i + 1] for i, a in enumerate(argv) if a == "--query"] == [
        "subscribed=true",
        "a=b",
    ]
    assert "--query" not in _child_argv(Globals(), "db", "j", 2, 8)


def test_the_workers_benchmark_pairs_rounds_for_its_speed_up() -> None:
    from benchmarks.workers import markdown

    def run(wall: float) -> dict[str, Any]:
        return {"wall": wall, "cpu": 1.0}

    runs = {0: [run(9), run(9)], 1: [run(10), run(20)], 2: [run(5), run(8)], 4: [run(4), run(4)]}
    data = {
        "rows": {"fixtures": 1, "actions": 100, "statistics": 1},
        "requests": 3,
        "scale": "",
        "rounds": 2,
        "latency": 0.02,
        "machine": {"cpus": 2, "load": 1.0},
        "results": {"cpu": runs, "latency": runs},
    }
    table = markdown(data)
    # Per round 10/5 and 20/8: the median of 2.0 and 2.5; not 15/6.5 from the medians.
    assert "| 2 | 6.50 s | 2.25x |" in table
    assert "| 4 | 4.00 s | 3.75x |" in table


def test_workers_need_postgresql(tmp_path: Path) -> None:
    args = ["--emulator", "backfill", "--db", str(tmp_path / "x.sqlite"), "--workers", "2"]
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    assert "postgresql://" in result.stderr and not (tmp_path / "x.sqlite").exists()
