"""A pytest plugin (tests/conftest.py loads it): at the end of a run, what the tests not
marked ``slow`` (the quick loop, ``pytest -m "not slow"``) came to, so that CI's log of the
whole suite shows it without a second run.

The counts are pytest's own, as its last line gives them (each report's category by
``pytest_report_teststatus``, counted where the terminal counts them: in xdist's controller,
from every worker's reports), restricted to the tests not marked slow; a module skipped or
failing as it is collected counts as pytest counts it (one skipped, one error). The time depends on
what ran:

- only tests not marked slow (the quick loop): the run's wall time, from the session's
  start to this line, as pytest's last line counts it, and the CPU time of the tests
  (setup to teardown: this process's and the subprocesses' it waited for; under xdist every
  worker's, added up, as CPU time adds up)::

      fast suite: 2,537 passed, 5 skipped in 147.6 s wall, 201.3 s CPU

- slow tests too (CI's whole suite): the run's wall time is mostly theirs, so the line
  gives the fast tests' own time, setup to teardown, added up (under xdist over the
  workers: the time one process would spend on them)::

      fast suite: 1,716 passed, 5 skipped not marked slow, in 84.1 s of their own (added up), 47.0 s CPU

Under pytest-xdist a second line gives the run's wall time and its workers::

    the run: 52.3 s wall on 2 workers"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

import pytest

ORDER = ("failed", "passed", "skipped", "xfailed", "xpassed", "error")
"""The categories pytest's last line names, in its order."""


@dataclass
class Spent:
    """What the tests not marked slow came to."""

    counts: Counter[str] = field(default_factory=Counter)
    """Reports of tests not marked slow, by pytest's category."""
    ran: bool = False
    """Whether a test not marked slow ran (else there is no line to print)."""
    slow: bool = False
    """Whether a slow test ran too."""
    own: float = 0.0
    """The tests' wall time, setup to teardown, added up."""
    cpu: float = 0.0
    workers: int = 0
    """xdist workers whose share is added (0: the tests ran in this process)."""
    started: float = 0.0

    def said(self) -> str:
        """The counts as pytest's last line says them ("2 passed, 1 skipped")."""
        words = []
        for category in ORDER:
            n = self.counts[category]
            if n:
                name = "errors" if category == "error" and n > 1 else category
                words.append(f"{n:,} {name}")
        return ", ".join(words)

    def line(self, now: float) -> str:
        if self.slow:
            return (
                f"fast suite: {self.said()} not marked slow, in {self.own:.1f} s of their own"
                f" (added up), {self.cpu:.1f} s CPU"
            )
        wall = now - self.started
        return f"fast suite: {self.said()} in {wall:.1f} s wall, {self.cpu:.1f} s CPU"


SPENT = pytest.StashKey[Spent]()


def cpu_seconds() -> float:
    """This process's CPU time and that of the children it has waited for."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def pytest_configure(config: pytest.Config) -> None:
    config.stash[SPENT] = Spent(started=time.perf_counter())
    if not hasattr(config, "workerinput"):  # the controller, or a run without xdist
        config.pluginmanager.register(Counting(config), "asyncsports-timing-counts")


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    # Where pytest's own count of the run's time starts.
    session.config.stash[SPENT].started = time.perf_counter()


class Counting:
    """Each test report, counted by pytest's category where the terminal counts it."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        spent = self.config.stash[SPENT]
        if "slow" in report.keywords:
            spent.slow = True
            return
        spent.ran = True
        status = self.config.hook.pytest_report_teststatus(report=report, config=self.config)
        category = status[0] if status else ""
        if category:
            spent.counts[category] += 1

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        # A module skipped as it is collected (importorskip) counts as one skipped test in
        # pytest's line, a collection error as one error: the same here (xdist's controller
        # is handed each once).
        spent = self.config.stash[SPENT]
        if report.failed:
            spent.counts["error"] += 1
        elif report.skipped:
            spent.counts["skipped"] += 1


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    out = getattr(session.config, "workeroutput", None)
    if out is not None:  # an xdist worker: its share goes to the controller
        spent = session.config.stash[SPENT]
        out["fast_suite"] = (spent.own, spent.cpu)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """xdist's controller, as a worker ends: add its share."""
    share = getattr(node, "workeroutput", {}).get("fast_suite")
    if share is not None:
        spent = node.config.stash[SPENT]
        spent.own += share[0]
        spent.cpu += share[1]
        spent.workers += 1


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    wall, cpu = time.perf_counter(), cpu_seconds()
    try:
        return (yield)
    finally:
        if item.get_closest_marker("slow") is None:
            spent = item.config.stash[SPENT]
            spent.own += time.perf_counter() - wall
            spent.cpu += cpu_seconds() - cpu


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    spent = terminalreporter.config.stash.get(SPENT, None)
    if spent is not None and spent.ran:
        now = time.perf_counter()
        terminalreporter.write_line(spent.line(now))
        if spent.workers:
            elapsed = now - spent.started
            terminalreporter.write_line(f"the run: {elapsed:.1f} s wall on {spent.workers} workers")
