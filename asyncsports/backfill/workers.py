"""Sharded backfills: any number of workers, on any machines, split one job in PostgreSQL.

::

    resumed = await plan_job(url, "nightly", Scope(("basketball",)))   # once
    async with Client(base_url, token=token) as client:                # on every machine
        report = await Worker(client, url, "nightly").run()

Each worker claims units (:mod:`asyncsports.backfill._shards`) from the job table
(:mod:`asyncsports.store._jobs`), renews its leases while it works, and commits each unit's
rows in the transaction that marks it done, if it still holds it. A worker that dies
(even by SIGKILL) leaves its units to the others once their leases lapse; the rows at the
end are those of a single :class:`asyncsports.backfill.Backfill` run of the scope.
"""

from __future__ import annotations

import functools
import os
import socket
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
from anyio.abc import ObjectSendStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from asyncsports.backfill import (
    FATAL,
    PHASES,
    Scope,
    fetch_unit,
    first_missing,
    fixture_pages,
    listing_key,
)
from asyncsports.backfill._shards import LEASE, Work, fixture_units, poll_every, renew_every
from asyncsports.client import Client
from asyncsports.errors import AsyncSportsError, NotFoundError
from asyncsports.store import _jobs as store
from asyncsports.store._pg import CONNECT_TIMEOUT, LINGER, PgLink, PgSink, unusable
from asyncsports.store._sqlite import Unit

__all__ = ["Worker", "WorkerReport", "job_progress", "plan_job"]

T = TypeVar("T")
PATIENCE = 120.0
"""Seconds a worker keeps trying while a database it had reached is unreachable."""


