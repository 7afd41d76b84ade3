"""The live tests' fixture ``way``: how ``support.live.records`` reads a feed."""

from __future__ import annotations

import pytest
from support.live import WAY


@pytest.fixture
def way(request: pytest.FixtureRequest) -> str:
    """How a test reads its feeds with ``records``: ``feed`` (iterated) or ``merged``
    (pushed), a parameter of ``each_dialect(metafunc, ways=True)``."""
    return str(getattr(request, "param", "feed"))


@pytest.fixture(autouse=True)
def _way(way: str) -> None:
    WAY[0] = way
