"""``python -m benchmarks [--quick] [--only CASES] [--list]``: run the cases, write the results.

Starts the benchmark server in its own process, pinned to the last CPU, then runs each
selected case (its children pinned to the other CPUs). Writes ``results/latest.md`` and
``latest.json`` (``--quick``: ``quick.md`` and ``quick.json``, so that a CI run does not
overwrite the full table) and prints the table.

Exit status: 0 when every case ran (a missed target is reported, not an error, since
timing on a shared machine is noisy; ``--strict`` makes a miss fail too), 1 when a case
failed to run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shlex
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks.harness.children import FULL, QUICK, Context, Server, Sizes, cpus
from benchmarks.harness.measure import machine, versions
from benchmarks.harness.registry import Case, build_rows, discover, run_cases
from benchmarks.harness.report import markdown, write

__all__ = ["main"]

RESULTS = Path(__file__).resolve().parents[1] / "results"


def _count(case: Case, ctx: Context, settings: dict[str, Any]) -> dict[str, Any]:
    """One case's instruction counts, or ``{"error": ...}``."""
    assert case.count is not None
    t0 = time.perf_counter()
    try:
        result = case.count(ctx, settings)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        result = {"error": str(exc)}
    state = result.get("error", "done")
    print(
        f"  {'callgrind':9s} {time.perf_counter() - t0:6.1f}s  {case.name}: {state}",
        file=sys.stderr,
    )
    return result


def run_all(
    cases: list[Case], sizes: Sizes, pin: bool, instructions: bool = False
) -> tuple[dict[str, Any], str]:
    """Every case of ``cases`` against one server; the raw results and where things ran."""
    server_cpu, client_cpus = cpus(pin)
    placement = (
        f"server on CPU {server_cpu}, clients on CPU {','.join(map(str, client_cpus))}"
        if client_cpus
        else "not pinned"
    )
    server = Server(sizes, server_cpu)
    ctx = Context(server.manifest, client_cpus, sizes)
    counts: dict[str, Any] = {}
    try:
        raw = run_cases(ctx, cases)
        for case in cases if instructions else []:
            if case.count is not None:
                counts[case.name] = _count(case, ctx, case.settings(ctx.quick))
    finally:
        server.close()
    if counts:
        raw["instructions"] = counts
    return raw, placement


def _meta(sizes: Sizes, cases: list[Case], argv: list[str] | None) -> dict[str, Any]:
    """What the page says of the run, before it starts (times and load added after)."""
    command = "python -m benchmarks " + shlex.join(argv if argv is not None else sys.argv[1:])
    return {
        "mode": sizes.mode,
        "started": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": command.rstrip(),
        "machine": machine(),
        "versions": versions(),
        "config": {
            "sizes": asdict(sizes),
            "cases": {c.name: c.settings(sizes.mode == "quick") for c in cases},
        },
    }


def _parser(names: list[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats (CI)")
    parser.add_argument("--only", default=",".join(names), help=f"cases to run: {','.join(names)}")
    parser.add_argument("--list", action="store_true", help="name every case and stop")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results directory")
    parser.add_argument("--no-pin", action="store_true", help="do not pin processes to CPUs")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="also count instructions with valgrind (the cases that can: walk, walk20, gets, live)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    everything = discover()
    names = [c.name for c in everything]
    parser = _parser(names)
    args = parser.parse_args(argv)
    if args.list:
        for case in everything:
            print(f"{case.name:9s} {case.doc}")
        return 0
    only = {n.strip() for n in args.only.split(",") if n.strip()}
    unknown = only - set(names)
    if unknown:
        parser.error(f"--only: unknown cases {', '.join(sorted(unknown))}")
    cases = [c for c in everything if c.name in only]
    sizes = QUICK if args.quick else FULL
    meta = _meta(sizes, cases, argv)
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    print(f"benchmarks ({sizes.mode} mode):", file=sys.stderr)
    raw, placement = run_all(cases, sizes, pin=not args.no_pin, instructions=args.instructions)
    rows = build_rows(raw, args.quick, cases)
    load_after = os.getloadavg()
    meta |= {
        "seconds": time.perf_counter() - t0,
        "placement": placement,
        "load_before": " ".join(f"{x:.2f}" for x in load_before),
        "load_after": " ".join(f"{x:.2f}" for x in load_after),
        "busy": max(load_before[0], load_after[0]) > (os.cpu_count() or 1) - 0.5,
    }
    write(args.out, "quick" if args.quick else "latest", rows, meta, raw)
    print(markdown(rows, meta))
    failed = any("error" in r for r in [*raw.values(), *raw.get("instructions", {}).values()])
    missed = any(r.passed is False for r in rows)
    return 1 if failed or (args.strict and missed) else 0
