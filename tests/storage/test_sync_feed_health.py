"""A mirror's live feeds' health (issue 44, item 2) against the emulator's faults, over real
HTTP: its ``/metrics`` gauges, ``/healthz``'s ``stale`` entry."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families
from support import until
from support.mirror import FAST, caught_up

from asyncsports import Client, RetryPolicy
from asyncsports.emulator import Emulator
from asyncsports.sync import Mirror
from asyncsports.sync._metrics import serve_metrics

# The emulator of the ``sports_emulator`` fixture (asyncsports.testing.plugin): heartbeats
# every 0.2 s, so a feed past its records stays live (delayed_after is 0.5 s here).
pytestmark = [
    pytest.mark.slow,
    pytest.mark.emulator(
        seed=3, fixtures_per_season=16, actions_per_fixture=40, live_heartbeat=0.2
    ),
]

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


async def test_a_delayed_feed_shows_in_metrics_and_healthz_then_live_again(
    sports_emulator: Emulator, tmp_path: Path
) -> None:
    # One actions connection is silent for 5 s after it opens (not even heartbeats).
    sports_emulator.faults.live("delay", feed="actions", seconds=5.0)
    async with (
        sports_emulator.client(retry=RETRY) as client,
        served(sports_emulator, client, tmp_path / "m.sqlite", idle_timeout=30) as s,
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
