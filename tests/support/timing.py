"""A pytest plugin (tests/conftest.py loads it): at the end of a run, the time spent in the
tests not marked ``slow``, the quick loop of ``pytest -m "not slow"``, so that CI's log of
the whole suite shows it without a second run:

    fast suite: 48.2 s wall, 41.0 s CPU in 1,721 tests not marked slow

Wall time is each test's setup, call and teardown; CPU time is the process's and that of
the subprocesses it waited for in those phases. Collection and the session's start are not
counted (a few seconds more in ``pytest -m "not slow"``). Under pytest-xdist (the suite's
default ``-n 2``) each worker sends its share when it ends, the line adds them up (the
tests' time, as one process would spend it), and a second line gives the run's own wall
time on its workers:

    fast suite: 84.1 s wall, 47.0 s CPU in 1,756 tests not marked slow
    the run: 52.3 s wall on 2 workers"""

from __future__ import annotations

import os
import time
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import pytest


@dataclass
class Spent:
    """What the tests not marked slow took."""

    tests: int = 0
    wall: float = 0.0
    cpu: float = 0.0
    workers: int = 0
    """xdist workers whose share is added (0: the tests ran in this process)."""
    started: float = 0.0

    def line(self) -> str:
        return (
            f"fast suite: {self.wall:.1f} s wall, {self.cpu:.1f} s CPU"
            f" in {self.tests:,} tests not marked slow"
        )


SPENT = pytest.StashKey[Spent]()


def cpu_seconds() -> float:
    """This process's CPU time and that of the children it has waited for."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def pytest_configure(config: pytest.Config) -> None:
    config.stash[SPENT] = Spent(started=time.perf_counter())


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    out = getattr(session.config, "workeroutput", None)
    if out is not None:  # an xdist worker: its share goes to the controller
        spent = session.config.stash[SPENT]
        out["fast_suite"] = (spent.tests, spent.wall, spent.cpu)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """xdist's controller, as a worker ends: add its share."""
    share = getattr(node, "workeroutput", {}).get("fast_suite")
    if share is not None:
        spent = node.config.stash[SPENT]
        spent.tests += share[0]
        spent.wall += share[1]
        spent.cpu += share[2]
        spent.workers += 1


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    wall, cpu = time.perf_counter(), cpu_seconds()
    try:
        return (yield)
    finally:
        if item.get_closest_marker("slow") is None:
            spent = item.config.stash[SPENT]
            spent.tests += 1
            spent.wall += time.perf_counter() - wall
            spent.cpu += cpu_seconds() - cpu


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    spent = terminalreporter.config.stash.get(SPENT, None)
    if spent is not None and spent.tests:
        terminalreporter.write_line(spent.line())
        if spent.workers:
            elapsed = time.perf_counter() - spent.started
            terminalreporter.write_line(f"the run: {elapsed:.1f} s wall on {spent.workers} workers")
