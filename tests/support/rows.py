"""Stored rows compared across engines and runs: the resource tables in engine-neutral
values (``plain``), read whole from SQLite or PostgreSQL, the rows of a clean backfill to
compare a run against, and a progress that acts at a step of a backfill."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import msgspec

from asyncsports.backfill import Backfill, Scope
from asyncsports.emulator import Emulator
from asyncsports.store._rows import utc_text
from asyncsports.store._schema import RESOURCE_TABLES

from .sqlite import sqlite

KINDS = {t.name: {c.name: c.kind for c in t.columns} for t in RESOURCE_TABLES}

# Several pages per sport, a few hundred units: what the whole-run comparisons walk.
SCALE = {
    "competitions": 1,
    "seasons": 2,
    "teams": 4,
    "fixtures_per_season": 8,
    "actions_per_fixture": 30,
}
SCOPE = Scope(page_size=5)

Rows = dict[str, list[tuple[Any, ...]]]


def plain(table: str, row: Any) -> tuple[Any, ...]:
    """A stored row in engine-neutral values: JSON decoded, times as ISO text, flags int."""
    out = []
    for (_name, kind), value in zip(KINDS[table].items(), row, strict=True):
        if value is None:
            out.append(None)
        elif kind == "json":
            out.append(msgspec.json.decode(value))
        elif kind == "time" and isinstance(value, dt.datetime):
            out.append(utc_text(value))
        elif kind == "flag":
            out.append(int(value))
        else:
            out.append(value)
    return tuple(out)


def sqlite_tables(db: Path) -> Rows:
    """Every resource table of a SQLite store, its rows plain and sorted."""
    with sqlite(db) as conn:
        return {t: sorted(plain(t, r) for r in conn.execute(f"SELECT * FROM {t}")) for t in KINDS}


async def pg_tables(url: str) -> Rows:
    """Every resource table of a PostgreSQL store, its rows plain and sorted."""
    conn = await asyncpg.connect(url)
    try:
        return {
            t: sorted(
                plain(t, tuple(r)) for r in await conn.fetch(f"SELECT {', '.join(c)} FROM {t}")
            )
            for t, c in KINDS.items()
        }
    finally:
        await conn.close()


async def pg_count(url: str, query: str) -> int:
    """The one number ``query`` returns."""
    conn = await asyncpg.connect(url)
    try:
        return int(await conn.fetchval(query))
    finally:
        await conn.close()


async def clean_run(emulator: Emulator, db: Path, scope: Scope = SCOPE) -> Rows:
    """The rows of a whole backfill of ``scope`` into the SQLite file ``db``."""
    async with emulator.client() as client:
        report = await Backfill(client, db, scope).run()
    assert report.finished
    return sqlite_tables(db)


class When:
    """A backfill's progress that calls ``then()`` once ``phase`` has advanced more than
    ``after`` steps (each step after that too): stop the run, cancel it, set an event."""

    def __init__(self, phase: str, then: Callable[[], object], after: int = 0) -> None:
        self.phase, self.then, self.after = phase, then, after
        self.done = 0

    def add(self, phase: str, total: int) -> None:
        pass

    def advance(self, phase: str, n: int = 1) -> None:
        self.done += n
        if phase == self.phase and self.done > self.after:
            self.then()

    def settle(self, phase: str) -> None:
        pass
