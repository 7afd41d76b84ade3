"""A mirror's live feeds' health (issue 44, item 2) against the emulator's faults, over real
HTTP: its ``/metrics`` gauges, ``/healthz``'s ``stale`` entry, and the ``feed_health`` rows
of its change feed, on both engines; and a database made before that table gets it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest
from prometheus_client.parser import text_string_to_metric_families
from support import until
from support.mirror import FAST, caught_up
from support.sqlite import sqlite

from asyncsports import Client, RetryPolicy
from asyncsports.emulator import Emulator
from asyncsports.errors import TransportError
from asyncsports.store import Write, feed_health_row, is_postgres
from asyncsports.store._schema import HEALTH_TABLES, pg_ddl, sqlite_ddl
from asyncsports.sync import Mirror, RowChange, open_mirror
from asyncsports.sync._metrics import serve_metrics

# The emulator of the ``sports_emulator`` fixture (asyncsports.testing.plugin): heartbeats
# every 0.2 s, so a feed past its records stays live (delayed_after is 0.5 s here).
EMULATOR = pytest.mark.emulator(
    seed=3, fixtures_per_season=16, actions_per_fixture=40, live_heartbeat=0.2
)

RETRY = RetryPolicy(max_retries=5, base=0.01, cap=0.05)
WITHIN = 30.0  # a condition not met by then has failed


class Served:
    """A running mirror and its /metrics and /healthz, read over HTTP."""

    def __init__(self, mirror: Mirror, http: aiohttp.ClientSession, port: int) -> None:
        self.mirror = mirror
        self.http = http
        self.base = f"http://127.0.0.1:{port}"

    async def states(self) -> dict[tuple[str, str], str]:
        """Each feed's state, by (fixture, feed), as /metrics says it (the series at 1)."""
        async with self.http.get(f"{self.base}/metrics") as r:
            assert r.status == 200
            text = await r.text()
        out: dict[tuple[str, str], str] = {}
        seen: dict[tuple[str, str], list[str]] = {}
        for family in text_string_to_metric_families(text):
            if family.name != "asyncsports_sync_feed_state":
                continue
            for s in family.samples:
                key = (s.labels["fixture"], s.labels["feed"])
                seen.setdefault(key, []).append(s.labels["state"])
                if s.value == 1:
                    assert key not in out, f"two states at once: {key}"
                    out[key] = s.labels["state"]
        assert all(len(v) == 5 for v in seen.values())  # a state set: every state a series
        return out

    async def ages(self) -> dict[tuple[str, str], float]:
        """Each feed's record age, as /metrics says it."""
        async with self.http.get(f"{self.base}/metrics") as r:
            text = await r.text()
        return {
            (s.labels["fixture"], s.labels["feed"]): s.value
            for family in text_string_to_metric_families(text)
            if family.name == "asyncsports_sync_feed_record_age_seconds"
            for s in family.samples
        }

    async def healthz(self) -> tuple[int, dict[str, Any]]:
        async with self.http.get(f"{self.base}/healthz") as r:
            body: dict[str, Any] = await r.json()
            return r.status, body


async def health_rows(mirror: Mirror, fid: str, feed: str = "actions") -> list[RowChange]:
    """The ``feed_health`` changes of one feed, in commit order."""
    return [
        c
        async for c in mirror.changes(follow=False)
        if c.table == "feed_health" and c.key == (fid, feed)
    ]


def states_of(changes: list[RowChange]) -> list[str]:
    return [c.row["state"] for c in changes]


def contains(states: list[str], wanted: list[str]) -> bool:
    """Whether ``wanted`` is a run of ``states``."""
    n = len(wanted)
    return any(states[i : i + n] == wanted for i in range(len(states) - n + 1))


async def said(mirror: Mirror, fid: str, wanted: list[str]) -> bool:
    """Whether the feed's rows said the states ``wanted``, one after the other (its
    actions feed's; committed a moment after the mirror knows it)."""
    return contains(states_of(await health_rows(mirror, fid)), wanted)


