"""``python -m benchmarks [--quick]``: run every benchmark and write the results.

Starts the benchmark server (:mod:`benchmarks.server`) in its own process, pinned to the
last CPU, then runs each case in a fresh child process pinned to the other CPUs, so the
client's CPU time, wall time and peak RSS are its own. Writes ``results/latest.md`` and
``latest.json`` (``--quick``: ``quick.md`` and ``quick.json``, so that a CI run does not
overwrite the full table) and prints the table.

Exit status: 0 when every case ran (a missed target is reported, not an error, since
timing on a shared machine is noisy; ``--strict`` makes a miss fail too), 1 when a case
failed to run.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks.live import IDLE_VARIANTS, LIVE_VARIANTS
from benchmarks.measure import callgrind, machine, versions
from benchmarks.report import build_rows, markdown, write

HERE = Path(__file__).resolve().parent
ALL = (
    "decode",
    "walk",
    "walk20",
    "gets",
    "peers",
    "stream",
    "framing",
    "memory",
    "fanout",
    "backfill",
    "live",
    "fanin",
    "idle",
    "sync",
)


@dataclass(frozen=True)
class Config:
    """Sizes and repeats of one mode."""

    mode: str
    walk_fixtures: int  # the big season; the walks (100 and 20 a page) are all of it
    gets: int  # fixtures.get calls per round, one request each
    walk_repeat: int  # rounds per process
    walk_processes: int  # fresh processes, whose rounds are pooled
    peers_repeat: int  # rounds of the httpx + pydantic comparison (5-9x slower)
    decode_rounds: int
    decode_round: float  # seconds of calls per round, for the slower variant
    stream_records: int
    stream_repeat: int
    memory_records: int
    fanout_repeat: int
    backfill_scale: str
    backfill_repeat: int
    live_actions: int = 20_000  # one feed flat out, per round
    live_repeat: int = 7
    live_icount_actions: int = 2_000  # one feed under callgrind (50 times slower)
    fanin_fixtures: int = 500
    fanin_rate: float = 10.0  # packets a second per fixture
    fanin_seconds: float = 5.0  # the measured window, once every feed flows
    fanin_warm: float = 1.0
    fanin_repeat: int = 2
    idle_feeds: int = 1_000
    # Variants of fanin and idle (empty: all). Quick mode runs asyncsports and the floor
    # only: each variant of them costs a second or two, the peers are compared in `live`.
    fanin_variants: tuple[str, ...] = ()
    idle_variants: tuple[str, ...] = ()
    live_tick: float = 0.01  # the server's pacing turn: 500 feeds at 10/s, 50 every 10 ms
    framing_chunk: int = 256 * 1024
    page_size: int = 100
    default_page_size: int = 20  # the service's default
    decode_actions: int = 5_000
    fanout_pages: int = 40
    fanout_latency: float = 0.05
    backfill_concurrency: int = 8
    timeout: float = 900.0


FULL = Config(
    mode="full",
    walk_fixtures=20_000,
    gets=1_000,
    walk_repeat=9,
    walk_processes=5,
    peers_repeat=5,
    decode_rounds=7,
    decode_round=0.2,
    stream_records=100_000,
    stream_repeat=7,
    memory_records=1_000_000,
    fanout_repeat=3,
    backfill_scale="",
    backfill_repeat=5,
)
QUICK = Config(
    mode="quick",
    walk_fixtures=2_000,
    gets=100,
    walk_repeat=12,
    walk_processes=2,
    peers_repeat=3,
    decode_rounds=3,
    decode_round=0.03,
    stream_records=10_000,
    stream_repeat=5,
    memory_records=50_000,
    fanout_repeat=1,
    backfill_scale="competitions=1,seasons=2,fixtures_per_season=6,actions_per_fixture=60",
    backfill_repeat=2,
    live_actions=1_000,
    live_repeat=3,
    live_icount_actions=500,
    fanin_fixtures=100,
    fanin_seconds=0.5,
    fanin_warm=0.2,
    fanin_repeat=1,
    idle_feeds=100,
    fanin_variants=("asyncsports merge", "floor"),
    idle_variants=("asyncsports", "floor"),
    timeout=120.0,
)


def fanin_count(cfg: Config) -> int:
    """Packets per feed in ``fanin``: more than the run can take, so no feed ends early."""
    return int(cfg.fanin_rate * (cfg.fanin_warm + cfg.fanin_seconds + 60))


def _cpus(pin: bool) -> tuple[int | None, list[int] | None]:
    """The server's CPU and the clients' CPUs (None: no pinning)."""
    if not pin or not hasattr(os, "sched_getaffinity"):
        return None, None
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return None, None
    return cpus[-1], cpus[:-1]


class Server:
    """The benchmark server process; its manifest once it is ready."""

    def __init__(self, cfg: Config, cpu: int | None) -> None:
        args = [
            sys.executable,
            "-m",
            "benchmarks.server",
            f"--big-fixture-list={cfg.walk_fixtures}",
            f"--big-timeline={cfg.memory_records}",
            f"--prefixes={cfg.decode_actions},{cfg.stream_records},{cfg.memory_records}",
            f"--plain-scale={cfg.backfill_scale}",
            f"--live-packets={max(cfg.live_actions, fanin_count(cfg))}",
        ]
        if cpu is not None:
            args.append(f"--cpu={cpu}")
        self.proc = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=HERE.parent, text=True
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the benchmark server did not start (exit {self.proc.wait()})")
        self.manifest: dict[str, Any] = json.loads(line)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()  # the server's signal to stop
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def run_case(
    name: str,
    params: dict[str, Any],
    manifest: dict[str, Any],
    cpus: list[int] | None,
    timeout: float,
) -> dict[str, Any]:
    """Run one case in a fresh process; its result, or ``{"error": ...}``."""
    spec = json.dumps({"manifest": manifest, "params": params, "cpus": cpus})
    try:
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.child", name, spec],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=HERE.parent,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f}s"}
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-3:]
        return {"error": f"exit {done.returncode}: {' / '.join(tail)}"}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def pool(results: list[dict[str, Any]]) -> dict[str, Any]:
    """One result from several processes' results: their rounds end to end."""
    errors = [r["error"] for r in results if "error" in r]
    if errors:
        return {"error": "; ".join(errors)}
    out = dict(results[0])
    for key, value in out.items():
        if isinstance(value, dict) and "cpu" in value:
            out[key] = {field: [x for r in results for x in r[key][field]] for field in value}
        elif key in ("hits", "misses"):
            out[key] = sum(r[key] for r in results)
    out["processes"] = len(results)
    return out


