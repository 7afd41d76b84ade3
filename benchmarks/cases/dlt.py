"""dlt: asyncsports.dlt into DuckDB vs the backfill into SQLite, the same data.

Both read the (pre-rendered) plain emulator: every sport's fixtures, the started ones'
timelines and statistics (the source's other resources left out), a first load into a
fresh DuckDB file through dlt (extract, normalize, load) against a backfill into a fresh
SQLite file, interleaved round by round."""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.harness.children import Context
from benchmarks.harness.manifest import Manifest, Params
from benchmarks.harness.manifest import client as _client
from benchmarks.harness.manifest import control as _server
from benchmarks.harness.measure import measure
from benchmarks.harness.registry import Case, Result
from benchmarks.harness.report import Row, median, missing

__all__ = ["CASE", "dltload"]

TABLES = ("fixtures", "actions", "statistics")


async def dltload(m: Manifest, p: Params) -> dict[str, Any]:
    """Rounds of a dlt load into DuckDB and a backfill into SQLite, one each per round;
    round 0 renders the server's bodies and is not counted."""
    from asyncsports._optional import need
    from asyncsports.backfill import Backfill, Scope
    from asyncsports.dlt import sports_source

    # dlt's usage telemetry, sent as the process ends, waits a minute offline: off.
    os.environ.setdefault("RUNTIME__DLTHUB_TELEMETRY", "false")
    dlt = need("dlt", "the dlt benchmark")
    dlts: list[dict[str, Any]] = []
    backfills: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="asyncsports-bench-") as tmp:
        async with _client(m, "plain") as client:
            for i in range(1 + p["repeat"]):
                if i == 1:
                    await _server(m, "plain", "reset")
                where = Path(tmp) / f"run{i}"
                pipe = dlt.pipeline(
                    f"bench{i}",
                    destination=dlt.destinations.duckdb(str(where) + ".duckdb"),
                    dataset_name="sports",
                    pipelines_dir=str(where),
                )
                source = sports_source(
                    client, concurrency=p["concurrency"], events=False, snooker=False
                ).with_resources(*TABLES)

                async def load(pipe: Any = pipe, source: Any = source) -> dict[str, int]:
                    await asyncio.to_thread(pipe.run, source)
                    counts: dict[str, int] = pipe.last_trace.last_normalize_info.row_counts
                    return {t: counts.get(t, 0) for t in TABLES}

                sent = client.requests_sent
                sample, loaded = await measure(load)
                dlts.append(
                    {
                        "cpu": sample.cpu,
                        "wall": sample.wall,
                        "rows": loaded,
                        "requests": client.requests_sent - sent,
                    }
                )
                work = Backfill(
                    client, Path(tmp) / f"run{i}.sqlite", Scope(), concurrency=p["concurrency"]
                )
                sample, report = await measure(work.run)
                written = {t: report.written.get(t, 0) for t in TABLES}
                if written != loaded:
                    raise AssertionError(f"dlt loaded {loaded}, the backfill wrote {written}")
                backfills.append(
                    {"cpu": sample.cpu, "wall": sample.wall, "requests": report.requests}
                )
    measured = slice(1, None) if len(dlts) > 1 else slice(None)
    return {
        "dlt": dlts[measured],
        "backfill": backfills[measured],
        "rows": dlts[-1]["rows"],
        "concurrency": p["concurrency"],
    }


def run(ctx: Context, s: dict[str, Any]) -> Result:
    return ctx.child(dltload, **s)


def rows(r: Result | None, counts: Result | None, quick: bool) -> list[Row]:
    if r is None:
        return []
    if "error" in r:
        return [missing("dlt", r["error"])]
    n = r["rows"]
    actions = n["actions"]
    d_wall, b_wall = (
        median([x["wall"] for x in r["dlt"]]),
        median([x["wall"] for x in r["backfill"]]),
    )
    d_cpu, b_cpu = median([x["cpu"] for x in r["dlt"]]), median([x["cpu"] for x in r["backfill"]])
    case = (
        f"{n['fixtures']:,} fixtures, {actions:,} actions, {n['statistics']:,} statistics; "
        f"{r['dlt'][-1]['requests']:,} requests"
    )
    runs = len(r["dlt"])
    note = (
        f"the median of {runs} runs each, interleaved, after one that filled the server's "
        f"cache; concurrency {r['concurrency']}; first loads into fresh files"
    )
    return [
        Row(
            "dlt",
            case,
            "actions per second, dlt to DuckDB",
            "/s",
            actions / d_wall,
            actions / b_wall,
            "backfill to SQLite",
            note=note,
        ),
        Row(
            "dlt",
            case,
            "client CPU per action, dlt to DuckDB",
            "us",
            1e6 * d_cpu / actions,
            1e6 * b_cpu / actions,
            "backfill to SQLite",
            note=f"wall {d_wall:.2f}s against {b_wall:.2f}s; dlt's extract, normalize "
            "(which parses each record's JSON for the json column) and load",
        ),
    ]


CASE = Case(
    name="dlt",
    run=run,
    rows=rows,
    quick={"repeat": 1, "concurrency": 8},
    full={"repeat": 3, "concurrency": 8},
    order=105,
)
