"""The mirror's tests share: its rows read back on either engine, what the service answers
compared with what it holds, the command's arguments, the change feed read whole."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import asyncpg
import msgspec

from asyncsports import Client
from asyncsports.emulator import Emulator
from asyncsports.errors import NotFoundError
from asyncsports.store import is_postgres
from asyncsports.sync import TABLES, Mirror, RowChange, open_mirror
from asyncsports.sync._plan import near_window, window
from support.cli import CLI

SPORTS = ["basketball", "soccer"]
QUOTED = msgspec.json.Decoder(float_hook=str)  # decimals as their text, quoted or not
FAST = {k: 0.2 for k in ("live", "fixtures", "window", "events", "retry")}


async def caught_up(mirror: Mirror, limit: float = 30) -> None:
    """``mirror.caught_up()``, saying which tasks are behind if it takes too long."""
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    try:
        await asyncio.wait_for(mirror.caught_up(), limit)
    except TimeoutError:
        behind = [
            (t.key, t.running, t.started - t0, t.due - loop.time())
            for t in mirror.plan.tasks.values()
            if t.started < t0 or t.running
        ]
        raise AssertionError(f"not caught up: {behind}") from None


async def _rows(db: Path | str, table: str) -> list[tuple[Any, ...]]:
    store = await open_mirror(db)
    try:
        return await store.rows(table)
    finally:
        await store.close()


def rows(db: Path | str, table: str) -> list[tuple[Any, ...]]:
    """``table``'s rows in ``db`` (either engine), read on a connection of its own."""
    with concurrent.futures.ThreadPoolExecutor(1) as io:  # callable from a running loop
        return io.submit(asyncio.run, _rows(db, table)).result()


async def rest_fixtures(client: Client, emu: Emulator, sport: str) -> dict[str, dict[str, Any]]:
    """The fixtures the mirror follows for ``sport``, as the service answers now."""
    out: dict[str, dict[str, Any]] = {}
    now = emu.clock.time()
    for start, end in (window(now, 1, 1), near_window(now)):
        listing = client.with_json.fixtures.list(sport, date_from=start, date_to=end)
        for f, raw in await listing.collect():
            out[str(f.id)] = json.loads(raw)
    return out


def as_sent(json: str | bytes) -> Any:
    """An action as both REST and the websocket send it: the socket quotes decimals and
    numbers ``fixtureSeqNum`` per connection."""
    record = QUOTED.decode(json)
    record["fixtureAction"].pop("fixtureSeqNum", None)
    return record


async def assert_mirrors(
    client: Client, emu: Emulator, db: Path | str, sports: list[str] = SPORTS, sockets: bool = False
) -> int:
    """The database holds what the REST endpoints answer now (with ``sockets``, a live
    fixture's actions as the websocket sends them); returns the fixtures checked."""
    fixtures = {r[0]: r for r in rows(db, "fixtures")}
    actions: dict[str, dict[str, str]] = {}
    for r in rows(db, "actions"):
        actions.setdefault(r[0], {})[r[1]] = r[-1]
    stats = {r[0]: r[-1] for r in rows(db, "statistics")}
    standings: dict[str, list[str]] = {}
    for r in rows(db, "standings"):
        standings.setdefault(r[0], []).append(json.loads(r[-1]))
    seasons: set[tuple[str, str]] = set()
    checked = 0
    for sport in sports:
        for fid, record in (await rest_fixtures(client, emu, sport)).items():
            checked += 1
            assert json.loads(fixtures[fid][-1]) == record, fid
            status = record["status"].lower()
            if record.get("fixtureDeleted") or status in ("scheduled", "postponed"):
                continue
            load = as_sent if sockets and status == "live" else json.loads
            timeline = {
                a.fixture_action.action_id: load(raw)
                for a, raw in await client.with_json.actions.list(sport, fid).collect()
            }
            stored = {k: load(v) for k, v in actions.get(fid, {}).items()}
            assert stored == {str(k): v for k, v in timeline.items()}, fid  # every action once
            if status == "completed":
                _, raw = await client.with_json.statistics.get(sport, fid)
                assert json.loads(stats[fid]) == json.loads(raw)
                seasons.add((sport, record["stage"]["season"]["id"]))
    for sport, season in seasons:
        try:
            packets = await client.with_json.standings.get(sport, season_id=season)
        except NotFoundError:
            assert season not in standings
            continue
        assert sorted(map(json.dumps, standings[season])) == sorted(
            json.dumps(json.loads(raw)) for _, raw in packets
        )
    events = {r[0]: json.loads(r[-1]) for r in rows(db, "events") if r[4]}
    live = {
        e.id: json.loads(raw) for e, raw in await client.with_json.events.list(live=True).collect()
    }
    assert events == live
    return checked


async def settled(
    client: Client,
    emu: Emulator,
    db: Path | str,
    sports: list[str] = SPORTS,
    limit: float = 20,
    sockets: bool = False,
) -> int:
    """:func:`assert_mirrors` once live feeds have committed what they were sent (they
    run beside the plan, so ``caught_up`` does not wait for them)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while True:
        try:
            return await assert_mirrors(client, emu, db, sports, sockets)
        except AssertionError:
            if loop.time() > deadline:
                raise
            await asyncio.sleep(0.05)


def sync_args(base_url: str, db: Path | str, *more: str) -> list[str]:
    return [
        *CLI,
        "sync",
        "--base-url",
        base_url,
        "--token",
        "emulator-token",
        "--rate-limit",
        "0",
        "-s",
        "basketball",
        "-s",
        "soccer",
        "--db",
        str(db),
        *more,
    ]


async def _pg_committed(url: str) -> int:
    conn = await asyncpg.connect(url)
    try:
        return int(await conn.fetchval("SELECT coalesce(max(seq), 0) FROM changes"))
    except asyncpg.UndefinedTableError:
        return 0  # the schema is not there yet
    finally:
        await conn.close()


def committed(db: Path | str) -> int:
    """The last change committed to ``db`` (0: none, or no database yet)."""
    if is_postgres(db):
        return asyncio.run(_pg_committed(str(db)))
    if not Path(db).exists():
        return 0
    with contextlib.closing(sqlite3.connect(db, timeout=5)) as c:
        try:
            return int(c.execute("SELECT coalesce(max(seq), 0) FROM changes").fetchone()[0])
        except sqlite3.OperationalError:
            return 0  # the schema is not there yet


def wait_committed(db: Path | str, least: int, timeout: float = 60) -> int:
    """The last change committed to ``db``, once it is at least ``least``."""
    deadline = time.monotonic() + timeout
    while (n := committed(db)) < least:
        assert time.monotonic() < deadline, f"{n} changes committed, not {least}"
        time.sleep(0.005)
    return n


async def _tables(db: Path | str) -> dict[str, list[tuple[object, ...]]]:
    store = await open_mirror(db)
    try:
        return {t: await store.rows(t) for t in TABLES}
    finally:
        await store.close()


def tables(db: Path | str) -> dict[str, list[tuple[object, ...]]]:
    """Every table's rows, by key (the same values on both engines)."""
    return asyncio.run(_tables(db))


async def _changes(db: Path | str) -> list[RowChange]:
    store = await open_mirror(db)
    try:
        return await store.changes(0, limit=1_000_000)
    finally:
        await store.close()
