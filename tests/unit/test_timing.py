"""The line that ends every run (tests/support/timing.py): the time spent in the tests not
marked slow, so that CI's log of the whole suite shows the quick loop's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

SUITE = """
import time

import pytest


def test_quick() -> None:
    pass


def test_waits() -> None:
    time.sleep(0.2)


def test_skipped() -> None:
    pytest.skip("not here")


@pytest.mark.slow
def test_slow() -> None:
    time.sleep(0.5)
"""
ABSENT = 'import pytest\n\npytest.importorskip("no_such_module_here")\n'
"""A module skipped as it is collected: pytest counts it as one skipped test."""
INI = "[pytest]\nasyncio_default_fixture_loop_scope = function\nmarkers =\n    slow: slow\n"
QUICK = re.compile(r"^fast suite: (.+) in (\d+\.\d) s wall, (\d+\.\d) s CPU$")
MIXED = re.compile(
    r"^fast suite: (.+) not marked slow, in (\d+\.\d) s of their own \(added up\),"
    r" (\d+\.\d) s CPU$"
)
PYTESTS = re.compile(r"^=* ?(.+) in (\d+\.\d+)s(?: \(.*\))? ?=*$")
"""pytest's own last line: its counts and the run's time."""


@pytest.fixture
def tiny(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A suite of four tests, one skipped and one slow, and a module skipped, run with the plugin under test
    alone (the installed plugins would take seconds to load)."""
    pytester.makeini(INI)
    pytester.makepyfile(test_tiny=SUITE, test_absent=ABSENT)
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parents[1]))  # for xdist's workers
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)  # CI's -n 0 needs xdist loaded
    return pytester


def lines(result: pytest.RunResult, line: re.Pattern[str]) -> tuple[tuple[str, ...], str, float]:
    """The plugin's line (its groups), and pytest's counts and time."""
    found = [m for m in map(line.match, result.outlines) if m]
    theirs = [m for m in map(PYTESTS.match, result.outlines) if m]
    assert len(found) == 1 and theirs, result.outlines
    return found[0].groups(), theirs[-1][1], float(theirs[-1][2])


def test_the_quick_loop_ends_with_its_wall_time_and_pytests_counts(
    tiny: pytest.Pytester,
) -> None:
    result = tiny.runpytest("-p", "support.timing", "-m", "not slow")
    (counts, wall, cpu), said, took = lines(result, QUICK)
    assert result.ret == 0 and counts == "2 passed, 2 skipped", result.outlines
    assert said.startswith(counts)  # then ", 1 deselected"
    # The run's wall time, as pytest reports it; the sleep is wall time, not CPU time.
    assert float(wall) >= 0.2 and abs(float(wall) - took) < 0.15 and float(cpu) < float(wall)


def test_under_xdist_the_wall_time_is_the_runs_not_the_workers_added_up(
    tiny: pytest.Pytester,
) -> None:
    tiny.makepyfile(
        test_more="import time\n\n"
        + "".join(f"\ndef test_sleeps_{n}() -> None:\n    time.sleep(0.4)\n\n" for n in range(4))
    )
    args = ("-p", "support.timing", "-p", "xdist.plugin", "-n", "2", "-m", "not slow")
    result = tiny.runpytest_subprocess(*args)
    (counts, wall, _), said, took = lines(result, QUICK)
    assert result.ret == 0 and counts == "6 passed, 2 skipped", result.outlines
    assert said.startswith(counts)
    # The workers' 1.8 s of tests, added up, would exceed the run's own time.
    assert abs(float(wall) - took) < 0.3, (wall, took)
    assert any(re.match(r"^the run: \d+\.\d s wall on 2 workers$", x) for x in result.outlines)


def test_the_counts_are_pytests_with_a_failure(tiny: pytest.Pytester) -> None:
    tiny.makepyfile(test_fails="def test_fails() -> None:\n    assert False\n")
    result = tiny.runpytest("-p", "support.timing", "-m", "not slow")
    (counts, _, _), said, _ = lines(result, QUICK)
    assert result.ret == 1 and counts == "1 failed, 2 passed, 2 skipped"
    assert said.startswith(counts)


def test_beside_slow_tests_the_time_is_their_own_added_up(tiny: pytest.Pytester) -> None:
    result = tiny.runpytest("-p", "support.timing")
    (counts, own, cpu), said, took = lines(result, MIXED)
    # The slow test's half second is not counted: not the run's wall time.
    assert result.ret == 0 and counts == "2 passed, 2 skipped", result.outlines
    assert said.startswith("3 passed, 2 skipped") and 0.2 <= float(own) < 0.5 <= took
    assert float(cpu) < float(own)


def test_a_run_of_slow_tests_alone_prints_no_line(tiny: pytest.Pytester) -> None:
    result = tiny.runpytest("-p", "support.timing", "-m", "slow")
    assert result.ret == 0 and not any("fast suite" in line for line in result.outlines)
