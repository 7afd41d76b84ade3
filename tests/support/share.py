"""CI's split of the slow tests between its two legs (.ci/run).

``ASYNCSPORTS_SLOW_SHARE=K/N`` keeps, of the tests marked ``slow``, those of the test
modules whose path (relative to the tests' root, ``/``-separated) hashes to ``K``
(CRC-32 modulo ``N``), and deselects the others; every test not marked slow stays. Each
leg runs the whole fast suite and its share of the slow set, so together they run every
test once on one of the two Pythons, in about half the time of running all of it on both.
A module is never split: its module-scoped fixtures start once. Unset, all tests run.
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import pytest

VARIABLE = "ASYNCSPORTS_SLOW_SHARE"


def parse(text: str) -> tuple[int, int]:
    """``"K/N"`` as ``(K, N)``, with ``0 <= K < N``; a :class:`pytest.UsageError` says why not."""
    k, _, n = text.partition("/")
    try:
        share, shares = int(k), int(n)
    except ValueError:
        share = shares = -1
    if not 0 <= share < shares:
        raise pytest.UsageError(f"{VARIABLE}={text!r}: want K/N with 0 <= K < N, as 0/2")
    return share, shares


def module_share(path: str, shares: int) -> int:
    """The share of the test module at ``path`` (relative to the tests' root)."""
    return zlib.crc32(path.encode()) % shares


def split(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the slow tests outside this run's share (``items`` in place)."""
    text = os.environ.get(VARIABLE)
    if not text:
        return
    share, shares = parse(text)
    root = Path(config.rootpath)
    kept, dropped = [], []
    for item in items:
        path = item.path.relative_to(root).as_posix()
        slow = item.get_closest_marker("slow") is not None
        (dropped if slow and module_share(path, shares) != share else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def header() -> str | None:
    """The line pytest's header gives the share, if one is set."""
    text = os.environ.get(VARIABLE)
    if not text:
        return None
    share, shares = parse(text)
    return f"slow tests: share {share} of {shares} ({VARIABLE}); the others: all"
