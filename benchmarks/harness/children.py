"""The processes of a run: the benchmark server, and a fresh child process per measurement.

The server (:mod:`benchmarks.harness.server`) runs pinned to the last CPU, the children
to the others, so that a child's CPU time, wall time and peak RSS are its own. A child
runs one coroutine function of a case module (``python -m benchmarks.harness.child
MODULE:FUNCTION JSON``) and prints its result as JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.harness.measure import callgrind

__all__ = ["FULL", "QUICK", "Context", "Server", "Sizes", "cpus", "run_child"]

ROOT = Path(__file__).resolve().parents[2]  # the repository: where ``benchmarks`` imports


@dataclass(frozen=True)
class Sizes:
    """What the server holds, shared by the cases that read it, and a child's time limit."""

    mode: str
    walk_fixtures: int  # the big season; the walks (100 and 20 a page) are all of it
    memory_records: int  # the big timeline
    decode_actions: int  # a stored prefix of it, decoded whole
    stream_records: int  # another, streamed
    backfill_scale: str  # Emulator keywords of the plain world (empty: its defaults)
    live_packets: int  # packets of the live feed stored
    timeout: float  # seconds a child may take


FULL = Sizes("full", 20_000, 1_000_000, 5_000, 100_000, "", 20_000, 900.0)
QUICK = Sizes(
    "quick",
    2_000,
    50_000,
    5_000,
    10_000,
    "competitions=1,seasons=2,fixtures_per_season=6,actions_per_fixture=60",
    1_000,
    120.0,
)


def cpus(pin: bool) -> tuple[int | None, list[int] | None]:
    """The server's CPU and the children's CPUs (None: no pinning)."""
    if not pin or not hasattr(os, "sched_getaffinity"):
        return None, None
    mine = sorted(os.sched_getaffinity(0))
    if len(mine) < 2:
        return None, None
    return mine[-1], mine[:-1]


class Server:
    """The benchmark server process; its manifest once it is ready."""

    def __init__(self, sizes: Sizes, cpu: int | None) -> None:
        prefixes = (sizes.decode_actions, sizes.stream_records, sizes.memory_records)
        args = [
            sys.executable,
            "-m",
            "benchmarks.harness.server",
            f"--big-fixture-list={sizes.walk_fixtures}",
            f"--big-timeline={sizes.memory_records}",
            f"--prefixes={','.join(map(str, prefixes))}",
            f"--plain-scale={sizes.backfill_scale}",
            f"--live-packets={sizes.live_packets}",
        ]
        if cpu is not None:
            args.append(f"--cpu={cpu}")
        self.proc = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT, text=True
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


Child = Callable[..., Any]  # async def fn(manifest, params) -> dict, in a case module


def _argv(fn: Child, spec: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "benchmarks.harness.child",
        f"{fn.__module__}:{fn.__name__}",
        spec,
    ]


def run_child(fn: Child, spec: dict[str, Any], timeout: float) -> dict[str, Any]:
    """Run ``fn`` in a fresh process; its result, or ``{"error": ...}``."""
    try:
        done = subprocess.run(
            _argv(fn, json.dumps(spec)), capture_output=True, text=True, timeout=timeout, cwd=ROOT
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f}s"}
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-3:]
        return {"error": f"exit {done.returncode}: {' / '.join(tail)}"}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@dataclass(frozen=True)
class Context:
    """What a case's ``run`` gets: the server's manifest, where children run, the sizes."""

    manifest: dict[str, Any]
    cpus: list[int] | None
    sizes: Sizes

    @property
    def quick(self) -> bool:
        """Whether this is a quick run (CI's sizes)."""
        return self.sizes.mode == "quick"

    def child(self, fn: Child, **params: Any) -> dict[str, Any]:
        """``await fn(manifest, params)`` in a fresh process, with a line of progress."""
        t0 = time.perf_counter()
        spec = {"manifest": self.manifest, "params": params, "cpus": self.cpus}
        result = run_child(fn, spec, self.sizes.timeout)
        state = "error: " + result["error"] if "error" in result else "done"
        print(f"  {fn.__name__:9s} {time.perf_counter() - t0:6.1f}s  {state}", file=sys.stderr)
        return result

    def instructions(self, fn: Child, **params: Any) -> int:
        """Instructions of the measured part of ``fn`` in a child under callgrind.

        ``fn`` says ``ready`` after its warm-up and ``done`` after the measured part,
        waiting for a line on stdin each time (see :func:`~benchmarks.harness.measure.callgrind`).
        """
        if not (shutil.which("valgrind") and shutil.which("callgrind_control")):
            raise RuntimeError("valgrind's callgrind is not installed")
        spec = {"manifest": self.manifest, "params": params, "cpus": self.cpus}
        return callgrind(_argv(fn, json.dumps(spec)), 1, ROOT, self.sizes.timeout)[0]
