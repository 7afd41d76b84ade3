"""A pytest plugin (tests/conftest.py loads it): pytest-timeout's bound holds through the
teardown of a test that failed.

pytest-timeout (2.4.0 and older) cancels its timer as soon as a test fails
(``pytest_exception_interact``, meant for the debugger), so a teardown that then hangs (a
process that will not stop, a server that will not close) is bounded by nothing: the
failure is reported and the run hangs (pytest-dev/pytest-timeout#196, fixed upstream by
removing that hook). Here that one cancel is skipped; the timer still ends with the test's
protocol, and a debugger entered (``pytest_enter_pdb``) still cancels it.
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

_FAILING = pytest.StashKey[bool]()
_DEBUGGING = pytest.StashKey[bool]()


@pytest.hookimpl(hookwrapper=True)
def pytest_exception_interact(node: pytest.Item | pytest.Collector) -> Generator[None, None, None]:
    """Around pytest-timeout's: the cancel it asks for meanwhile is skipped."""
    node.stash[_FAILING] = True
    try:
        yield
    finally:
        node.stash[_FAILING] = False


@pytest.hookimpl(tryfirst=True)
def pytest_enter_pdb(config: pytest.Config, pdb: object) -> None:
    """A debugger entered: every cancel goes through (see :func:`pytest_timeout_cancel_timer`)."""
    config.stash[_DEBUGGING] = True


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # pytest-timeout's hook
def pytest_timeout_cancel_timer(item: pytest.Item) -> bool | None:
    """Skip the cancel that comes of a failure (True: handled); any other goes through."""
    if item.stash.get(_FAILING, False) and not item.config.stash.get(_DEBUGGING, False):
        return True
    return None