@dataclass
class WorkerReport:
    """What one worker did."""

    job: str
    owner: str
    units: int = 0
    """Units this worker completed (and committed)."""
    written: Counter[str] = field(default_factory=Counter)
    dropped: int = 0
    """Items fetched for units whose lease lapsed and that another worker took over."""
    not_found: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    requests: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready values."""
        return {"job": self.job, "owner": self.owner, "units": self.units,
                "written": dict(self.written), "dropped": self.dropped,
                "not_found": self.not_found,
                "failed": [{"unit": u, "error": e} for u, e in self.failed],
                "requests": self.requests, "seconds": round(self.seconds, 3)}  # fmt: skip


async def _connect(url: str, connect_timeout: float) -> PgSink:
    try:
        return await PgSink.open(url, connect_timeout=connect_timeout)
    except Exception as exc:
        raise unusable(url, exc, connect_timeout) from exc


async def plan_job(
    url: str,
    job: str,
    scope: Scope,
    *,
    restart: bool = False,
    connect_timeout: float = CONNECT_TIMEOUT,
) -> bool:
    """Create ``job`` for ``scope`` (or find it unfinished: True, it resumes)."""
    sink = await _connect(url, connect_timeout)
    try:
        return await store.plan(sink.connection, job, scope, restart=restart)
    finally:
        await sink.close()


async def job_progress(
    url: str, job: str | None = None, *, connect_timeout: float = CONNECT_TIMEOUT
) -> list[store.JobProgress]:
    """The progress of every sharded job in the database (or of ``job``)."""
    sink = await _connect(url, connect_timeout)
    try:
        return await store.progress(sink.connection, job)
    finally:
        await sink.close()


class _Db(PgLink):
    """A :class:`~asyncsports.store._pg.PgLink` used by one operation at a time (the
    worker's tasks share it)."""

    def __init__(self, url: str, patience: float, connect_timeout: float) -> None:
        super().__init__(url, patience=patience, connect_timeout=connect_timeout)
        self._lock = anyio.Lock()

    async def sql(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """``fn(connection, *args)``, done again on a new connection if the database
        was lost (every operation of the job store is idempotent)."""
        return await self.do(lambda s: fn(s.connection, *args))

    async def do(self, op: Callable[[PgSink], Awaitable[T]]) -> T:
        async with self._lock:
            return await super().do(op)


class Worker:
    """One worker of sharded job ``job`` (made by :func:`plan_job`): ``await run()``
    claims and does units until none is left, and returns a :class:`WorkerReport`.

    ``concurrency`` is the number of units in hand at once; ``lease`` the seconds a
    claim lasts unless renewed (renewed every third of it). A database never reached
    fails within ``connect_timeout``; one lost later is waited for ``patience`` seconds.
    """

    def __init__(
        self,
        client: Client,
        url: str,
        job: str,
        *,
        concurrency: int = 8,
        lease: float = LEASE,
        patience: float = PATIENCE,
        connect_timeout: float = CONNECT_TIMEOUT,
        owner: str | None = None,
    ) -> None:
        renew_every(lease)  # validates it
        self.client = client
        self.job = job
        self.concurrency = concurrency
        self.lease = lease
        self.owner = owner or f"{socket.gethostname()}/{os.getpid()}/{uuid.uuid4().hex[:6]}"
        self.report = WorkerReport(job, self.owner)
        self._db = _Db(url, patience, connect_timeout)
        self._scope = Scope()
        self._held: set[str] = set()
        self._freed = anyio.Event()

    async def run(self) -> WorkerReport:
        """Work until the job has no unit left to claim; raise what stopped it."""
        t0, requests = time.monotonic(), self.client.requests_sent
        try:
            self._scope = await self._db.sql(store.load, self.job)
            # Room for what is fetched while the writer commits (as the backfill's writer):
            # fetchers stop only when the database falls behind.
            send, receive = anyio.create_memory_object_stream[store.Item](4 * self.concurrency)
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._renew)
                tg.start_soon(self._write, receive)
                async with send:
                    await self._claim_loop(send)
                tg.cancel_scope.cancel()  # the writer is done: stop renewing
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self._give_back()
            raise
        finally:
            self.report.requests = self.client.requests_sent - requests
            self.report.seconds = time.monotonic() - t0
        await self._give_back()
        return self.report

    async def _give_back(self) -> None:
        """Release what this worker still holds, so others need not wait for the lease."""
        if not self._db.reached:
            return  # it holds nothing, and connecting again would only delay the error
        try:
            with anyio.fail_after(5):
                await self._db.sql(store.release, self.job, self.owner)
        except Exception:
            pass  # the leases lapse by themselves
        self._db.abort()

    async def _claim_loop(self, send: MemoryObjectSendStream[store.Item]) -> None:
        idle = 0
        async with anyio.create_task_group() as tg:
            while True:
                free = self.concurrency - len(self._held)
                works: list[Work] = []
                if free > 0:
                    works = await self._db.sql(store.claim, self.job, self.owner, free, self.lease)
                for work in works:
                    self._held.add(work.name)
                    tg.start_soon(self._do, work, send.clone())
                if works:
                    idle = 0
                    continue
                if not self._held:
                    left = await self._db.sql(store.remaining, self.job)
                    if left == 0:
                        return
                self._freed = anyio.Event()
                with anyio.move_on_after(poll_every(self.lease, idle)):
                    await self._freed.wait()
                idle += 1

    async def _do(self, work: Work, send: ObjectSendStream[store.Item]) -> None:
        async with send:
            try:
                if work.kind == "list":
                    await self._walk(work, send)
                else:
                    await self._fixture(work, send)
            except AsyncSportsError as exc:
                if isinstance(exc, FATAL):
                    raise
                self.report.failed.append((work.name, str(exc)))
                await self._db.sql(store.release, self.job, self.owner, work.name, str(exc))
            finally:
                self._held.discard(work.name)
                self._freed.set()

    async def _fixture(self, work: Work, send: ObjectSendStream[store.Item]) -> None:
        assert work.fixture is not None
        fid, units = work.fixture, {}

        async def fetch(kind: str) -> None:
            units[kind], _ = await fetch_unit(self.client, kind, work.sport, fid)

        async with anyio.create_task_group() as tg:  # both requests at once
            for kind in PHASES[1:]:
                tg.start_soon(fetch, kind)
        await send.send(store.Item(work.name, [units[k] for k in PHASES[1:]], done=True))

    async def _walk(self, work: Work, send: ObjectSendStream[store.Item]) -> None:
        key = listing_key(work.sport, work.season)
        prefix = f"page {key} "
        pages = await self._db.sql(store.pages_done, self.job, prefix)
        start = first_missing(pages)
        try:
            walk = fixture_pages(self.client, self._scope, work.sport, work.season, start)
            async for number, rows in walk:
                unit = Unit(f"{prefix}{number}", "fixtures", rows, members=[r[0] for r in rows])
                await send.send(store.Item(work.name, [unit], fixture_units(rows)))
        except NotFoundError:
            self.report.not_found.append(key)
            await send.send(store.Item(work.name, [Unit(f"missing {key}", "fixtures")], done=True))
            return
        await send.send(store.Item(work.name, [Unit(f"listed {key}", "fixtures")], done=True))

    async def _write(self, receive: MemoryObjectReceiveStream[store.Item]) -> None:
        async with receive:
            async for item in receive:
                items = [item]
                # Gather for a moment: a transaction costs a dozen round trips whatever
                # its size (as asyncsports.store._pg.LINGER).
                with anyio.move_on_after(LINGER):
                    while len(items) < 4 * self.concurrency:
                        try:
                            items.append(await receive.receive())
                        except anyio.EndOfStream:
                            break
                commit = functools.partial(
                    store.commit, job=self.job, owner=self.owner, items=items
                )
                kept = await self._db.do(commit)
                self.report.dropped += len(items) - len(kept)
                for k in kept:
                    self.report.units += k.done
                    for unit in k.units:
                        self.report.written[unit.table] += len(unit.rows)

    async def _renew(self) -> None:
        while True:
            await anyio.sleep(renew_every(self.lease))
            await self._db.sql(store.renew, self.job, self.owner, self.lease)
