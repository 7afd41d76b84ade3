"""The backfill's database, the same tests against both engines: SQLite (a file) and
PostgreSQL (a throwaway server, tests/support/servers.py), through one async interface."""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import asyncpg
import msgspec
import pytest
from support import ENGINES, until
from support.rows import KINDS, plain
from support.samples import FIXTURE_ID, action, fixture
from support.sqlite import sqlite

from asyncsports.models import Action, Fixture, decode
from asyncsports.store import JobState, SqliteEngine, Writer, _backfill
from asyncsports.store._backfill import BackfillEngine
from asyncsports.store._dialect import Dialect
from asyncsports.store._pg import PgDialect
from asyncsports.store._rows import action_row, fixture_row
from asyncsports.store._sqlite import SinkError, SqliteDialect
from asyncsports.store._types import Unit
from asyncsports.store._urls import redact_url

JOB = "sports=basketball size=100"
OTHER = "00000000-0000-4000-8000-000000000001"


def fixture_unit(name: str, *ids: int, status: str = "Completed") -> Unit:
    fixtures = [decode(Fixture, msgspec.json.encode(fixture(i, status=status))) for i in ids]
    rows = [fixture_row("basketball", f) for f in fixtures]
    return Unit(name, "fixtures", rows, members=[r[0] for r in rows])


def actions_unit(fid: str, *seqs: int) -> Unit:
    records = [decode(Action, msgspec.json.encode(action(s))) for s in seqs]
    rows = [action_row("american-football", fid, a) for a in records]
    return Unit(f"actions {fid}", "actions", rows, replace=fid)


class Engine:
    """The backfill's job on a dialect, the same for both engines."""

    def __init__(self, dialect: Dialect, url: str = "") -> None:
        self.dialect = dialect
        self.url = url
        self.name = "postgres" if url else "sqlite"

    async def start(self, job: str, *, restart: bool = False) -> Any:
        return await self.dialect.write(lambda tx: _backfill.start(tx, job, restart))

    async def write(self, job: str, units: list[Unit]) -> int:
        return await self.dialect.write(lambda tx: _backfill.write(tx, job, units))

    async def finish(self, job: str) -> None:
        await self.dialect.write(lambda tx: _backfill.finish(tx, job))

    async def counts(self) -> dict[str, int]:
        return await BackfillEngine(self.dialect, JOB).counts()

    async def rows(self, table: str) -> list[tuple[Any, ...]]:
        if isinstance(self.dialect, SqliteDialect):
            with sqlite(self.dialect.path) as db:
                return sorted(plain(table, r) for r in db.execute(f"SELECT * FROM {table}"))
        conn = await asyncpg.connect(self.url)
        try:
            got = await conn.fetch(f"SELECT {', '.join(KINDS[table])} FROM {table}")
        finally:
            await conn.close()
        return sorted(plain(table, tuple(r)) for r in got)

    async def close(self) -> None:
        await self.dialect.close()


def sqlite_engine(path: Path) -> Engine:
    return Engine(SqliteDialect(path))


async def postgres_engine(url: str) -> Engine:
    dialect = PgDialect(url, bulk=True)
    await dialect.open()
    return Engine(dialect, url)


@pytest.fixture(params=ENGINES)
async def sink(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Engine]:
    engine: Engine
    if request.param == "sqlite":
        engine = sqlite_engine(tmp_path / "db.sqlite")
    else:
        engine = await postgres_engine(request.getfixturevalue("postgres_url"))
    try:
        yield engine
    finally:
        await engine.close()


async def test_writing_a_unit_twice_upserts_instead_of_duplicating(sink: Engine) -> None:
    await sink.start(JOB)
    unit = fixture_unit("page basketball 0", 1, 2, 3)
    assert await sink.write(JOB, [unit]) == 3
    await sink.write(JOB, [unit])
    assert (await sink.counts())["fixtures"] == 3
    # A changed record replaces the stored one.
    await sink.write(JOB, [fixture_unit("page basketball 0", 2, status="Postponed")])
    assert (await sink.counts())["fixtures"] == 3
    statuses = [r[4] for r in await sink.rows("fixtures")]
    assert statuses == ["Completed", "Postponed", "Completed"]


async def test_a_unit_with_replace_leaves_exactly_its_rows_for_that_fixture(sink: Engine) -> None:
    await sink.start(JOB)
    await sink.write(JOB, [actions_unit(FIXTURE_ID, 1, 2, 3), actions_unit(OTHER, 1)])
    await sink.write(JOB, [actions_unit(FIXTURE_ID, 2, 4)])
    got = [(r[0], r[3]) for r in await sink.rows("actions")]
    assert got == [(OTHER, 1), (FIXTURE_ID, 2), (FIXTURE_ID, 4)]


