"""A failed test's teardown that hangs ends at pytest-timeout's bound, and the run goes on
(tests/support/teardown_timeout.py): the failure is reported and pytest exits."""

from __future__ import annotations

import os
import sys
import time

import pytest

SUITE = """
import asyncio
import time

import pytest


@pytest.fixture
def stuck():
    yield
    time.sleep(60)  # a process that will not stop


@pytest.fixture
async def stuck_loop():
    yield
    await asyncio.Event().wait()  # a server that will not close


def test_fails(stuck):
    assert False, "the test's own failure"


async def test_fails_on_a_loop(stuck_loop):
    assert False, "the test's own failure"


def test_after():
    pass
"""
INI = "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\ntimeout = 2\n"
PLUGINS = ("-p", "timeout", "-p", "asyncio", "-p", "support.teardown_timeout")


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """Two failing tests whose teardowns hang, and one after them; the plugins needed only
    (the installed ones would take seconds to load)."""
    pytester.makeini(INI)
    pytester.makepyfile(test_suite=SUITE)
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    tests = os.path.dirname(os.path.dirname(__file__))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([tests, *sys.path]))
    return pytester


@pytest.mark.slow
def test_a_failed_test_s_hung_teardown_ends_at_the_timeout(suite: pytest.Pytester) -> None:
    # A process of its own: pytest-timeout's SIGALRM is this run's too.
    t0 = time.monotonic()
    result = suite.runpytest_subprocess(*PLUGINS, timeout=30)
    took = time.monotonic() - t0
    result.assert_outcomes(failed=2, passed=1, errors=2)
    # "Timeout (>2.0s) from pytest-timeout" (2.4), "Timeout >2.0s" (2.3): a teardown's error
    result.stdout.re_match_lines([r"ERROR test_suite.py::test_fails - Failed: Timeout \(?>2.0s"])
    assert took < 30, took  # two teardowns of 2 s, not two of 60 s or for ever
