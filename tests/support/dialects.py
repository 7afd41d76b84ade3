"""Tests run once per live dialect, through the plugin's ``sports_emulator`` fixture."""

from __future__ import annotations

from typing import Any

import pytest

from asyncsports.emulator._live import DIALECTS


def each_dialect(metafunc: pytest.Metafunc, **kw: Any) -> None:
    """Call from a module's ``pytest_generate_tests``: each test that uses
    ``sports_emulator`` runs once per live dialect, on ``Emulator(live_dialect=D, **kw)``
    (an ``emulator`` marker on each parameter; the fixture ignores the value)."""
    if "sports_emulator" in metafunc.fixturenames:
        params = [pytest.param(d, id=d, marks=pytest.mark.emulator(live_dialect=d, **kw))
                  for d in DIALECTS]  # fmt: skip
        metafunc.parametrize("sports_emulator", params, indirect=True)
