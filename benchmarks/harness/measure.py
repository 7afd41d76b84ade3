"""Measuring: client CPU and wall time, peak RSS, and the machine the numbers come from."""

from __future__ import annotations

import gc
import importlib.metadata
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "Sample",
    "Series",
    "Variants",
    "machine",
    "measure",
    "measure_sync",
    "peak_kb",
    "reset_peak",
    "rounds",
    "rss_kb",
    "series",
    "versions",
    "warm",
]

PACKAGES = ("asyncsports", "aiohttp", "msgspec", "anyio", "pydantic", "pydantic-core", "httpx")


@dataclass(frozen=True, slots=True)
class Sample:
    """One timed run: CPU seconds of this process (all its threads), wall seconds, and the
    CPU seconds of that spent in the cyclic garbage collector."""

    cpu: float
    wall: float
    gc: float = 0.0


class _GCClock:
    """Adds up the CPU time of garbage collections (gc.callbacks) while installed."""

    def __init__(self) -> None:
        self.total = 0.0
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.process_time()
        else:
            self.total += time.process_time() - self._start

    def __enter__(self) -> _GCClock:
        gc.collect()  # start every run from the same state, and outside the clock
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)


async def measure(fn: Callable[[], Awaitable[Any]]) -> tuple[Sample, Any]:
    """Run ``await fn()`` after a full collection; return its times and its result."""
    with _GCClock() as clock:
        c0, w0 = time.process_time(), time.perf_counter()
        result = await fn()
        sample = Sample(time.process_time() - c0, time.perf_counter() - w0, clock.total)
    return sample, result


def measure_sync(fn: Callable[[], Any], number: int = 1) -> Sample:
    """Run ``fn()`` ``number`` times after a full collection; times per call."""
    with _GCClock() as clock:
        c0, w0 = time.process_time(), time.perf_counter()
        for _ in range(number):
            fn()
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return Sample(cpu / number, wall / number, clock.total / number)


def series(samples: list[Sample]) -> dict[str, list[float]]:
    """Samples as JSON-ready lists, round by round."""
    return {
        "cpu": [s.cpu for s in samples],
        "wall": [s.wall for s in samples],
        "gc": [s.gc for s in samples],
    }


def _status(field: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def rss_kb() -> int:
    """This process's resident set now, in KiB (0 where /proc is missing)."""
    return _status("VmRSS") or 0


def peak_kb() -> int:
    """This process's peak resident set, in KiB: VmHWM, else getrusage's ru_maxrss."""
    hwm = _status("VmHWM")
    return hwm if hwm is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def reset_peak() -> bool:
    """Reset VmHWM to the current RSS (Linux ``clear_refs``); False where that is refused."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gb() -> float | None:
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError):
        return None


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gb": _memory_gb(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "executable": sys.executable,
    }


def versions() -> dict[str, str]:
    """Installed versions of the packages measured."""
    out: dict[str, str] = {}
    for name in PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def callgrind(argv: list[str], windows: int, cwd: Path, timeout: float | None = None) -> list[int]:
    """Instructions counted by callgrind in each of ``windows`` measured parts of a child.

    The child (``python argv...`` under valgrind) prints ``ready`` before each part and
    ``done`` after it, and waits for a line on stdin each time: counting is zeroed at
    ``ready`` and dumped at ``done``, so imports and set-up are left out.
    """
    with tempfile.TemporaryDirectory(prefix="asyncsports-callgrind-") as tmp:
        dump = Path(tmp) / "callgrind.out"
        proc = subprocess.Popen(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={dump}", *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=cwd,
            text=True,
        )
        assert proc.stdin is not None and proc.stdout is not None
        try:
            for _ in range(windows):
                for expected, command in (("ready", "-z"), ("done", "-d")):
                    line = proc.stdout.readline().strip()
                    if line != expected:
                        raise RuntimeError(f"expected {expected!r} from the child, got {line!r}")
                    subprocess.run(
                        ["callgrind_control", command, str(proc.pid)],
                        check=True,
                        capture_output=True,
                    )
                    proc.stdin.write("\n")
                    proc.stdin.flush()
        finally:
            proc.stdin.close()
            proc.wait(timeout=timeout)
        dumps = sorted(dump.parent.glob("callgrind.out.*"), key=lambda p: int(p.suffix[1:]))
        return [
            next(
                int(line.split()[1])
                for line in path.read_text().splitlines()
                if line.startswith("totals:")
            )
            for path in dumps
        ]


Variants = Mapping[str, Callable[[], Awaitable[int]]]
Series = dict[str, dict[str, list[float]]]


async def warm(variants: Variants, expect: int) -> None:
    """Run every variant once, unmeasured, and check it saw ``expect`` records."""
    for name, fn in variants.items():
        n = await fn()
        if n != expect:
            raise AssertionError(f"{name}: {n} records, expected {expect}")


async def rounds(variants: Variants, repeat: int) -> Series:
    """``repeat`` interleaved measured rounds: each variant's figures, round by round."""
    samples: dict[str, list[Sample]] = {name: [] for name in variants}
    for _ in range(repeat):
        for name, fn in variants.items():
            sample, _n = await measure(fn)
            samples[name].append(sample)
    return {name: series(s) for name, s in samples.items()}
