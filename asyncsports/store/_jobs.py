"""The job table of sharded backfills, in PostgreSQL (asyncpg): plan, claim, renew, commit.

``shard_jobs`` holds each job's scope; ``shard_units`` its units of work
(:mod:`asyncsports.backfill._shards`), each claimed by one worker at a time under a lease
(``owner``, ``lease_until``), taken with ``FOR UPDATE SKIP LOCKED`` so that claimers never
wait on each other. Leases run on the database's clock, the one clock every machine shares.

A commit is one transaction: it locks the units it completes and keeps only those the
worker still owns (a worker whose lease lapsed and whose unit was taken over writes
nothing of it), writes their rows (:meth:`asyncsports.store._pg.PgSink.write`), plans the
fixture units a listing page found, and marks units done. So every unit's rows are
committed exactly once, by its last owner.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from asyncsports.backfill import Scope
from asyncsports.backfill._shards import (
    MAX_ATTEMPTS,
    Work,
    listing_units,
    parse_unit,
    scope_from_json,
    scope_to_json,
)
from asyncsports.errors import SinkError
from asyncsports.store._pg import PgSink
from asyncsports.store._sqlite import Unit

if TYPE_CHECKING:
    import asyncpg

__all__ = ["Item", "JobProgress", "claim", "commit", "plan", "progress", "release", "renew"]

_LOCK = 0x6173_7368_6172_6473  # "asshards": one creation of the job tables at a time
_DDL = (
    """CREATE TABLE IF NOT EXISTS shard_jobs (
    job text PRIMARY KEY,
    scope jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
)""",
    """CREATE TABLE IF NOT EXISTS shard_units (
    job text NOT NULL,
    unit text NOT NULL,
    sport text NOT NULL,
    season text,
    owner text,                     -- the worker holding it, or that did it
    lease_until timestamptz,        -- the claim lapses then unless renewed
    attempts integer NOT NULL DEFAULT 0,  -- failed fetches
    error text,
    rows bigint,
    done_at timestamptz,
    position bigint GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (job, unit)
)""",
    "CREATE INDEX IF NOT EXISTS shard_units_todo ON shard_units (job, position) "
    "WHERE done_at IS NULL",
)


@dataclass(frozen=True, slots=True)
class Item:
    """What a worker hands its writer: ``units`` (rows) of work unit ``work``; the
    ``planned`` units they found; ``done`` when ``work`` is complete with them."""

    work: str
    units: Sequence[Unit] = ()
    planned: Sequence[Work] = ()
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
        return {"job": self.job, "scope": self.scope, "finished": self.finished,
                "units": self.units, "workers": self.workers}  # fmt: skip


async def ensure(conn: asyncpg.Connection) -> None:
    """Create the job tables if they are not there."""
    async with conn.transaction():
        await conn.execute(f"SELECT pg_advisory_xact_lock({_LOCK})")
        for statement in _DDL:
            await conn.execute(statement)


async def plan(conn: asyncpg.Connection, job: str, scope: Scope, *, restart: bool) -> bool:
    """Create ``job`` with its listing units; an unfinished one is resumed as it stands
    (unless ``restart``). Returns whether it was resumed."""
    await ensure(conn)
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
            json.dumps(scope_to_json(scope)),
        )
        await _add(conn, job, listing_units(scope))
    return False


async def load(conn: asyncpg.Connection, job: str) -> Scope:
    """The scope of ``job``; SinkError if there is no such job."""
    await ensure(conn)
    text = await conn.fetchval("SELECT scope::text FROM shard_jobs WHERE job = $1", job)
    if text is None:
        raise SinkError(f"no job {job!r} in the database: start it with backfill --workers")
    return scope_from_json(json.loads(text))


async def _add(conn: asyncpg.Connection, job: str, works: Sequence[Work]) -> None:
    if works:
        await conn.execute(
            "INSERT INTO shard_units (job, unit, sport, season) "
            "SELECT $1, u, s, n FROM unnest($2::text[], $3::text[], $4::text[]) "
            "WITH ORDINALITY AS t(u, s, n, i) ORDER BY i ON CONFLICT DO NOTHING",
            job,
            [w.name for w in works],
            [w.sport for w in works],
            [w.season for w in works],
        )


async def claim(conn: asyncpg.Connection, job: str, owner: str, n: int, lease: float) -> list[Work]:
    """Claim up to ``n`` units nobody holds (never claimed, released, or lease lapsed)."""
    rows = await conn.fetch(
        "UPDATE shard_units u SET owner = $2, lease_until = now() + make_interval(secs => $4) "
        "FROM (SELECT unit FROM shard_units WHERE job = $1 AND done_at IS NULL "
        f"AND attempts < {MAX_ATTEMPTS} AND (lease_until IS NULL OR lease_until <= now()) "
        "ORDER BY position LIMIT $3 FOR UPDATE SKIP LOCKED) t "
        "WHERE u.job = $1 AND u.unit = t.unit RETURNING u.unit, u.sport, u.season",
        job,
        owner,
        n,
        lease,
    )
    return [parse_unit(r[0], r[1], r[2]) for r in rows]


async def renew(conn: asyncpg.Connection, job: str, owner: str, lease: float) -> int:
    """Extend the leases of every unit ``owner`` holds; returns how many it holds."""
    status = await conn.execute(
        "UPDATE shard_units SET lease_until = now() + make_interval(secs => $3) "
        "WHERE job = $1 AND owner = $2 AND done_at IS NULL",
        job,
        owner,
        lease,
    )
    return int(status.rsplit(" ", 1)[1])


async def release(
    conn: asyncpg.Connection, job: str, owner: str, unit: str | None = None, error: str = ""
) -> None:
    """Give back ``unit`` (or every unit ``owner`` holds); ``error`` counts a failure."""
    await conn.execute(
        "UPDATE shard_units SET lease_until = NULL, "
        "attempts = attempts + (CASE WHEN $4 = '' THEN 0 ELSE 1 END), "
        "error = coalesce(nullif($4, ''), error) "
        "WHERE job = $1 AND owner = $2 AND done_at IS NULL AND ($3::text IS NULL OR unit = $3)",
        job,
        owner,
        unit,
        error,
    )


async def remaining(conn: asyncpg.Connection, job: str) -> int:
    """Units of ``job`` still to do (not done, not given up on); at 0 the job is marked
    finished."""
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


async def pages_done(conn: asyncpg.Connection, job: str, prefix: str) -> set[int]:
    """The page numbers of a listing (``prefix``: ``page KEY ``) committed already."""
    rows = await conn.fetch(
        "SELECT unit FROM checkpoints WHERE job = $1 AND starts_with(unit, $2)", job, prefix
    )
    return {int(r[0][len(prefix) :]) for r in rows}


async def commit(sink: PgSink, job: str, owner: str, items: Sequence[Item]) -> list[Item]:
    """Write ``items`` in one transaction, those of units ``owner`` still holds; returns
    the items written."""
    conn = sink.connection
    async with conn.transaction():
        rows = await conn.fetch(
            "SELECT unit FROM shard_units WHERE job = $1 AND unit = ANY($2::text[]) "
            "AND owner = $3 AND done_at IS NULL FOR UPDATE",
            job,
            list({i.work for i in items}),
            owner,
        )
        held = {r[0] for r in rows}
        kept = [i for i in items if i.work in held]
        await sink.write(job, [u for i in kept for u in i.units])
        await _add(conn, job, [w for i in kept for w in i.planned])
        done = [i for i in kept if i.done]
        if done:
            await conn.execute(
                "UPDATE shard_units u SET done_at = now(), lease_until = NULL, rows = t.r "
                "FROM unnest($2::text[], $3::bigint[]) AS t(w, r) "
                "WHERE u.job = $1 AND u.unit = t.w",
                job,
                [i.work for i in done],
                [sum(len(u.rows) for u in i.units) for i in done],
            )
    return kept


async def progress(conn: asyncpg.Connection, job: str | None = None) -> list[JobProgress]:
    """Every sharded job's progress (or ``job``'s), oldest first."""
    await ensure(conn)
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
