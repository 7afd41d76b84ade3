"""A backfill under a rate budget: does it saturate the budget, and ask for nothing more?

    python -m benchmarks.budget            # writes benchmarks/results/budget/latest.{json,md}
    python -m benchmarks.budget --quick    # smaller, one rate

The emulator runs in its own process (benchmarks/harness/server.py, its bodies cached). For each
rate R, one backfill into a fresh SQLite file in this process: its wall time against the
least a budget allows, ``requests / R``, as a ratio (target: at most 1.05x); and its
requests against the fewest the scope needs (``asyncsports.backfill.requests_needed``:
every listing page at the largest page size, a timeline and a statistics packet per
fixture that has started), which must be equal.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.workers import _control, _server

HERE = Path(__file__).resolve().parent
TARGET = 1.05


async def _run(m: dict[str, Any], rate: float, sports: tuple[str, ...]) -> dict[str, Any]:
    from asyncsports import Client
    from asyncsports.backfill import Backfill, Scope, requests_needed, started

    scope = Scope(sports)
    with tempfile.TemporaryDirectory(prefix="asyncsports-budget-") as tmp:
        db = Path(tmp) / "budget.sqlite"
        async with Client(m["plain"], token=m["token"], vendor=m["vendor"], rate_limit=rate) as c:
            t0 = time.perf_counter()
            report = await Backfill(c, db, scope).run()
            wall = time.perf_counter() - t0
            sent = c.requests_sent
        with sqlite3.connect(db) as conn:
            counts = dict(conn.execute("SELECT sport, count(*) FROM fixtures GROUP BY sport"))
            rows = conn.execute("SELECT status, deleted FROM fixtures").fetchall()
        conn.close()
    if not report.finished or report.failed:
        raise RuntimeError(f"the backfill did not finish: {report.as_dict()}")
    begun = sum(started(status, bool(deleted)) for status, deleted in rows)
    needed = requests_needed([counts.get(s, 0) for s in sports], begun, scope.page_size)
    return {
        "rate": rate,
        "wall": wall,
        "requests": sent,
        "needed": needed,
        "least": sent / rate,
        "ratio": wall / (sent / rate),
    }


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    proc, m = _server(args.scale, cpus[-1] if len(cpus) > 1 else None)
    try:
        sports = tuple(args.sports.split(","))
        await _run(m, 1000.0, sports)  # fills the server's cache
        _control(m, "reset")
        runs = [await _run(m, rate, sports) for rate in args.rates]
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()
    return {
        "scale": args.scale,
        "sports": args.sports,
        "runs": runs,
        "machine": {
            "cpus": len(cpus),
            "python": platform.python_version(),
            "load": os.getloadavg()[0],
        },
    }


def markdown(data: dict[str, Any]) -> str:
    lines = [
        "# A backfill under a rate budget",
        "",
        f"Sports {data['sports']}, emulator scale `{data['scale']}`, page size 1,000 (the "
        f"largest the service allows); load average {data['machine']['load']:.1f} at the end.",
        "",
        "| rate | requests (fewest needed) | wall | least the budget allows | ratio | target | result |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in data["runs"]:
        ok = r["ratio"] <= TARGET and r["requests"] == r["needed"]
        lines.append(
            f"| {r['rate']:g}/s | {r['requests']} ({r['needed']}) | {r['wall']:.2f} s | "
            f"{r['least']:.2f} s | {r['ratio']:.3f}x | <= {TARGET}x, no request more | "
            f"{'pass' if ok else '**miss**'} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--scale", default="competitions=2,seasons=2,fixtures_per_season=20")
    parser.add_argument("--sports", default="basketball,soccer,ice-hockey")
    parser.add_argument("--rates", type=float, nargs="+", default=[20.0, 50.0])
    parser.add_argument("--out", type=Path, default=HERE / "results" / "budget")
    args = parser.parse_args(argv)
    if args.quick:
        args.rates, args.scale = [50.0], "competitions=1,seasons=1,fixtures_per_season=10"
    data = asyncio.run(bench(args))
    args.out.mkdir(parents=True, exist_ok=True)
    name = "quick" if args.quick else "latest"
    (args.out / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n")
    text = markdown(data)
    (args.out / f"{name}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
