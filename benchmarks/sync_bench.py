"""The mirror's live path (issue 13 point 8): freshness lag, requests against the budget,
CPU per committed action.

The emulator runs in a process of its own (``python -m benchmarks.sync_bench serve``, on
the CPUs the case does not use), its clock at real time (speed 1) and at the real now,
scaled so that about ``live`` fixtures are live. The case (a child of the harness) runs
:class:`asyncsports.sync.Mirror` with the service's advised budget (5 requests a second)
for ``warm`` seconds (the feeds open, the past of each match comes in), then measures for
``measure`` seconds:

- freshness lag of each action: from when the emulator sends it (its ``timestamp`` on the
  emulator's clock, which sends a record when its clock reaches that time, read in real
  time through ``/_emulator/clock``) to the mirror's commit (the change log's
  ``committed_at``); the first commit of each record version sent in the window counts;
- requests per hour (REST and websocket connections, ``client.requests_sent``) against
  the budget (``rate_limit`` x 3,600);
- the process's CPU (the database thread included) per action change committed.

``mode``: ``ws`` (live_url set: actions over the live websocket) or ``poll`` (REST every
``every`` seconds).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.report import Row, _missing

__all__ = ["params", "rows", "sync"]

SPORTS = ("basketball", "soccer")
_BACKLOG = ("backlog", "final")
RATE = 5.0  # the service's advice
WS_TARGET = 1.0  # p99 seconds over the websocket (issue 13)


def params(quick: bool) -> dict[str, dict[str, Any]]:
    """Each mode's parameters: about 50 live fixtures (full) or 8 (quick).

    Polling every 15 s: 50 fixtures every 5 s would need 10 requests a second, twice the
    budget; every 15 s they need 3.3, and the listings the rest.
    """
    scale = {"competitions": 2 if quick else 14, "fixtures_per_season": 6,
             "actions_per_fixture": 600, "speed": 20.0 if quick else 1.0}  # fmt: skip
    common = {"scale": scale, "speed": scale["speed"], "warm": 2.0 if quick else 5.0, "warm_limit": 20 if quick else 400,
              "measure": 10.0 if quick else 120.0}  # fmt: skip
    return {
        "ws": {**common, "mode": "ws", "every": 5.0},
        "poll": {**common, "mode": "poll", "every": 4.0 if quick else 15.0},
    }


def _emulator(scale: dict[str, int]) -> tuple[subprocess.Popen[str], dict[str, str]]:
    """The emulator's process (on the CPUs this one does not use) and its addresses."""
    args = [sys.executable, "-m", "benchmarks.sync_bench", "serve", json.dumps(scale)]
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    if hasattr(os, "sched_getaffinity"):
        rest = set(range(os.cpu_count() or 1)) - os.sched_getaffinity(0)
        if rest:
            os.sched_setaffinity(proc.pid, rest)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError(f"the emulator did not start (exit {proc.wait()})")
    return proc, json.loads(line)


def _clock(base_url: str) -> tuple[Callable[[float], float], Callable[[], float]]:
    """This machine's time when the emulator's clock reads ``t``; the emulator's time now."""
    t0 = time.time()
    with urllib.request.urlopen(f"{base_url}/_emulator/clock", timeout=10) as r:
        state = json.loads(r.read())
    here, emu, speed = (t0 + time.time()) / 2, float(state["time"]), float(state["speed"])
    return (lambda t: here + (t - emu) / speed), (lambda: emu + (time.time() - here) * speed)


def _epoch(iso: str) -> float:
    return dt.datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def _lags(
    db: Path, wall: Callable[[float], float], start: float, end: float, margin: float
) -> tuple[list[float], int]:
    """Lags of the record versions sent in ``[start, end - margin]`` (later ones may not
    have landed), and the action changes committed in ``[start, end]``."""
    first: dict[tuple[str, str], float] = {}
    committed = 0
    with sqlite3.connect(db) as c:
        for at, key, row in c.execute("SELECT committed_at, key, row FROM changes "
                                      "WHERE tbl = 'actions'"):  # fmt: skip
            when = _epoch(at)
            committed += start <= when <= end
            ts = json.loads(row).get("timestamp")
            if ts is None:
                continue
            sent = wall(_epoch(ts))
            if start <= sent <= end - margin:
                k = (key, ts)
                first[k] = min(first.get(k, when), when)
    return sorted(first[k] - wall(_epoch(k[1])) for k in first), committed


