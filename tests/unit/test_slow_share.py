"""CI's split of the slow tests between its legs (tests/support/share.py): each slow test in
exactly one share, whole modules at a time, every fast test in each."""

from __future__ import annotations

import pytest
from support import share

CONFTEST = """
from support import share


def pytest_collection_modifyitems(config, items):
    share.split(config, items)
"""
MODULE = """
import pytest


def test_fast():
    pass


@pytest.mark.slow
def test_slow():
    pass


@pytest.mark.slow
def test_slow_too():
    pass
"""
INI = "[pytest]\nmarkers =\n    slow: slow\n"
NAMES = [f"test_m{i}" for i in range(8)]


def collected(pytester: pytest.Pytester) -> set[str]:
    result = pytester.runpytest_inprocess("--collect-only", "-q", "-p", "no:randomly")
    return {line for line in result.outlines if "::" in line}


def test_each_slow_test_runs_in_one_share_and_every_fast_test_in_each(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini(INI)
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(**dict.fromkeys(NAMES, MODULE))
    monkeypatch.delenv(share.VARIABLE, raising=False)
    everything = collected(pytester)
    assert len(everything) == 3 * len(NAMES)
    shares = []
    for k in range(2):
        monkeypatch.setenv(share.VARIABLE, f"{k}/2")
        shares.append(collected(pytester))
    fast = {t for t in everything if t.endswith("::test_fast")}
    slow = [s - fast for s in shares]
    assert all(fast <= s for s in shares)
    assert slow[0] | slow[1] == everything - fast and not slow[0] & slow[1]
    assert slow[0] and slow[1]  # 8 modules: both shares hold some
    for s in slow:  # a module's slow tests stay together
        modules = {t.split("::")[0] for t in s}
        assert len(s) == 2 * len(modules)


@pytest.mark.parametrize("text", ["2/2", "1", "a/2", "-1/2", "0/0"])
def test_a_share_not_k_of_n_is_refused(text: str) -> None:
    with pytest.raises(pytest.UsageError, match=share.VARIABLE):
        share.parse(text)
