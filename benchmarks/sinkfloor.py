"""The backfill's floor: what a hand-written script would do to copy the same rows.

aiohttp GETs of the same listings and timelines (page size 100, 8 fixtures at once),
msgspec Structs with only the columns stored (``gc=False``), each record's JSON text as
sent, and ``executemany`` of the same upserts into the same SQLite tables (the schema and
settings of :mod:`asyncsports.store._sqlite`), a transaction per 32 fixtures; or, given a
``postgresql://`` URL, COPY into staging tables and one ``INSERT ... ON CONFLICT`` per
table and batch (as the sink does, without its checkpoints). What it leaves out
is what the backfill adds: resumability (checkpoints, the job's fixtures), retries, rate
limits, back pressure, the writer thread, progress, errors that say where.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import msgspec

from asyncsports.store._schema import RESOURCE_TABLES
from asyncsports.store._sql import upsert
from asyncsports.store._sqlite import _SCHEMA

_UPSERT = {t.name: upsert(t) for t in RESOURCE_TABLES}

__all__ = ["floor"]

SPORTS = (
    "american-football",
    "basketball",
    "cricket",
    "ice-hockey",
    "snooker",
    "soccer",
    "v2/volleyball",
)
NOT_STARTED = ("scheduled", "postponed")


class _Keys(msgspec.Struct, gc=False, rename="camel"):
    action_id: uuid.UUID
    fixture_seq_num: int | None = None
    fixture_action_type: str | None = None
    send_type: str | None = None
    timestamp: dt.datetime | None = None


class _Action(msgspec.Struct, gc=False, rename="camel"):
    fixture_action: _Keys


class _Season(msgspec.Struct, gc=False):
    id: uuid.UUID


class _Stage(msgspec.Struct, gc=False):
    season: _Season | None = None


class _Fixture(msgspec.Struct, gc=False, rename="camel"):
    id: uuid.UUID
    name: str | None = None
    status: str | None = None
    start_date_utc: dt.datetime | None = msgspec.field(name="startDateUTC", default=None)
    stage: _Stage | None = None
    fixture_deleted: bool = False


class _Page(msgspec.Struct, gc=False):
    content: list[_Fixture]
    last: bool = True


class _RawPage(msgspec.Struct, gc=False):
    content: list[msgspec.Raw]


class _Statistics(msgspec.Struct, gc=False, rename="camel"):
    seq_num: int | None = None
    timestamp: dt.datetime | None = None


ACTIONS = msgspec.json.Decoder(list[_Action])
RAW = msgspec.json.Decoder(list[msgspec.Raw])
PAGE = msgspec.json.Decoder(_Page)
RAW_PAGE = msgspec.json.Decoder(_RawPage)
STATISTICS = msgspec.json.Decoder(_Statistics)
to_text = msgspec.to_builtins


def _ts(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    text: str = to_text(value.astimezone(dt.UTC))
    return text


class _SQLite:
    """The floor's SQLite: the sink's schema and settings, plain executemany."""

    def __init__(self, path: Path) -> None:
        db = self.db = sqlite3.connect(path, isolation_level=None)
        db.execute("PRAGMA page_size = 16384")
        db.execute("PRAGMA cache_size = -65536")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.executescript(_SCHEMA)

    async def write(self, batch: list[tuple[str, str | None, list[tuple[Any, ...]]]]) -> None:
        db = self.db
        db.execute("BEGIN")
        for table, fid, rows in batch:
            if fid is not None:
                db.execute(f"DELETE FROM {table} WHERE fixture_id = ?", (fid,))
            db.executemany(_UPSERT[table], rows)
        db.execute("COMMIT")

    async def close(self) -> None:
        self.db.close()


class _Postgres:
    """The floor's PostgreSQL: the sink's tables; per batch, COPY into a staging table and
    one INSERT ... ON CONFLICT per table."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    @classmethod
    async def open(cls, url: str) -> _Postgres:
        import asyncpg

        from asyncsports.store._schema import RESOURCE_TABLES, pg_ddl, pg_staging

        conn = await asyncpg.connect(url)
        for statement in pg_ddl():
            await conn.execute(statement)
        for table in RESOURCE_TABLES:
            await conn.execute(pg_staging(table))
        return cls(conn)

    async def write(self, batch: list[tuple[str, str | None, list[tuple[Any, ...]]]]) -> None:
        from asyncsports.store._schema import RESOURCE_TABLES
        from asyncsports.store._sql import staged as pg_upsert

        conn = self.conn
        async with conn.transaction():
            for table in RESOURCE_TABLES:
                mine = [b for b in batch if b[0] == table.name]
                fids = [fid for _, fid, _ in mine if fid is not None]
                rows = [row for _, _, rs in mine for row in rs]
                if fids:
                    await conn.execute(
                        f"DELETE FROM {table.name} WHERE {table.key[0]} = ANY($1)", fids
                    )
                if rows:
                    await conn.copy_records_to_table(
                        f"stage_{table.name}", records=rows, columns=table.names
                    )
                    await conn.execute(pg_upsert(table))

    async def close(self) -> None:
        await self.conn.close()