async def test_a_batch_is_the_same_as_its_units_one_by_one(sink: Engine) -> None:
    await sink.start(JOB)
    batch = [
        actions_unit(FIXTURE_ID, 1, 2, 3),
        fixture_unit("page basketball 0", 1, 2),
        actions_unit(FIXTURE_ID, 2, 5),  # replaces what the first unit wrote
        fixture_unit("page basketball 1", 2, status="Postponed"),  # the same fixture again
    ]
    assert await sink.write(JOB, batch) == 3 + 2 + 2 + 1  # rows written, as SQLite counts
    assert [(r[0], r[3]) for r in await sink.rows("actions")] == [(FIXTURE_ID, 2), (FIXTURE_ID, 5)]
    assert [r[4] for r in await sink.rows("fixtures")] == ["Completed", "Postponed"]
    assert (await sink.start(JOB)).done == {
        f"actions {FIXTURE_ID}",
        "page basketball 0",
        "page basketball 1",
    }


async def test_an_unfinished_job_resumes_with_its_checkpoints_and_fixtures(sink: Engine) -> None:
    assert (await sink.start(JOB)).resumed is False
    await sink.write(JOB, [fixture_unit("page basketball 0", 3, 1), actions_unit(FIXTURE_ID, 1)])
    await sink.write(JOB, [fixture_unit("page basketball 1", 2, 1)])
    await sink.write(JOB, [Unit(f"statistics {FIXTURE_ID}", "statistics", replace=FIXTURE_ID)])
    state = await sink.start(JOB)
    assert state.resumed is True
    assert state.done == {
        "page basketball 0",
        "page basketball 1",
        f"actions {FIXTURE_ID}",
        f"statistics {FIXTURE_ID}",
    }
    fixtures = {r[0]: r for r in await sink.rows("fixtures")}
    # In the order the listings gave them, each once.
    order = [fixture_unit("x", i).rows[0][0] for i in (3, 1, 2)]
    assert [f[0] for f in state.fixtures] == order
    assert [(f[1], f[2], f[3]) for f in state.fixtures] == [("basketball", "Completed", False)] * 3
    assert set(fixtures) == set(order)
    # Another job's run does not see this one's checkpoints.
    assert (await sink.start("sports=soccer size=100")).done == frozenset()


async def test_a_finished_job_starts_afresh_keeping_its_rows(sink: Engine) -> None:
    await sink.start(JOB)
    await sink.write(JOB, [fixture_unit("page basketball 0", 1, 2)])
    await sink.finish(JOB)
    state = await sink.start(JOB)
    assert (state.resumed, state.done, tuple(state.fixtures)) == (False, frozenset(), ())
    assert (await sink.counts())["fixtures"] == 2


async def test_restart_forgets_the_checkpoints_of_an_unfinished_run(sink: Engine) -> None:
    await sink.start(JOB)
    await sink.write(JOB, [fixture_unit("page basketball 0", 1)])
    assert (await sink.start(JOB, restart=True)).done == frozenset()
    assert (await sink.start(JOB)).done == frozenset()  # still unfinished, but nothing since


async def test_a_failing_batch_leaves_neither_rows_nor_checkpoints(sink: Engine) -> None:
    await sink.start(JOB)
    good = fixture_unit("page basketball 0", 1)
    bad = Unit("page basketball 1", "fixtures", [("too", "few")])
    with pytest.raises(SinkError, match="cannot write "):
        await sink.write(JOB, [good, bad])
    assert (await sink.counts())["fixtures"] == 0
    assert (await sink.start(JOB)).done == frozenset()


async def test_a_unit_without_rows_still_checkpoints(sink: Engine) -> None:
    await sink.start(JOB)
    assert await sink.write(JOB, [Unit("listed basketball", "fixtures")]) == 0
    assert (await sink.start(JOB)).done == {"listed basketball"}


async def test_both_engines_store_the_same_rows(postgres_url: str, tmp_path: Path) -> None:
    engines: list[Engine] = [
        sqlite_engine(tmp_path / "same.sqlite"),
        await postgres_engine(postgres_url),
    ]
    units = [fixture_unit("page basketball 0", 1, 2), actions_unit(FIXTURE_ID, 1, 2, 3)]
    tables = []
    for engine in engines:
        await engine.start(JOB)
        await engine.write(JOB, units)
        tables.append({t: await engine.rows(t) for t in KINDS})
        await engine.close()
    assert tables[0] == tables[1]
    assert tables[0]["actions"][0][-1]["fixtureAction"]["fixtureSeqNum"] == 1


async def test_postgres_keeps_json_as_sent_timestamptz_and_boolean(postgres_url: str) -> None:
    sink = await postgres_engine(postgres_url)
    await sink.start(JOB)
    unit = fixture_unit("page basketball 0", 1)
    await sink.write(JOB, [unit])
    await sink.close()
    conn = await asyncpg.connect(postgres_url)
    try:
        row = await conn.fetchrow(
            "SELECT json->>'status', pg_typeof(json)::text, pg_typeof(start_date_utc)::text, "
            "deleted, json::text FROM fixtures"
        )
    finally:
        await conn.close()
    assert tuple(row)[:4] == ("Completed", "json", "timestamp with time zone", False)
    assert row[4] == unit.rows[0][-1]  # the text as sent, byte for byte


