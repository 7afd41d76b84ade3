"""Sharded backfills: any number of workers, on any machines, split one job in PostgreSQL.

::

    resumed = await plan_job(url, "nightly", Scope(("basketball",)))   # once
    async with Client(base_url, token=token) as client:                # on every machine
        report = await Worker(client, url, "nightly").run()

Each worker claims units (a listing, or a fixture's actions and statistics) from the job
table (:class:`asyncsports.store.Shards`), renews its leases while it works, and commits
each unit's rows in the transaction that marks it done, if it still holds it. A worker that dies
(even by SIGKILL) leaves its units to the others once their leases lapse; the rows at the
end are those of a single :class:`asyncsports.backfill.Backfill` run of the scope.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio

from asyncsports.backfill import (
    FATAL,
    PHASES,
    Scope,
    fetch_unit,
    first_missing,
    fixture_pages,
    listing_key,
)
from asyncsports.backfill._shards import (
    LEASE,
    ShardUnit,
    fixture_units,
    listing_units,
    parse_unit,
    poll_every,
    renew_every,
    scope_from_json,
    scope_to_json,
)
from asyncsports.client import Client
from asyncsports.errors import AsyncSportsError, NotFoundError
from asyncsports.store import (
    CONNECT_TIMEOUT,
    PATIENCE,
    JobProgress,
    Shards,
    Unit,
    UnitBatch,
    Writer,
)

__all__ = ["LEASE", "JobProgress", "Worker", "WorkerReport", "job_progress", "plan_job"]


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
        return {
            "job": self.job,
            "owner": self.owner,
            "units": self.units,
            "written": dict(self.written),
            "dropped": self.dropped,
            "not_found": self.not_found,
            "failed": [{"unit": u, "error": e} for u, e in self.failed],
            "requests": self.requests,
            "seconds": round(self.seconds, 3),
        }


async def plan_job(
    url: str,
    job: str,
    scope: Scope,
    *,
    restart: bool = False,
    connect_timeout: float = CONNECT_TIMEOUT,
) -> bool:
    """Create ``job`` for ``scope`` (or find it unfinished: True, it resumes)."""
    shards = Shards(url, connect_timeout=connect_timeout)
    try:
        units = [w.stored for w in listing_units(scope)]
        text = json.dumps(scope_to_json(scope))
        return await shards.plan(job, text, units, restart=restart)
    finally:
        await shards.close()


async def job_progress(
    url: str, job: str | None = None, *, connect_timeout: float = CONNECT_TIMEOUT
) -> list[JobProgress]:
    """The progress of every sharded job in the database (or of ``job``)."""
    shards = Shards(url, connect_timeout=connect_timeout)
    try:
        return await shards.progress(job)
    finally:
        await shards.close()


class Worker:
    """One worker of sharded job ``job`` (made by :func:`plan_job`): ``await run()``
    claims and does units until none is left, and returns a :class:`WorkerReport`.

    ``concurrency`` is the number of units in hand at once; ``lease`` the seconds a
    claim lasts unless renewed (renewed every third of it). A database never reached
    fails within ``connect_timeout``; one lost later is waited for ``patience`` seconds.
    What the units fetch is committed by a :class:`asyncsports.store.Writer` (batches,
    as the backfill's).
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
        self._db = Shards(url, patience=patience, connect_timeout=connect_timeout)
        # Room for what is fetched while the writer commits (as the backfill's writer):
        # fetchers stop only when the database falls behind.
        self._writer = Writer(
            self._db.engine(job, self.owner), pending=4 * concurrency, wrote=self._wrote
        )
        self._scope = Scope()
        self._held: set[str] = set()
        self._freed = anyio.Event()

    async def run(self) -> WorkerReport:
        """Work until the job has no unit left to claim; raise what stopped it."""
        t0, requests = time.monotonic(), self.client.requests_sent
        try:
            self._scope = scope_from_json(json.loads(await self._db.scope(self.job)))
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._renew)
                async with anyio.create_task_group() as work:
                    await work.start(self._writer.run)
                    try:
                        await self._claim_loop()
                    finally:
                        self._writer.close(finished=True)
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
                await self._db.release(self.job, self.owner)
        except Exception:
            pass  # the leases lapse by themselves
        self._db.abort()

    async def _claim_loop(self) -> None:
        idle = 0
        async with anyio.create_task_group() as tg:
            while True:
                free = self.concurrency - len(self._held)
                works: list[ShardUnit] = []
                if free > 0:
                    claimed = await self._db.claim(self.job, self.owner, free, self.lease)
                    works = [parse_unit(*c) for c in claimed]
                for work in works:
                    self._held.add(work.name)
                    tg.start_soon(self._do, work)
                if works:
                    idle = 0
                    continue
                if not self._held:
                    left = await self._db.remaining(self.job)
                    if left == 0:
                        return
                self._freed = anyio.Event()
                with anyio.move_on_after(poll_every(self.lease, idle)):
                    await self._freed.wait()
                idle += 1

    async def _do(self, work: ShardUnit) -> None:
        try:
            if work.kind == "list":
                await self._walk(work)
            else:
                await self._fixture(work)
        except AsyncSportsError as exc:
            if isinstance(exc, FATAL):
                raise
            self.report.failed.append((work.name, str(exc)))
            await self._db.release(self.job, self.owner, work.name, str(exc))
        finally:
            self._held.discard(work.name)
            self._freed.set()

    async def _fixture(self, work: ShardUnit) -> None:
        assert work.fixture is not None
        fid, units = work.fixture, {}

        async def fetch(kind: str) -> None:
            units[kind], _ = await fetch_unit(self.client, kind, work.sport, fid)

        async with anyio.create_task_group() as tg:  # both requests at once
            for kind in PHASES[1:]:
                tg.start_soon(fetch, kind)
        await self._writer.put(UnitBatch(work.name, [units[k] for k in PHASES[1:]], done=True))

    async def _walk(self, work: ShardUnit) -> None:
        key = listing_key(work.sport, work.season)
        prefix = f"page {key} "
        start = first_missing(await self._db.pages_done(self.job, prefix))
        put = self._writer.put
        try:
            walk = fixture_pages(self.client, self._scope, work.sport, work.season, start)
            async for number, rows in walk:
                unit = Unit(f"{prefix}{number}", "fixtures", rows, members=[r[0] for r in rows])
                await put(UnitBatch(work.name, [unit], [w.stored for w in fixture_units(rows)]))
        except NotFoundError:
            self.report.not_found.append(key)
            await put(UnitBatch(work.name, [Unit(f"missing {key}", "fixtures")], done=True))
            return
        await put(UnitBatch(work.name, [Unit(f"listed {key}", "fixtures")], done=True))

    def _wrote(self, batch: Sequence[UnitBatch], kept: Sequence[UnitBatch]) -> None:
        self.report.dropped += len(batch) - len(kept)
        for k in kept:
            self.report.units += k.done
            for unit in k.units:
                self.report.written[unit.table] += len(unit.rows)

    async def _renew(self) -> None:
        while True:
            await anyio.sleep(renew_every(self.lease))
            await self._db.renew(self.job, self.owner, self.lease)
