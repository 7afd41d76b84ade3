"""The live tests' fixtures: the way a test reads its feeds."""

from __future__ import annotations

import live_helpers
import pytest


@pytest.fixture
def way(request: pytest.FixtureRequest) -> str:
    """How a test reads its feeds with ``live_helpers.records``: ``feed`` (iterated) or
    ``merged`` (pushed), a parameter of ``each_dialect(metafunc, ways=True)``."""
    return str(getattr(request, "param", "feed"))


@pytest.fixture(autouse=True)
def _way(way: str) -> None:
    live_helpers.WAY[0] = way
