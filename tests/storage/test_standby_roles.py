"""A :class:`~asyncsports.sync.Standby` in this process (sync/_standby.py), on a real
database of each engine: its lease is the real one, its mirror a stand-in that writes
fenced rows (``Job``), so that each way a writer's term ends can be made at will: a pass
done, a stop, a fenced write refused (alone or from a task group), a renewal refused or
unanswered, a mirror stuck past the grace, a mirror failing, a database not the mirror's.
The ``asyncsports sync`` processes themselves: tests/storage/test_sync_standby.py."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from support import until
from support.lease import StandIn, action

from asyncsports.errors import SinkError
from asyncsports.store import (
    Election,
    Lease,
    MirrorStore,
    Write,
    _sqlite,
    is_postgres,
    open_mirror,
)
from asyncsports.store._sqlite import HOST
from asyncsports.sync import _standby
from asyncsports.sync._standby import Standby

TTL = 2.0  # the lease: renewed every half second (a loaded machine keeps to that)
POLL = 0.05


class Job(StandIn):
    """A mirror's stand-in: while it runs, a fenced write every ``every`` seconds (none
    when None) until :meth:`stop`; ``how`` says how it ends: ``"plain"`` (a refused write
    raises Deposed), ``"grouped"`` (from a task group, as the workers' do), ``"stuck"``
    (it ignores its stop), ``"fails"`` (it raises an error of its own)."""

    def __init__(self, db: str, how: str = "plain", every: float | None = 0.02) -> None:
        self.db, self.name, self.connect_timeout = db, db, 5.0
        self.label = "mirror"
        self.how, self.every = how, every
        self.fence: Lease | None = None
        self.terms: list[int] = []  # the term of each run
        self.written = 0
        self._stop = asyncio.Event()

    def stop(self) -> None:
        self._stop.set()

    async def once(self) -> None:
        await self._write(once=True)

    async def run(self) -> None:
        if self.how == "grouped":
            async with asyncio.TaskGroup() as tg:
                tg.create_task(self._write())
        else:
            await self._write()

    async def _write(self, once: bool = False) -> None:
        assert self.fence is not None
        self.terms.append(self.fence.term)
        try:
            if self.how == "fails":
                raise RuntimeError("the job failed")
            store = await open_mirror(self.db, fence=self.fence)
            try:
                await self._loop(store, once)
            finally:
                await store.close()
        finally:
            # For the next term's run, however this one ended: a run cancelled while it
            # opened the database (a lock held, the stop asked meanwhile) left the stop
            # set, and on CI's busy cores the next term's run ended at once, unasked.
            self._stop = asyncio.Event()

    async def _loop(self, store: MirrorStore, once: bool) -> None:
        while True:
            if self.every is not None:
                self.written += 1
                await store.write([Write("actions", [action(self.written)])])
            if once:
                return
            if self.how == "stuck":
                await asyncio.Event().wait()  # a database that never answers
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.every or 1.0):
                    await self._stop.wait()
            if self._stop.is_set():
                return


@contextlib.asynccontextmanager
async def running(standby: Standby) -> AsyncIterator[asyncio.Task[None]]:
    """``standby.run()`` as a task, stopped (and its end awaited) when the block ends."""
    task = asyncio.create_task(standby.run())
    try:
        yield task
    finally:
        standby.stop()
        async with asyncio.timeout(30):
            await asyncio.gather(task, return_exceptions=True)


@contextlib.asynccontextmanager
async def stolen(db: str) -> AsyncIterator[None]:
    """The lease taken from under its holder by a "thief", alive and holding it (60 s)
    until the block ends."""
    if is_postgres(db):
        conn = await asyncpg.connect(db)
        try:
            await conn.execute(
                "UPDATE sync_lease SET term = term + 1, holder = 'thief', pid = pg_backend_pid(), "
                "expires = clock_timestamp() + interval '60 seconds' WHERE name = 'sync'"
            )
            yield
        finally:
            await conn.close()
        return
    with contextlib.closing(sqlite3.connect(db, timeout=10, isolation_level=None)) as file:
        file.execute(
            "UPDATE sync_lease SET term = term + 1, holder = 'thief', pid = ?, host = ?, "
            "expires = ? WHERE name = 'sync'",
            (os.getpid(), HOST, time.time() + 60),
        )
        yield


def looks(standby: Standby) -> list[int]:
    """A count of ``standby``'s looks at the lease from now on (its ``take`` calls)."""
    count = [0]
    take = standby.election.take

    async def counted(ttl: float) -> Lease | None:
        count[0] += 1
        return await take(ttl)

    standby.election.take = counted  # type: ignore[method-assign]
    return count


async def _expires(db: str, after: Any = None) -> Any:
    """When the lease expires (with ``after``: whether that is later than ``after``)."""
    if is_postgres(db):
        conn = await asyncpg.connect(db)
        try:
            at = await conn.fetchval("SELECT expires FROM sync_lease WHERE name = 'sync'")
        finally:
            await conn.close()
    else:
        with contextlib.closing(sqlite3.connect(db)) as file:
            at = file.execute("SELECT expires FROM sync_lease WHERE name = 'sync'").fetchone()[0]
    return at if after is None else at > after


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> Iterator[Any]:
    caplog.set_level(logging.INFO, logger="asyncsports.sync")

    def said(text: str) -> int:
        return sum(text in r.getMessage() for r in caplog.records)

    yield said


async def test_once_writes_one_pass_under_the_lease_and_gives_it_up(db: str) -> None:
    job = Job(db)
    standby = Standby(job, ttl=TTL, poll=POLL)
    async with asyncio.timeout(30):
        await standby.run(once=True)
    assert job.terms == [1] and job.written == 1 and standby.takeovers == 1
    assert standby.role == "standby" and job.fence is None
    other = Election(db, "sync", "other")
    try:
        lease = await other.take(60)  # released: taken at once, not after the lapse
        assert lease is not None and lease.term == 2
    finally:
        await other.close()


async def test_a_standby_names_the_writer_once_and_takes_over_when_it_lets_go(
    db: str, logs: Any
) -> None:
    other = Election(db, "sync", "other")
    job = Job(db)
    standby = Standby(job, ttl=TTL, poll=POLL)
    try:
        held = await other.take(60)
        assert held is not None
        async with running(standby) as task:
            await until(lambda: standby.holder == "other", within=10)
            assert standby.reachable and standby.role == "standby"
            await until(lambda: logs("standby for") == 1 and logs("other writes it") == 1)
            looked = looks(standby)
            await until(lambda: looked[0] >= 3, within=10)
            assert logs("other writes it") == 1  # said once, not at each look
            await other.release(held)
            await until(lambda: standby.role == "writer", within=10)
            first = await _expires(db)
            await until(lambda: _expires(db, after=first), within=10)  # renewed
        assert task.done() and task.exception() is None
        assert standby.role == "standby" and job.terms == [2]
        assert await other.holder() == (2, standby.who, False)  # given up at the stop
    finally:
        await other.close()


class Exporter(Job):
    """A job of a kind the standby has never heard of: its log lines are its own words."""

    does = "exports it"

    def __init__(self, db: str) -> None:
        super().__init__(db)
        self.label = "export"

    def held(self, lease: str) -> str:
        return f"the {lease} export"

    def doing(self, lease: str) -> str:
        return f"exporting under {lease}"


async def test_a_standby_says_what_any_job_does_in_the_job_s_own_words(db: str, logs: Any) -> None:
    # Issue 42: no branch on a label ("mirror" or not): the job says how it is named.
    other = Election(db, "sync", "other")
    job = Exporter(db)
    standby = Standby(job, ttl=TTL, poll=POLL)
    try:
        held = await other.take(60)
        assert held is not None
        async with running(standby):
            await until(lambda: logs("export: standby for the sync export: other exports it") == 1)
            await other.release(held)
            await until(lambda: logs("export: exporting under sync (lease term 2)") == 1)
            assert job.fence is not None and job.fence.term == 2  # the lease it was given
        assert job.fence is None  # taken back as the term ended
    finally:
        await other.close()


@pytest.mark.parametrize(("how", "every"), [("plain", 0.02), ("grouped", 0.02), ("plain", None)])
async def test_a_writer_whose_lease_is_taken_stands_by(
    db: str, logs: Any, how: str, every: float | None
) -> None:
    # Writing: a fenced write refused (Deposed, alone or in a group). Idle: its renewal
    # finds the term moved on.
    job = Job(db, how, every)
    standby = Standby(job, ttl=TTL, poll=POLL)
    async with running(standby) as task:
        await until(lambda: standby.role == "writer", within=10)
        async with stolen(db):
            written = job.written
            await until(lambda: standby.holder == "thief", within=10)
            assert logs("lost the lease") == 1 and standby.role == "standby"
            assert job.written <= written + 1  # at most the write under way, refused
    assert task.exception() is None and job.terms == [1]


async def test_a_mirror_stuck_past_the_grace_is_cancelled_once_its_lease_is_lost(
    db: str, logs: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_standby, "GRACE", 0.2)
    job = Job(db, "stuck")
    standby = Standby(job, ttl=TTL, poll=POLL)
    async with running(standby) as task:
        await until(lambda: standby.role == "writer" and job.written == 1, within=10)
        async with stolen(db):
            await until(lambda: standby.holder == "thief", within=10)
            assert logs("lost the lease") == 1 and standby.role == "standby"
    assert task.exception() is None and job.terms == [1]


async def test_a_failing_mirror_s_error_ends_the_standby(db: str) -> None:
    job = Job(db, "fails")
    standby = Standby(job, ttl=TTL, poll=POLL)
    async with asyncio.timeout(30):
        with pytest.raises(RuntimeError, match="the job failed"):
            await standby.run()
    assert standby.role == "standby" and standby.takeovers == 1


@pytest.mark.slow  # the lease lapses by the clock: two seconds of waiting by design
async def test_a_renewal_that_gets_no_answer_loses_the_lease_by_the_clock(
    tmp_path: Path, logs: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SQLite's one write lock, held by another connection: every renewal waits for it
    # and gives up; once the lease would have lapsed, the writer stands by.
    monkeypatch.setattr(_sqlite, "BUSY", 0.05)
    db = str(tmp_path / "mirror.sqlite")
    job = Job(db, every=None)
    standby = Standby(job, ttl=TTL, poll=POLL)
    async with running(standby) as task:
        await until(lambda: standby.role == "writer", within=10)
        with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as file:
            file.execute("BEGIN IMMEDIATE")
            await until(lambda: logs("lost the lease") == 1, within=10)
            assert logs("cannot renew the lease") >= 1
            file.execute("ROLLBACK")
        await until(lambda: standby.role == "writer", within=10)  # its turn again
    # The term of each run, in order: the first, then a later one after the lock (a busy
    # machine may miss a renewal of the short TTL once more, and run again).
    assert task.exception() is None and job.terms[0] == 1 and job.terms[-1] >= 2
    assert job.terms == sorted(job.terms)


class Quick(StandIn):
    """A job whose :meth:`run` returns at once, unasked (a publisher whose stop outlived
    its term did): it stops the standby at its ``guard``-th run, so a loop ends."""

    label = "publisher"

    def __init__(self, db: str, standby: list[Standby], guard: int = 50) -> None:
        self.db, self.name, self.connect_timeout = db, db, 5.0
        self.fence: Lease | None = None
        self.terms: list[int] = []
        self.standby, self.guard = standby, guard

    def stop(self) -> None:
        pass

    async def run(self) -> None:
        assert self.fence is not None
        self.terms.append(self.fence.term)
        if len(self.terms) >= self.guard:
            self.standby[0].stop()

    once = run


async def test_a_job_that_returns_at_once_ends_the_standby_not_a_loop_of_terms(
    db: str, logs: Any
) -> None:
    # Issue 41: each term's run returned at once, and the standby took the lease again
    # for the next: thousands of terms a second. A job that ends unasked has nothing
    # more to do; the standby gives the lease up and ends with it.
    holder: list[Standby] = []
    job = Quick(db, holder)
    standby = Standby(job, ttl=TTL, poll=POLL)
    holder.append(standby)
    async with asyncio.timeout(30):
        await standby.run()
    assert job.terms == [1] and standby.takeovers == 1 and logs("(lease term") == 1
    assert standby.role == "standby"
    other = Election(db, "sync", "other")
    try:
        lease = await other.take(60)  # given up as it ended
        assert lease is not None and lease.term == 2
    finally:
        await other.close()


async def test_a_database_not_the_mirror_s_ends_the_standby_at_once(tmp_path: Path) -> None:
    db = tmp_path / "other.sqlite"
    with contextlib.closing(sqlite3.connect(db)) as file:
        file.execute("CREATE TABLE asyncsports_schema (version integer NOT NULL)")
        file.execute("INSERT INTO asyncsports_schema VALUES (99)")
        file.commit()
    standby = Standby(Job(str(db)), ttl=TTL, poll=POLL)
    async with asyncio.timeout(30):
        with pytest.raises(SinkError, match="is not an asyncsports database"):
            await standby.run()
    assert standby.takeovers == 0


async def test_an_unreachable_database_is_said_once_and_looked_at_again(
    postgres: Any, logs: Any
) -> None:
    url = postgres.create_database()
    gate = Gate(postgres.port)
    await gate.start()
    standby = Standby(Job(gate.url(url)), ttl=TTL, poll=POLL)
    other = Election(url, "sync", "other")
    try:
        assert await other.take(60) is not None  # held: the standby polls
        async with running(standby):
            await until(lambda: standby.reachable, within=10)
            gate.shut()
            await until(lambda: logs("cannot reach") == 1 and not standby.reachable, within=20)
            looked = looks(standby)
            await until(lambda: looked[0] >= 3, within=20)
            assert not standby.reachable and logs("cannot reach") == 1  # said once
            gate.open()
            await until(lambda: standby.reachable, within=20)
    finally:
        await other.close()
        await gate.close()


class Gate:
    """A TCP forwarder to PostgreSQL that can be shut: every connection through it
    dropped and new ones refused (a database unreachable for now), then opened again."""

    def __init__(self, port: int) -> None:
        self.upstream = port
        self.port = 0
        self.server: asyncio.Server | None = None
        self.writers: set[asyncio.StreamWriter] = set()
        self.shut_ = False

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._client, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    def url(self, db: str) -> str:
        return db.replace(f":{self.upstream}/", f":{self.port}/")

    def shut(self) -> None:
        self.shut_ = True
        for w in list(self.writers):
            w.transport.abort()

    def open(self) -> None:
        self.shut_ = False

    async def close(self) -> None:
        self.shut()
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.shut_:
            writer.transport.abort()
            return
        self.writers.add(writer)
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream)
            self.writers.add(up_writer)
            await asyncio.gather(_pump(reader, up_writer), _pump(up_reader, writer))
        except OSError:
            pass
        finally:
            writer.transport.abort()
            self.writers.discard(writer)


async def _pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    try:
        while data := await src.read(65536):
            dst.write(data)
            await dst.drain()
    except OSError:
        pass
    finally:
        dst.transport.abort()
