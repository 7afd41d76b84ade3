"""The job table of sharded backfills, in PostgreSQL (asyncpg): plan, claim, renew, commit.

``shard_jobs`` holds each job's scope; ``shard_units`` its units of work (named, with a
sport and a season: what a unit means is the backfill's business), each claimed by one
worker at a time under a lease (``owner``, ``lease_until``), taken with ``FOR UPDATE SKIP
LOCKED`` so that claimers never wait on each other. Leases run on the database's clock, the one clock every machine shares.

A commit is one transaction: it locks the units it completes and keeps only those the
worker still owns (a worker whose lease lapsed and whose unit was taken over writes
nothing of it), writes their rows (:func:`asyncsports.store._backfill.write`), plans the
units a listing page found, and marks units done. So every unit's rows are committed
exactly once, by its last owner. Every operation goes through one bulk
:class:`~asyncsports.store._pg.PgDialect` and its :class:`~asyncsports.store._pg.PgLink`:
a database lost for a while is reconnected to, and the operation done again (each is
idempotent).
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

import asyncsports.store._backfill as _backfill
from asyncsports.errors import SinkError
from asyncsports.store._dialect import Tx
from asyncsports.store._pg import PgDialect, PgTx
from asyncsports.store._schema import SHARD_DDL
from asyncsports.store._types import CONNECT_TIMEOUT, PATIENCE, JobState, Unit

if TYPE_CHECKING:
    import asyncpg

__all__ = ["MAX_ATTEMPTS", "JobProgress", "ShardEngine", "Shards", "StoredUnit", "UnitBatch"]

MAX_ATTEMPTS = 3
"""Claims of a unit whose fetch failed (not fatally) before the job gives up on it."""

_LOCK = 0x6173_7368_6172_6473  # "asshards": one creation of the job tables at a time
T = TypeVar("T")

StoredUnit = tuple[str, str, str | None]
"""A shard unit (the backfill's ``ShardUnit``) as stored: its name (unique in its job), its
sport and its season."""


@dataclass(frozen=True, slots=True)
class UnitBatch:
    """What a worker hands its writer for one shard unit (``unit``, its name): the
    ``units`` of rows it wrote, the ``planned`` shard units they found, and ``done`` when
    ``unit`` is complete with them."""

    unit: str
    units: Sequence[Unit] = ()
    planned: Sequence[StoredUnit] = ()
    done: bool = False


@dataclass
class JobProgress:
    """A job's units by kind: total, done, failed for good, and held now under a lease."""

    job: str
    scope: dict[str, Any]
    finished: bool
    units: dict[str, dict[str, int]] = field(default_factory=dict)
    workers: int = 0
    """Workers holding a live lease now."""

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready values."""
        return {
            "job": self.job,
            "scope": self.scope,
            "finished": self.finished,
            "units": self.units,
            "workers": self.workers,
        }


class Shards:
    """The sharded jobs of the PostgreSQL database at ``url``, through one
    :class:`~asyncsports.store._pg.PgDialect` (its tasks take turns on one connection).

    A database never reached fails within ``connect_timeout`` (SinkError); one lost later
    is waited for up to ``patience`` seconds.
    """

    def __init__(
        self, url: str, *, patience: float = PATIENCE, connect_timeout: float = CONNECT_TIMEOUT
    ) -> None:
        self.url = url
        self.dialect = PgDialect(url, patience=patience, connect_timeout=connect_timeout, bulk=True)
        self.link = self.dialect.link
        self._ready = False

    async def _sql(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        async def ready(conn: asyncpg.Connection) -> T:
            if not self._ready:  # once: the tables outlive connections
                await _ensure(conn)
                self._ready = True
            return await fn(conn, *args)

        return await self.link.do(ready)

    async def plan(
        self, job: str, scope: str, units: Sequence[StoredUnit], *, restart: bool
    ) -> bool:
        """Create ``job`` with ``scope`` (JSON text, kept for the workers) and its first
        ``units``; an unfinished one is resumed as it stands (unless ``restart``).
        Returns whether it was resumed."""
        return await self._sql(_plan, job, scope, units, restart)

    async def scope(self, job: str) -> str:
        """The scope (JSON text) of ``job``; SinkError if there is no such job."""
        text: str | None = await self._sql(
            lambda c: c.fetchval("SELECT scope::text FROM shard_jobs WHERE job = $1", job)
        )
        if text is None:
            raise SinkError(f"no job {job!r} in the database: start it with backfill --workers")
        return text

    async def claim(self, job: str, owner: str, n: int, lease: float) -> list[StoredUnit]:
        """Claim up to ``n`` units nobody holds (never claimed, released, or lease
        lapsed), each for ``lease`` seconds."""
        rows = await self._sql(_claim, job, owner, n, lease)
        return [(r[0], r[1], r[2]) for r in rows]

    async def renew(self, job: str, owner: str, lease: float) -> int:
        """Extend the leases of every unit ``owner`` holds; returns how many it holds."""
        status: str = await self._sql(
            lambda c: c.execute(
                "UPDATE shard_units SET lease_until = now() + make_interval(secs => $3) "
                "WHERE job = $1 AND owner = $2 AND done_at IS NULL",
                job,
                owner,
                lease,
            )
        )
        return int(status.rsplit(" ", 1)[1])

    async def release(self, job: str, owner: str, unit: str | None = None, error: str = "") -> None:
        """Give back ``unit`` (or every unit ``owner`` holds); ``error`` counts a failure."""
        await self._sql(
            lambda c: c.execute(
                "UPDATE shard_units SET lease_until = NULL, "
                "attempts = attempts + (CASE WHEN $4 = '' THEN 0 ELSE 1 END), "
                "error = coalesce(nullif($4, ''), error) WHERE job = $1 AND owner = $2 "
                "AND done_at IS NULL AND ($3::text IS NULL OR unit = $3)",
                job,
                owner,
                unit,
                error,
            )
        )

    async def remaining(self, job: str) -> int:
        """Units of ``job`` still to do (not done, not given up on); at 0 the job is
        marked finished."""
        return await self._sql(_remaining, job)

    async def pages_done(self, job: str, prefix: str) -> set[int]:
        """The numbers ``N`` of the units ``PREFIX N`` committed already (a listing's pages)."""
        rows = await self._sql(
            lambda c: c.fetch(
                "SELECT unit FROM checkpoints WHERE job = $1 AND starts_with(unit, $2)",
                job,
                prefix,
            )
        )
        return {int(r[0][len(prefix) :]) for r in rows}

    async def commit(self, job: str, owner: str, items: Sequence[UnitBatch]) -> list[UnitBatch]:
        """Write ``items`` in one transaction, those of units ``owner`` still holds;
        returns the items written."""
        if not self._ready:  # the job tables are made outside a commit's transaction
            await self._sql(lambda conn: conn.fetchval("SELECT 1"))
        return await self.dialect.write(lambda tx: _commit(tx, job, owner, items))

    async def progress(self, job: str | None = None) -> list[JobProgress]:
        """Every sharded job's progress (or ``job``'s), oldest first."""
        return await self._sql(_progress, job)

    def engine(self, job: str, owner: str) -> ShardEngine:
        """The engine of a :class:`~asyncsports.store._writer.Writer` committing ``owner``'s
        items."""
        return ShardEngine(self, job, owner)

    @property
    def reached(self) -> bool:
        """Whether the database was ever reached."""
        return self.link.reached

    def abort(self) -> None:
        """Drop the connection at once (what was under way is rolled back)."""
        self.link.abort()

    async def close(self) -> None:
        """Close the connection, if open."""
        await self.link.close()


class ShardEngine:
    """A worker's engine: :meth:`write` commits a batch of items (:meth:`Shards.commit`).
    The worker opens and closes its :class:`Shards` itself; there are no job runs to
    start or finish here."""

    def __init__(self, shards: Shards, job: str, owner: str) -> None:
        self.shards = shards
        self.job = job
        self.owner = owner

    async def open(self) -> JobState:
        return JobState(resumed=False)

    async def write(self, batch: Sequence[UnitBatch]) -> Sequence[UnitBatch]:
        return await self.shards.commit(self.job, self.owner, batch)

    async def finish(self) -> None:
        pass

    async def counts(self) -> dict[str, int]:
        return {}

    async def close(self) -> None:
        pass

    def abort(self) -> None:
        self.shards.abort()


_SHARD_NAMES = [re.findall(r"IF NOT EXISTS (\w+)", s)[0] for s in SHARD_DDL]


async def _ensure(conn: asyncpg.Connection) -> None:
    """Create the job tables if they are not there."""
    # All there: no DDL. CREATE INDEX IF NOT EXISTS waits for a lock on its table even
    # when the index exists, behind any open transaction on it (another worker's).
    missing = "SELECT count(*) FROM unnest($1::text[]) AS n WHERE to_regclass(n) IS NULL"
    if await conn.fetchval(missing, _SHARD_NAMES) == 0:
        return
    async with conn.transaction():
        await conn.execute(f"SELECT pg_advisory_xact_lock({_LOCK})")
        for statement in SHARD_DDL:
            await conn.execute(statement)


async def _plan(
    conn: asyncpg.Connection, job: str, scope: str, units: Sequence[StoredUnit], restart: bool
) -> bool:
    async with conn.transaction():
        row = await conn.fetchrow(
            "SELECT finished_at FROM shard_jobs WHERE job = $1 FOR UPDATE", job
        )
        if row is not None and row[0] is None and not restart:
            return True
        for table in ("shard_units", "checkpoints", "job_fixtures"):
            await conn.execute(f"DELETE FROM {table} WHERE job = $1", job)
        await conn.execute(
            "INSERT INTO shard_jobs (job, scope) VALUES ($1, $2::jsonb) ON CONFLICT (job) "
            "DO UPDATE SET scope = excluded.scope, created_at = now(), finished_at = NULL",
            job,
            scope,
        )
        await _add(PgTx(conn), job, units)
    return False


async def _add(tx: Tx, job: str, units: Sequence[StoredUnit]) -> None:
    if units:
        names, sports, seasons = zip(*units, strict=True)
        await tx.execute(
            "INSERT INTO shard_units (job, unit, sport, season) "
            "SELECT ?, u, s, n FROM unnest(?::text[], ?::text[], ?::text[]) "
            "WITH ORDINALITY AS t(u, s, n, i) ORDER BY i ON CONFLICT DO NOTHING",
            job,
            list(names),
            list(sports),
            list(seasons),
        )


async def _claim(conn: asyncpg.Connection, job: str, owner: str, n: int, lease: float) -> list[Any]:
    return list(
        await conn.fetch(
            "UPDATE shard_units u SET owner = $2, "
            "lease_until = now() + make_interval(secs => $4) "
            "FROM (SELECT unit FROM shard_units WHERE job = $1 AND done_at IS NULL "
            f"AND attempts < {MAX_ATTEMPTS} AND (lease_until IS NULL OR lease_until <= now()) "
            "ORDER BY position LIMIT $3 FOR UPDATE SKIP LOCKED) t "
            "WHERE u.job = $1 AND u.unit = t.unit RETURNING u.unit, u.sport, u.season",
            job,
            owner,
            n,
            lease,
        )
    )


async def _remaining(conn: asyncpg.Connection, job: str) -> int:
    n = int(
        await conn.fetchval(
            "SELECT count(*) FROM shard_units WHERE job = $1 AND done_at IS NULL "
            f"AND attempts < {MAX_ATTEMPTS}",
            job,
        )
    )
    if n == 0:
        await conn.execute(
            "UPDATE shard_jobs SET finished_at = now() WHERE job = $1 AND finished_at IS NULL",
            job,
        )
    return n


async def _commit(tx: Tx, job: str, owner: str, items: Sequence[UnitBatch]) -> list[UnitBatch]:
    rows = await tx.fetch(
        "SELECT unit FROM shard_units WHERE job = ? AND unit = ANY(?::text[]) "
        "AND owner = ? AND done_at IS NULL FOR UPDATE",
        job,
        list({i.unit for i in items}),
        owner,
    )
    held = {r[0] for r in rows}
    kept = [i for i in items if i.unit in held]
    await _backfill.write(tx, job, [u for i in kept for u in i.units])
    await _add(tx, job, [w for i in kept for w in i.planned])
    done = [i for i in kept if i.done]
    if done:
        await tx.execute(
            "UPDATE shard_units u SET done_at = now(), lease_until = NULL, rows = t.r "
            "FROM unnest(?::text[], ?::bigint[]) AS t(w, r) "
            "WHERE u.job = ? AND u.unit = t.w",
            [i.unit for i in done],
            [sum(len(u.rows) for u in i.units) for i in done],
            job,
        )
    return kept


async def _progress(conn: asyncpg.Connection, job: str | None) -> list[JobProgress]:
    jobs = await conn.fetch(
        "SELECT job, scope::text, finished_at IS NOT NULL FROM shard_jobs "
        "WHERE $1::text IS NULL OR job = $1 ORDER BY created_at",
        job,
    )
    out = []
    for name, scope, finished in jobs:
        rows = await conn.fetch(
            "SELECT split_part(unit, ' ', 1), count(*), count(done_at), "
            f"count(*) FILTER (WHERE done_at IS NULL AND attempts >= {MAX_ATTEMPTS}), "
            "count(*) FILTER (WHERE done_at IS NULL AND lease_until > now()) "
            "FROM shard_units WHERE job = $1 GROUP BY 1 ORDER BY 1",
            name,
        )
        units = {r[0]: {"total": r[1], "done": r[2], "failed": r[3], "held": r[4]} for r in rows}
        workers = await conn.fetchval(
            "SELECT count(DISTINCT owner) FROM shard_units "
            "WHERE job = $1 AND done_at IS NULL AND lease_until > now()",
            name,
        )
        out.append(JobProgress(name, json.loads(scope), bool(finished), units, int(workers)))
    return out