def test_a_url_is_shown_without_its_password() -> None:
    assert redact_url("postgresql://me:s3cret@db.example:5432/sports") == (
        "postgresql://me:***@db.example:5432/sports"
    )
    # Userinfo without ":" is hidden whole, in every scheme (a NATS token; issue 41).
    assert redact_url("postgresql://me@db/sports") == "postgresql://***@db/sports"
    assert redact_url("postgresql://me:my/s3cret?@db/sports") == "postgresql://me:***@db/sports"
    assert redact_url("postgresql://db/sports?user=me&password=s3cret&sslmode=require") == (
        "postgresql://db/sports?user=me&password=***&sslmode=require"
    )


# ------------------------------------------------------------------ the writer


class Held:
    """An engine whose writes wait for ``go``: what the writer batches, and when."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.go = anyio.Event()
        self.aborted = self.closed = False

    async def open(self) -> JobState:
        return JobState(resumed=False)

    async def write(self, batch: Sequence[int]) -> Sequence[int]:
        self.batches.append(list(batch))
        await self.go.wait()
        return batch[1:]  # as the workers' engine, it may write less than it was given

    async def finish(self) -> None:
        pass

    async def counts(self) -> dict[str, int]:
        return {"n": sum(map(len, self.batches))}

    async def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True


async def test_the_writer_batches_holds_producers_back_and_reports_what_was_written() -> None:
    engine, wrote = Held(), []
    writer = Writer(engine, pending=3, wrote=lambda batch, done: wrote.append(list(done)))
    async with anyio.create_task_group() as tg:
        await tg.start(writer.run)
        for i in range(3):
            await writer.put(i)  # three slots: none waits
        with anyio.move_on_after(0.3) as waited:
            await writer.put(3)  # every slot is taken until the first batch is written
        assert waited.cancelled_caught and engine.batches == [[0, 1, 2]]
        engine.go.set()
        await writer.put(3)
        writer.close(finished=True)
    assert engine.batches == [[0, 1, 2], [3]] and wrote == [[1, 2], []]
    assert writer.rows == {"n": 4} and engine.closed and not engine.aborted


async def test_a_cancelled_writer_aborts_its_engine_and_writes_nothing_more() -> None:
    engine = Held()
    writer = Writer(engine, pending=8)
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            await tg.start(writer.run)
            await writer.put(1)
            await until(lambda: engine.batches)  # the write is under way
            await writer.put(2)
            scope.cancel()
    assert engine.aborted and engine.closed and engine.batches == [[1]]


async def test_a_cancelled_sqlite_write_is_interrupted_and_rolled_back(tmp_path: Path) -> None:
    # A batch big enough to take a while: cancelled under way, SQLite's statement is
    # interrupted from the loop's thread, nothing of it is committed, the thread is gone.
    db = tmp_path / "s.sqlite"
    row = fixture_unit("one", 1).rows[0]
    rows = [(f"f{i}", *row[1:]) for i in range(80_000)]
    big = [Unit(f"page {n}", "fixtures", rows[n * 2000 : (n + 1) * 2000]) for n in range(40)]
    writer = Writer(SqliteEngine(db, "job"), pending=len(big))
    t0 = time.monotonic()
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            await tg.start(writer.run)
            for unit in big:
                await writer.put(unit)
            await anyio.sleep(0.2)  # past the linger: the write is under way
            scope.cancel()
    assert time.monotonic() - t0 < 2.0  # it did not write 80,000 rows first
    assert not [t for t in threading.enumerate() if t.name == "asyncsports-writer"]
    with sqlite(db) as conn:
        assert conn.execute("SELECT count(*) FROM checkpoints").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM fixtures").fetchone() == (0,)


def test_a_connection_left_mid_error_by_the_server_is_transient() -> None:
    """PostgreSQL stopped (``fast``) sends its clients a FATAL error; asyncpg's connection
    then consumes it (ERROR_CONSUME), and an operation started on it before it closes
    fails with ``InternalClientError`` ("cannot switch to state 12; another operation (2)
    is in progress"). That is the database going away, so the connection is dropped and
    the operation tried again on a new one, not an unusable database (a follower's last
    read at stop ended with a SinkError after a restart, once in a loaded full run)."""
    from asyncsports.store._pg import transient

    busy = asyncpg.exceptions.InternalClientError(
        "cannot switch to state 12; another operation (2) is in progress"
    )
    assert transient(busy)
    assert not transient(asyncpg.exceptions.UndefinedTableError("no such table"))