@asynccontextmanager
async def served(
    emu: Emulator, client: Client, db: Path | str, *, idle_timeout: float
) -> AsyncIterator[Served]:
    """A mirror of basketball whose actions feeds are ``client.live``'s, delayed after
    0.5 s of silence, running, with its metrics served."""
    live = client.with_json.live

    def actions(sport: str, fid: str, start: int) -> Any:
        feed = live.actions(sport, fid, start_position=start, idle_timeout=idle_timeout)
        feed.delayed_after = 0.5
        return feed

    mirror = Mirror(
        client, db, sports=["basketball"], every=FAST, clock=emu.clock.time, live_feed=actions
    )
    running = asyncio.create_task(mirror.run())
    server = await serve_metrics(mirror, 0)
    try:
        async with aiohttp.ClientSession() as http:
            yield Served(mirror, http, server.addresses[0][1])
    finally:
        mirror.stop()
        await asyncio.wait_for(running, 30)
        await server.cleanup()


@pytest.mark.slow
@EMULATOR
async def test_a_delayed_feed_shows_in_metrics_healthz_and_the_change_feed_then_live_again(
    sports_emulator: Emulator, db: Path | str
) -> None:
    # One actions connection is silent for 5 s after it opens (not even heartbeats).
    sports_emulator.faults.live("delay", feed="actions", seconds=5.0)
    async with (
        sports_emulator.client(retry=RETRY) as client,
        served(sports_emulator, client, db, idle_timeout=30) as s,
    ):
        await caught_up(s.mirror)
        live = sorted(t.args[1] for t in s.mirror.plan.tasks.values() if t.kind == "live")
        assert live
        delayed: list[tuple[str, str]] = []

        async def one_delayed() -> bool:
            delayed[:] = [k for k, v in (await s.states()).items() if v == "delayed"]
            return bool(delayed)

        await until(one_delayed, WITHIN, every=0.05)
        ((fid, kind),) = delayed
        assert kind == "actions" and fid in live
        status, body = await s.healthz()
        # The vendor's feed is late, the mirror's work is not: 200, the feed named.
        assert status == 200 and body["ok"] is True
        assert body["stale"][f"live:{fid}"]["state"] == "delayed"
        assert body["stale"][f"live:{fid}"]["cause"] == "silent"
        assert body["stale"][f"live:{fid}"]["feed"] == "actions"
        assert sports_emulator.faults.injected["live.delay"] == 1
        # Each feed of each live fixture has its series; the others are live.
        states = await s.states()
        assert set(states) == {(f, k) for f in live for k in ("actions", "statistics")}

        async def live_again() -> bool:
            return (await s.states())[(fid, "actions")] == "live"

        await until(live_again, WITHIN, every=0.05)
        status, body = await s.healthz()
        assert status == 200 and f"live:{fid}" not in body["stale"]
        ages = await s.ages()
        assert set(ages) == set(states) and all(a >= 0 for a in ages.values())
        # The change feed has said each state as it came: a row per change, not per record.
        await until(lambda: said(s.mirror, fid, ["connecting", "live", "delayed", "live"]))
        said_rows = await health_rows(s.mirror, fid)
        delayed_row = said_rows[states_of(said_rows).index("delayed")]
        assert delayed_row.row["cause"] == "silent" and delayed_row.row["sport"] == "basketball"
        assert delayed_row.record == {k: v for k, v in delayed_row.row.items() if k != "json"}
        others = [c async for c in s.mirror.changes(follow=False) if c.table == "feed_health"]
        assert len(others) < 10 * len(live)  # a few a feed, however many records came


@pytest.mark.slow
@EMULATOR
async def test_a_stalled_feed_is_delayed_then_reconnecting_in_the_change_feed_then_live(
    sports_emulator: Emulator, db: Path | str
) -> None:
    # One actions connection sends nothing at all: delayed after 0.5 s, lost after 2 s
    # (idle_timeout), then a new connection resumes it.
    sports_emulator.faults.live("stall", feed="actions")
    async with (
        sports_emulator.client(retry=RETRY) as client,
        served(sports_emulator, client, db, idle_timeout=2) as s,
    ):
        await caught_up(s.mirror)
        live = sorted(t.args[1] for t in s.mirror.plan.tasks.values() if t.kind == "live")
        stalled: list[str] = []

        async def recovered() -> bool:
            for fid in live:
                if contains(
                    states_of(await health_rows(s.mirror, fid)),
                    ["live", "delayed", "reconnecting", "live"],
                ):
                    stalled[:] = [fid]
                    return True
            return False

        await until(recovered, WITHIN, every=0.1)
        (fid,) = stalled
        changes = await health_rows(s.mirror, fid)
        lost = changes[states_of(changes).index("reconnecting")]
        assert "stalled" in lost.row["cause"] and sports_emulator.faults.injected["live.stall"]
        assert (await s.states())[(fid, "actions")] == "live"
        status, body = await s.healthz()
        assert status == 200 and f"live:{fid}" not in body["stale"]
        # The fixtures end: each feed's last row says over, and their series go away.
        sports_emulator.clock.advance(6 * 3600)

        async def over() -> bool:
            last = [
                states_of(await health_rows(s.mirror, f, kind))[-1:]
                for f in live
                for kind in ("actions", "statistics")
            ]
            return all(states == ["over"] for states in last)

        await until(over, WITHIN, every=0.1)
        # (Fixtures that started meanwhile have feeds of their own.)
        await until(lambda: not any(f in live for f, _ in s.mirror.feed_health), WITHIN)
        assert not any(f in live for f, _ in await s.states())


