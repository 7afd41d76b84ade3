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


@pytest.mark.slow
def test_slow() -> None:
    time.sleep(0.5)
"""
INI = "[pytest]\nasyncio_default_fixture_loop_scope = function\nmarkers =\n    slow: slow\n"
LINE = re.compile(r"^fast suite: (\d+\.\d) s wall, (\d+\.\d) s CPU in (\d+) tests not marked slow$")


@pytest.fixture
def tiny(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A suite of three tests, one of them slow, run with the plugin under test alone (the
    installed plugins would take seconds to load)."""
    pytester.makeini(INI)
    pytester.makepyfile(test_tiny=SUITE)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)  # CI's -n 0 needs xdist loaded
    return pytester


def fast_line(tiny: pytest.Pytester, *args: str) -> tuple[float, float, int]:
    result = tiny.runpytest("-p", "support.timing", *args)
    found = [m for m in map(LINE.match, result.outlines) if m]
    assert result.ret == 0 and len(found) == 1, result.outlines
    wall, cpu, tests = found[0].groups()
    return float(wall), float(cpu), int(tests)


def test_the_run_ends_with_the_time_of_the_tests_not_marked_slow(tiny: pytest.Pytester) -> None:
    wall, cpu, tests = fast_line(tiny)
    # The slow test's half second is not counted; the other test's sleep is wall time,
    # not CPU time.
    assert tests == 2 and 0.2 <= wall < 0.5 and cpu < wall


def test_the_line_is_the_same_when_the_slow_tests_are_deselected(tiny: pytest.Pytester) -> None:
    wall, _, tests = fast_line(tiny, "-m", "not slow")
    assert tests == 2 and 0.2 <= wall < 0.5


def test_a_run_of_slow_tests_alone_prints_no_line(tiny: pytest.Pytester) -> None:
    result = tiny.runpytest("-p", "support.timing", "-m", "slow")
    assert result.ret == 0 and not any("fast suite" in line for line in result.outlines)


def test_under_xdist_the_line_adds_up_the_workers_shares(
    tiny: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The workers are new processes: they find the plugin where this one does.
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parents[1]))
    result = tiny.runpytest_subprocess("-p", "support.timing", "-p", "xdist.plugin", "-n", "2")
    found = [m for m in map(LINE.match, result.outlines) if m]
    assert result.ret == 0 and len(found) == 1, result.outlines
    wall, _, tests = found[0].groups()
    assert int(tests) == 2 and 0.2 <= float(wall) < 0.5
    assert any(
        re.match(r"^the run: \d+\.\d s wall on 2 workers$", line) for line in result.outlines
    )
