"""Measuring: client CPU and wall time, peak RSS, and the machine the numbers come from."""

from __future__ import annotations

import gc
import importlib.metadata
import os
import platform
import resource
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Sample",
    "machine",
    "measure",
    "measure_sync",
    "peak_kb",
    "reset_peak",
    "rss_kb",
    "series",
    "versions",
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
