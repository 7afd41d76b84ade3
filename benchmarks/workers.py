"""Sharded backfill workers: the speed-up of N worker processes over one, without a rate
budget, into a throwaway PostgreSQL (tests/support/servers.py), the emulator in its own process
(benchmarks/harness/server.py, its bodies cached, pinned to the last CPU).

    python -m benchmarks.workers            # writes benchmarks/results/workers/latest.{json,md}
    python -m benchmarks.workers --quick    # smaller, one round

Two settings, each with N = 1, 2, 4 ``asyncsports worker`` processes and one plain
``backfill`` process, interleaved round by round: ``cpu`` (no added latency: the client's
and PostgreSQL's CPU bound the run) and ``latency`` (each response delayed, as from a
distant service, with few units in hand per worker: waiting bounds the run). Wall time runs from the first process's start to the last one's exit,
start-up included; the speed-up is wall(1) / wall(N) per round, and its median is shown.
Every run's rows are checked against the first run's counts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import statistics
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TESTS = str(HERE.parent / "tests")
WORKERS = (1, 2, 4)
RUNS = (0, *WORKERS)  # 0: a plain one-process backfill, the baseline without a job table


def _server(scale: str, cpu: int | None) -> tuple[Any, dict[str, Any]]:
    import subprocess

    args = [sys.executable, "-m", "benchmarks.harness.server", f"--plain-scale={scale}"]
    if cpu is not None:
        args.append(f"--cpu={cpu}")
    proc = subprocess.Popen(
        args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=HERE.parent, text=True
    )
    assert proc.stdout is not None
    return proc, json.loads(proc.stdout.readline())


def _control(m: dict[str, Any], query: str) -> None:
    urllib.request.urlopen(f"{m['plain']}/_bench/{query}", timeout=10).read()


async def _counts(url: str) -> dict[str, int]:
    import asyncpg

    conn = await asyncpg.connect(url)
    try:
        return {
            t: await conn.fetchval(f"SELECT count(*) FROM {t}")
            for t in ("fixtures", "actions", "statistics")
        }
    finally:
        await conn.close()


async def _run(m: dict[str, Any], url: str, n: int, concurrency: int) -> dict[str, Any]:
    """N worker processes on one fresh job (N = 0: one plain ``backfill`` process, no job
    table); wall, their CPU, the rows."""
    from asyncsports.backfill import Scope
    from asyncsports.backfill.workers import plan_job

    env = {k: v for k, v in os.environ.items() if not k.startswith("ASYNCSPORTS_")}
    env |= {"ASYNCSPORTS_BASE_URL": m["plain"], "ASYNCSPORTS_TOKEN": m["token"]}
    argv = [
        sys.executable,
        "-m",
        "asyncsports.cli",
        "--vendor",
        m["vendor"],
        "--rate-limit",
        "0",
        "worker",
        "--db",
        url,
        "--job",
        "bench",
        "--concurrency",
        str(concurrency),
        "--json",
    ]
    if n == 0:
        i = argv.index("worker")
        argv[i : i + 5] = ["backfill", "--db", url, "--restart"]
    else:
        await plan_job(url, "bench", Scope(), restart=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    procs = [
        await asyncio.create_subprocess_exec(*argv, env=env, stdout=asyncio.subprocess.PIPE)
        for _ in range(max(n, 1))
    ]
    outs = [await p.communicate() for p in procs]
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if any(p.returncode for p in procs):
        raise RuntimeError(f"a worker failed: {[p.returncode for p in procs]}")
    reports = [json.loads(out) for out, _ in outs]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "wall": wall,
        "cpu": cpu,
        "rows": await _counts(url),
        "units": [r["units"] for r in reports if n],
        "requests": sum(r["requests"] for r in reports),
    }


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    sys.path.insert(0, TESTS)
    from support.servers import PostgresServer, pg_bin  # type: ignore[import-not-found]

    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    # The server on the last CPU; the workers (and PostgreSQL) float over all of them: on
    # a machine of few cores the CPU-bound speed-up is bounded by the cores left.
    server_cpu = cpus[-1] if len(cpus) > 1 else None
    bin_dir = pg_bin()
    if bin_dir is None:
        raise SystemExit("PostgreSQL is not installed (apt-get install postgresql)")
    proc, m = _server(args.scale, server_cpu)
    pg = PostgresServer(bin_dir)
    results: dict[str, dict[int, list[dict[str, Any]]]] = {
        "cpu": {n: [] for n in RUNS},
        "latency": {n: [] for n in RUNS},
    }
    try:
        url = pg.create_database()
        warm = await _run(m, url, 1, 8)  # fills the server's cache
        _control(m, "reset")
        for _ in range(args.rounds):
            for setting, latency, concurrency in (("cpu", 0, 8), ("latency", args.latency, 2)):
                _control(m, f"config?latency={latency}")
                for n in RUNS:
                    run = await _run(m, url, n, concurrency)
                    if run["rows"] != warm["rows"]:
                        raise AssertionError(f"{n} workers wrote {run['rows']}, one {warm['rows']}")
                    results[setting][n].append(run)
        _control(m, "config?latency=0")
    finally:
        pg.close()
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()
    return {
        "scale": args.scale,
        "rounds": args.rounds,
        "latency": args.latency,
        "rows": warm["rows"],
        "requests": warm["requests"],
        "machine": {
            "cpus": len(cpus),
            "python": platform.python_version(),
            "load": os.getloadavg()[0],
        },
        "results": results,
    }


def _speedups(runs: dict[int, list[dict[str, Any]]], n: int) -> float:
    return statistics.median(
        one["wall"] / r["wall"] for one, r in zip(runs[1], runs[n], strict=True)
    )


def markdown(data: dict[str, Any]) -> str:
    rows = data["rows"]
    lines = [
        "# Sharded backfill workers: speed-up of N processes, no rate budget",
        "",
        f"{rows['fixtures']:,} fixtures, {rows['actions']:,} actions, {rows['statistics']:,} "
        f"statistics ({data['requests']:,} requests) into PostgreSQL; emulator scale "
        f"`{data['scale'] or 'default'}`; {data['rounds']} rounds; {data['machine']['cpus']} "
        f"CPUs (server pinned to one, workers and PostgreSQL unpinned), load average {data['machine']['load']:.1f} at the end.",
        "",
        "| setting | workers | wall (median) | speed-up vs 1 (median of paired rounds) | "
        "worker CPU (median) | actions/s |",
        "|---|---|---|---|---|---|",
    ]
    for setting, runs in data["results"].items():
        runs = {int(k): v for k, v in runs.items()}
        for n in RUNS:
            wall = statistics.median(r["wall"] for r in runs[n])
            cpu = statistics.median(r["cpu"] for r in runs[n])
            label = (
                "no added latency, 8 units in hand each"
                if setting == "cpu"
                else (f"latency {1000 * data['latency']:.0f} ms per response, 2 units in hand each")
            )
            who = str(n) if n else "plain backfill (1 process, no job table)"
            lines.append(
                f"| {label} | {who} | {wall:.2f} s | {_speedups(runs, n):.2f}x | "
                f"{cpu:.2f} s | {rows['actions'] / wall:,.0f} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument(
        "--scale", default="competitions=2,seasons=2,fixtures_per_season=24,actions_per_fixture=200"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--out", type=Path, default=HERE / "results" / "workers")
    args = parser.parse_args(argv)
    if args.quick:
        args.rounds, args.scale = 1, "competitions=1,seasons=2,fixtures_per_season=6"
    data = asyncio.run(bench(args))
    args.out.mkdir(parents=True, exist_ok=True)
    name = "quick" if args.quick else "latest"
    (args.out / f"{name}.json").write_text(json.dumps(data, indent=1) + "\n")
    text = markdown(json.loads(json.dumps(data)))
    (args.out / f"{name}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