@pytest.mark.slow
@EMULATOR
async def test_a_plugged_in_source_is_live_while_records_come_and_reconnecting_once_broken(
    sports_emulator: Emulator, tmp_path: Path
) -> None:
    # A source without health(): the mirror says its state from what it sees.
    calls: list[str] = []
    hold = asyncio.Event()

    async def feed(sport: str, fid: str, start: int) -> AsyncIterator[Any]:
        calls.append(fid)
        records = (await client.with_json.actions.list(sport, fid).collect())[start:]
        if calls.count(fid) == 1:  # all but the last, then it breaks off
            for record in records[:-1]:
                yield record
            raise TransportError("the source broke off")
        for record in records:  # reopened at the last: live again once it comes
            yield record
        await hold.wait()

    async with sports_emulator.client() as client:
        mirror = Mirror(
            client,
            tmp_path / "m.sqlite",
            sports=["basketball"],
            every=FAST,
            clock=sports_emulator.clock.time,
            live_feed=feed,
            live=False,
        )
        running = asyncio.create_task(mirror.run())
        try:
            await caught_up(mirror)
            live = sorted(t.args[1] for t in mirror.plan.tasks.values() if t.kind == "live")
            assert live

            async def reopened() -> bool:
                return all([await said(mirror, fid, ["reconnecting", "live"]) for fid in live])

            await until(reopened, WITHIN, every=0.1)
            changes = await health_rows(mirror, live[0])
            assert states_of(changes)[0] == "connecting"
            broke = changes[states_of(changes).index("reconnecting")]
            assert "the source broke off" in broke.row["cause"]
            assert mirror.feed_health[(live[0], "actions")].state == "live"
            # The fixture ends while its source says nothing of it (it just holds): the
            # mirror stops following it, and its last row says so.
            sports_emulator.clock.advance(6 * 3600)

            async def left() -> bool:
                last = (await health_rows(mirror, live[0]))[-1].row
                return last["state"] == "over" and last["cause"] == "no longer followed"

            await until(left, WITHIN, every=0.1)
        finally:
            hold.set()
            mirror.stop()
            await running
        # Stopped: no feed is followed, so none has figures.
        assert mirror.feed_health == {}


async def test_a_database_made_before_the_feed_health_table_gets_it(db: Path | str) -> None:
    # Version 2: every table of today but feed_health.
    health = {t.name for t in HEALTH_TABLES}
    if is_postgres(db):
        conn = await asyncpg.connect(str(db))
        try:
            for statement in pg_ddl():
                if not any(f" {name} (" in statement for name in health):
                    await conn.execute(statement)
            await conn.execute("CREATE TABLE asyncsports_schema (version integer NOT NULL)")
            await conn.execute("INSERT INTO asyncsports_schema VALUES (2)")
        finally:
            await conn.close()
    else:
        script = [
            s
            for s in sqlite_ddl().split(";\n")
            if s.strip() and not any(f" {name} (" in s for name in health)
        ]
        with sqlite(db) as conn:
            for statement in script:
                conn.execute(statement.replace("user_version = 3", "user_version = 2"))
            conn.execute(f"PRAGMA application_id = {0x41535350}")
            assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            assert "feed_health" not in tables and "fixtures" in tables
    store = await open_mirror(db)
    try:
        row = feed_health_row("f1", "actions", "soccer", "delayed", "silent", 1.8e9, 12)
        assert await store.write([Write("feed_health", [row])]) == {"feed_health": 1}
        assert await store.rows("feed_health") == [row]
        (change,) = await store.changes(0)
        assert change.table == "feed_health" and change.key == ("f1", "actions")
        assert json.loads(row[-1]) == change.record
        assert change.record["state"] == "delayed" and change.record["position"] == 12
    finally:
        await store.close()
