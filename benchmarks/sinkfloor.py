"""The backfill's floor: what a hand-written script would do to copy the same rows.

aiohttp GETs of the same listings and timelines (page size 100, 8 fixtures at once),
msgspec Structs with only the columns stored (``gc=False``), each record's JSON text as
sent, and ``executemany`` of the same upserts into the same SQLite tables (the schema and
settings of :mod:`asyncsports._sink`), a transaction per 32 fixtures. What it leaves out
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

from asyncsports._sink import _SCHEMA, _UPSERT

__all__ = ["floor"]

SPORTS = ("american-football", "basketball", "cricket", "ice-hockey", "snooker", "soccer",
          "v2/volleyball")  # fmt: skip
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


def _open(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA page_size = 16384")
    db.execute("PRAGMA cache_size = -65536")
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.executescript(_SCHEMA)
    return db


async def floor(base: str, headers: dict[str, str], path: Path) -> dict[str, int]:
    """Copy every sport's fixtures, actions and statistics into ``path``; rows written."""
    db = _open(path)
    written = {"fixtures": 0, "actions": 0, "statistics": 0}
    pending: list[tuple[str, str, list[tuple[Any, ...]]]] = []

    def flush() -> None:
        db.execute("BEGIN")
        for table, fid, rows in pending:
            db.execute(f"DELETE FROM {table} WHERE fixture_id = ?", (fid,))
            db.executemany(_UPSERT[table], rows)
            written[table] += len(rows)
        db.execute("COMMIT")
        pending.clear()

    async with aiohttp.ClientSession(headers=headers) as http:

        async def get(target: str) -> tuple[int, bytes]:
            async with http.get(base + target) as resp:
                return resp.status, await resp.read()

        started: list[tuple[str, str]] = []
        for sport in SPORTS:
            for number in range(10_000):
                _, body = await get(f"/{sport}/fixtures?paged=true&size=100&page={number}")
                page = PAGE.decode(body)
                texts = RAW_PAGE.decode(body).content
                rows = [
                    (str(f.id), sport.removeprefix("v2/"),
                     str(f.stage.season.id) if f.stage and f.stage.season else None,
                     _ts(f.start_date_utc), f.status, f.name, int(f.fixture_deleted),
                     str(text, "utf-8"))
                    for f, text in zip(page.content, texts, strict=True)
                ]  # fmt: skip
                db.execute("BEGIN")
                db.executemany(_UPSERT["fixtures"], rows)
                db.execute("COMMIT")
                written["fixtures"] += len(rows)
                started += [
                    (sport, row[0])
                    for f, row in zip(page.content, rows, strict=True)
                    if not f.fixture_deleted and (f.status or "").lower() not in NOT_STARTED
                ]
                if page.last:
                    break
        queue = iter(started)

        async def worker() -> None:
            for sport, fid in queue:
                name = sport.removeprefix("v2/")
                status, body = await get(f"/{sport}/fixtures/{fid}/actions")
                rows: dict[str, tuple[Any, ...]] = {}
                if status == 200:
                    keys = [a.fixture_action for a in ACTIONS.decode(body)]
                    ids = to_text([k.action_id for k in keys])
                    for aid, k, text in zip(ids, keys, RAW.decode(body), strict=True):
                        rows[aid] = (fid, aid, name, k.fixture_seq_num, k.fixture_action_type,
                                     k.send_type, _ts(k.timestamp), str(text, "utf-8"))  # fmt: skip
                pending.append(("actions", fid, list(rows.values())))
                status, body = await get(f"/{sport}/fixtures/{fid}/statistics")
                if status == 200:
                    s = STATISTICS.decode(body)
                    row = (fid, name, s.seq_num, _ts(s.timestamp), body.decode())
                    pending.append(("statistics", fid, [row]))
                if len(pending) >= 64:
                    flush()

        await asyncio.gather(*(worker() for _ in range(8)))
        flush()
    db.close()
    return written