def _callgrind(cfg: Config, spec: str) -> int:
    """Instructions of the measured part of one ``benchmarks.child icount`` run."""
    argv = [sys.executable, "-m", "benchmarks.child", "icount", spec]
    return callgrind(argv, 1, HERE.parent, cfg.timeout)[0]


def count_instructions(
    cfg: Config, manifest: dict[str, Any], cpus: list[int] | None, only: tuple[str, ...] = ALL
) -> dict[str, Any]:
    """Instructions per request of each variant of the request-path cases, by callgrind.

    For ``walk`` (100 a page), ``walk20`` (20 a page) and ``gets`` (one request per
    record), whichever are selected. Unlike CPU time, a count does not move with the
    load on the machine or with where code and heap land, so it settles close calls.
    Each variant runs in its own process under callgrind; the counters are zeroed after
    its warm-up and dumped after the measured run, so start-up and warm-up are not counted.
    """
    if not (shutil.which("valgrind") and shutil.which("callgrind_control")):
        return {"error": "valgrind's callgrind is not installed"}
    walks = 1
    walk_variants = ("asyncsports", "asyncsports pages()", "floor")
    plans: dict[str, tuple[dict[str, Any], tuple[str, ...], int]] = {}
    for name, size, fixtures in (
        ("walk", cfg.page_size, cfg.walk_fixtures),
        ("walk20", cfg.default_page_size, cfg.walk_fixtures),
    ):
        if name in only:
            params = {"case": "walk", "size": size, "fixtures": fixtures, "walks": walks}
            plans[name] = (params, walk_variants, fixtures // size)
    if "gets" in only:
        params = {"case": "gets", "gets": cfg.gets, "walks": walks}
        plans["gets"] = (params, ("asyncsports", "floor"), cfg.gets)
    out: dict[str, Any] = {}
    if "live" in only:
        out["live"] = count_live(cfg, manifest, cpus)
    for name, (params, variants, requests) in plans.items():
        counts: dict[str, Any] = {**params, "requests": requests}
        for variant in variants:
            spec = json.dumps(
                {"manifest": manifest, "params": {**params, "variant": variant}, "cpus": cpus}
            )
            try:
                counts[variant] = _callgrind(cfg, spec) / (walks * requests)
            except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
                return {"error": f"{name}, {variant}: {exc}"}
        out[name] = counts
    return out


def idle_feeds(case: Callable[..., dict[str, Any]], cfg: Config) -> dict[str, Any]:
    """``idle``: one process per variant, as RSS once grown does not shrink for the next."""
    out: dict[str, Any] = {}
    for variant in cfg.idle_variants or IDLE_VARIANTS:
        result = case("idle", feeds=cfg.idle_feeds, variant=variant)
        if "error" in result and "no variant" in result["error"]:
            continue  # asyncsports' own rows wait for client.live
        out[variant] = result
    errors = [f"{v}: {r['error']}" for v, r in out.items() if "error" in r]
    return {"error": "; ".join(errors)} if errors else out


def count_live(cfg: Config, manifest: dict[str, Any], cpus: list[int] | None) -> dict[str, Any]:
    """Instructions of one whole feed (``live_actions`` packets) for each live variant.

    A variant that cannot run (asyncsports before ``client.live``, a peer not installed)
    is left out, with its error under ``errors``.
    """
    n = cfg.live_icount_actions
    out: dict[str, Any] = {"actions": n, "errors": {}}
    for variant in LIVE_VARIANTS:
        params = {"actions": n, "variant": variant}
        spec = json.dumps({"manifest": manifest, "params": params, "cpus": cpus})
        argv = [sys.executable, "-m", "benchmarks.child", "live_icount", spec]
        try:
            out[variant] = callgrind(argv, 1, HERE.parent, cfg.timeout)[0]
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            out["errors"][variant] = f"{type(exc).__name__}: {exc}"
    return out


def live_cases(
    case: Callable[..., dict[str, Any]], cfg: Config, only: tuple[str, ...]
) -> dict[str, Any]:
    """The live feeds' cases among ``only``: their raw results."""
    raw: dict[str, Any] = {}
    if "live" in only:
        raw["live"] = case("live", actions=cfg.live_actions, repeat=cfg.live_repeat)
    if "fanin" in only:
        raw["fanin"] = case(
            "fanin",
            fixtures=cfg.fanin_fixtures,
            rate=cfg.fanin_rate,
            seconds=cfg.fanin_seconds,
            warm=cfg.fanin_warm,
            repeat=cfg.fanin_repeat,
            tick=cfg.live_tick,
            count=fanin_count(cfg),
            variants=list(cfg.fanin_variants),
        )
    if "idle" in only:
        raw["idle"] = idle_feeds(case, cfg)
    return raw


def run_all(
    cfg: Config, only: tuple[str, ...], pin: bool, instructions: bool = False
) -> tuple[dict[str, Any], str]:
    """Every selected case against one server; the raw results and where things ran."""
    server_cpu, client_cpus = _cpus(pin)
    placement = (
        f"server on CPU {server_cpu}, clients on CPU {','.join(map(str, client_cpus))}"
        if client_cpus
        else "not pinned"
    )
    server = Server(cfg, server_cpu)
    m = server.manifest
    raw: dict[str, Any] = {}
    try:

        def case(name: str, **params: Any) -> dict[str, Any]:
            t0 = time.perf_counter()
            result = run_case(name, params, m, client_cpus, cfg.timeout)
            state = "error: " + result["error"] if "error" in result else "done"
            print(f"  {name:9s} {time.perf_counter() - t0:6.1f}s  {state}", file=sys.stderr)
            return result

        if "decode" in only:
            raw["decode"] = case(
                "decode",
                page_size=cfg.page_size,
                actions=cfg.decode_actions,
                rounds=cfg.decode_rounds,
                round=cfg.decode_round,
            )
        groups: dict[str, dict[str, int]] = {}
        if "walk" in only:
            groups["walk"] = {"size": cfg.page_size, "fixtures": cfg.walk_fixtures}
        if "walk20" in only:
            groups["walk20"] = {"size": cfg.default_page_size, "fixtures": cfg.walk_fixtures}
        if "gets" in only:
            groups["gets"] = {"gets": cfg.gets}
        if groups:
            # Several processes: where code and heap land shifts these close comparisons
            # by a few percent from one process to the next, so no one process decides.
            runs = [
                case("requests", groups=groups, repeat=cfg.walk_repeat)
                for _ in range(cfg.walk_processes)
            ]
            for name in groups:
                raw[name] = pool([r.get(name, r) for r in runs])
        if instructions:
            t0 = time.perf_counter()
            raw["instructions"] = count_instructions(cfg, m, client_cpus, only)
            state = raw["instructions"].get("error", "done")
            print(f"  {'callgrind':9s} {time.perf_counter() - t0:6.1f}s  {state}", file=sys.stderr)
        if "peers" in only:
            raw["peers"] = case(
                "peers", size=cfg.page_size, fixtures=cfg.walk_fixtures, repeat=cfg.peers_repeat
            )
        if "stream" in only:
            raw["stream"] = case("stream", records=cfg.stream_records, repeat=cfg.stream_repeat)
        if "framing" in only:
            raw["framing"] = case(
                "framing",
                records=cfg.stream_records,
                chunk=cfg.framing_chunk,
                repeat=cfg.stream_repeat,
            )
        if "memory" in only:
            # One process per variant: a peak in one must not hide or inflate the other's.
            variants = {
                v: case("memory", records=cfg.memory_records, variant=v)
                for v in ("streamed", "whole")
            }
            errors = [r["error"] for r in variants.values() if "error" in r]
            raw["memory"] = {"error": "; ".join(errors)} if errors else variants
        if "fanout" in only:
            raw["fanout"] = case(
                "fanout",
                size=cfg.walk_fixtures // cfg.fanout_pages,
                pages=cfg.fanout_pages,
                latency=cfg.fanout_latency,
                repeat=cfg.fanout_repeat,
            )
        raw.update(live_cases(case, cfg, only))
        if "backfill" in only:
            raw["backfill"] = case(
                "backfill",
                repeat=cfg.backfill_repeat,
                concurrency=cfg.backfill_concurrency,
                postgres=True,
            )
        if "sync" in only:
            from benchmarks import sync_bench  # the mirror's live path: its own module

            raw["sync"] = {
                mode: case("sync", **p)
                for mode, p in sync_bench.params(cfg.mode == "quick").items()
            }
    finally:
        server.close()
    return raw, placement


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats (CI)")
    parser.add_argument("--only", default=",".join(ALL), help=f"cases to run: {','.join(ALL)}")
    parser.add_argument("--out", type=Path, default=HERE / "results", help="results directory")
    parser.add_argument("--no-pin", action="store_true", help="do not pin processes to CPUs")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="also count instructions of walk, walk20, gets and live with valgrind",
    )
    args = parser.parse_args(argv)
    only = tuple(n.strip() for n in args.only.split(",") if n.strip())
    unknown = set(only) - set(ALL)
    if unknown:
        parser.error(f"--only: unknown cases {', '.join(sorted(unknown))}")
    cfg = QUICK if args.quick else FULL
    started = dt.datetime.now(dt.UTC)
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    print(f"benchmarks ({cfg.mode} mode):", file=sys.stderr)
    raw, placement = run_all(cfg, only, pin=not args.no_pin, instructions=args.instructions)
    rows = build_rows(raw, quick=args.quick)
    command = "python -m benchmarks " + shlex.join(argv if argv is not None else sys.argv[1:])
    meta: dict[str, Any] = {
        "mode": cfg.mode,
        "started": started.strftime("%Y-%m-%d %H:%M UTC"),
        "seconds": time.perf_counter() - t0,
        "command": command.rstrip(),
        "machine": machine(),
        "versions": versions(),
        "placement": placement,
        "load_before": " ".join(f"{x:.2f}" for x in load_before),
        "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "busy": max(load_before[0], os.getloadavg()[0]) > (os.cpu_count() or 1) - 0.5,
        "config": asdict(cfg),
    }
    write(args.out, "quick" if args.quick else "latest", rows, meta, raw)
    print(markdown(rows, meta))
    failed = any("error" in r for r in raw.values())
    missed = any(r.passed is False for r in rows)
    return 1 if failed or (args.strict and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