def _pct(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    return xs[min(len(xs) - 1, int(q * len(xs)))]


async def _settle(mirror: Any, limit: float) -> None:
    """Until the fixtures found ended are read (at most ``limit`` seconds)."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(limit):
            await asyncio.sleep(1.0)
            while any(t.kind in _BACKLOG for t in mirror.plan.tasks.values()):
                mirror._finished.clear()  # set each time a task of the plan ends
                await mirror._finished.wait()


async def _run(urls: dict[str, str], p: dict[str, Any], db: Path) -> dict[str, Any]:
    from asyncsports import Client
    from asyncsports.sync import Mirror

    wall, service_time = _clock(urls["base_url"])
    live_url = urls["live_url"] if p["mode"] == "ws" else None
    async with Client(urls["base_url"], token=urls["token"], live_url=live_url,
                      rate_limit=RATE) as client:  # fmt: skip
        mirror = Mirror(client, db, sports=SPORTS, every={"live": p["every"]},
                        clock=service_time, events=False)  # fmt: skip
        running = asyncio.create_task(mirror.run())
        # Warm: the ended fixtures read, then ``warm`` seconds for the feeds' past.
        t0 = time.time()
        await _settle(mirror, p["warm_limit"])
        caught = time.time() - t0
        await asyncio.sleep(p["warm"])
        start, cpu0, sent0 = time.time(), time.process_time(), client.requests_sent
        await asyncio.sleep(p["measure"])
        end, cpu1, sent1 = time.time(), time.process_time(), client.requests_sent
        live = sum(1 for t in mirror.plan.tasks.values() if t.kind == "live")
        feeds = mirror.live.open()
        mirror.stop()
        await running
    margin = 2.0 if p["mode"] == "ws" else p["every"] + 2.0
    lags, committed = _lags(db, wall, start, end, margin)
    spent = end - start
    return {
        "mode": p["mode"],
        "every": p["every"],
        "live_fixtures": live,
        "feeds_open": feeds,
        "samples": len(lags),
        "lag_p50": _pct(lags, 0.50),
        "lag_p99": _pct(lags, 0.99),
        "lag_max": lags[-1] if lags else None,
        "requests_per_hour": (sent1 - sent0) / spent * 3600,
        "budget_per_hour": RATE * 3600,
        "actions_committed": committed,
        "cpu_per_action": (cpu1 - cpu0) / committed if committed else None,
        "cpu": cpu1 - cpu0,
        "wall": spent,
        "speed": p["speed"],
        "warm": caught + p["warm"],
    }


async def sync(m: dict[str, Any], p: dict[str, Any]) -> dict[str, Any]:
    """One mode of the mirror against an emulator of its own (``m`` is not used)."""
    proc, urls = _emulator(p["scale"])
    try:
        with tempfile.TemporaryDirectory() as tmp:
            return await _run(urls, p, Path(tmp) / "mirror.sqlite")
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(10)


def rows(raw: dict[str, Any]) -> list[Row]:
    """The table's rows of the ``sync`` case (``raw["sync"]``: ``ws`` and ``poll``)."""
    s = raw.get("sync")
    if s is None:
        return []
    if "error" in s:
        return [_missing("sync", s["error"])]
    out: list[Row] = []
    for mode in ("ws", "poll"):
        r = s.get(mode)
        if r is None:
            continue
        if "error" in r:
            out.append(_missing("sync", f"{mode}: {r['error']}"))
            continue
        how = ("actions over the live websocket" if mode == "ws"
               else f"actions polled every {r['every']:g} s")  # fmt: skip
        case = f"{r['live_fixtures']} live fixtures at speed {r['speed']:g}, {how}"
        note = f"{r['samples']} records sent in {r['wall']:.0f} s, max {r['lag_max'] or 0:.2f} s"
        target = WS_TARGET if mode == "ws" else r["every"] + 1
        out.append(Row("sync", case, "freshness lag p50, send to commit", "s", r["lag_p50"]))
        out.append(Row("sync", case, "freshness lag p99, send to commit", "s", r["lag_p99"],
                       kind="below", target=target, note=note))  # fmt: skip
        out.append(Row("sync", case, "requests per hour", "/h", r["requests_per_hour"],
                       r["budget_per_hour"], "the budget, 5 a second", "below",
                       r["budget_per_hour"]))  # fmt: skip
        cpu = r["cpu_per_action"]
        out.append(Row("sync", case, "CPU per committed action", "us",
                       cpu * 1e6 if cpu is not None else None,
                       note=f"{r['actions_committed']} action changes, CPU {r['cpu']:.2f} s "
                       "(the database thread included)"))  # fmt: skip
    return out


# --------------------------------------------------------------------------- the emulator


async def _serve(scale: dict[str, int]) -> None:
    from asyncsports.emulator import Emulator

    now = dt.datetime.now(dt.UTC)
    async with Emulator(now=now, **scale) as emu:
        urls = {"base_url": emu.base_url, "live_url": emu.live_url, "token": emu.token}
        print(json.dumps(urls), flush=True)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, sys.stdin.read)  # until the parent closes stdin


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        asyncio.run(_serve(json.loads(sys.argv[2])))