def _fixture_rows(sport: str, body: bytes) -> tuple[list[tuple[Any, ...]], list[str], bool]:
    """A fixtures page's rows, the ids of its started fixtures, and whether it is the last."""
    page = PAGE.decode(body)
    texts = RAW_PAGE.decode(body).content
    rows = [
        (
            str(f.id),
            sport.removeprefix("v2/"),
            str(f.stage.season.id) if f.stage and f.stage.season else None,
            _ts(f.start_date_utc),
            f.status,
            f.name,
            int(f.fixture_deleted),
            str(text, "utf-8"),
        )
        for f, text in zip(page.content, texts, strict=True)
    ]
    started = [
        row[0]
        for f, row in zip(page.content, rows, strict=True)
        if not f.fixture_deleted and (f.status or "").lower() not in NOT_STARTED
    ]
    return rows, started, page.last


def _action_rows(fid: str, name: str, body: bytes) -> list[tuple[Any, ...]]:
    """A timeline's rows, the last of each action id kept."""
    keys = [a.fixture_action for a in ACTIONS.decode(body)]
    ids = to_text([k.action_id for k in keys])
    rows: dict[str, tuple[Any, ...]] = {}
    for aid, k, text in zip(ids, keys, RAW.decode(body), strict=True):
        rows[aid] = (
            fid,
            aid,
            name,
            k.fixture_seq_num,
            k.fixture_action_type,
            k.send_type,
            _ts(k.timestamp),
            str(text, "utf-8"),
        )
    return list(rows.values())


async def floor(base: str, headers: dict[str, str], db: Path | str) -> dict[str, int]:
    """Copy every sport's fixtures, actions and statistics into ``db`` (an SQLite file or
    a PostgreSQL URL); the rows written."""
    store = await _Postgres.open(db) if isinstance(db, str) else _SQLite(db)
    written = {"fixtures": 0, "actions": 0, "statistics": 0}
    pending: list[tuple[str, str | None, list[tuple[Any, ...]]]] = []

    one = asyncio.Lock()  # one transaction at a time on the connection

    async def flush() -> None:
        for table, _, rows in pending:
            written[table] += len(rows)
        batch = pending[:]
        pending.clear()
        async with one:
            await store.write(batch)

    async with aiohttp.ClientSession(headers=headers) as http:

        async def get(target: str) -> tuple[int, bytes]:
            async with http.get(base + target) as resp:
                return resp.status, await resp.read()

        started: list[tuple[str, str]] = []
        for sport in SPORTS:
            for number in range(10_000):
                _, body = await get(f"/{sport}/fixtures?paged=true&size=100&page={number}")
                rows, ids, last = _fixture_rows(sport, body)
                pending.append(("fixtures", None, rows))
                await flush()
                started += [(sport, fid) for fid in ids]
                if last:
                    break
        queue = iter(started)

        async def worker() -> None:
            for sport, fid in queue:
                name = sport.removeprefix("v2/")
                status, body = await get(f"/{sport}/fixtures/{fid}/actions")
                actions = _action_rows(fid, name, body) if status == 200 else []
                pending.append(("actions", fid, actions))
                status, body = await get(f"/{sport}/fixtures/{fid}/statistics")
                if status == 200:
                    s = STATISTICS.decode(body)
                    row = (fid, name, s.seq_num, _ts(s.timestamp), body.decode())
                    pending.append(("statistics", fid, [row]))
                if len(pending) >= 64:
                    await flush()

        await asyncio.gather(*(worker() for _ in range(8)))
        await flush()
    await store.close()
    return written
