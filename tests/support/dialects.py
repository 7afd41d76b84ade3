"""Tests run once per live dialect, through the plugin's ``sports_emulator`` fixture."""

from __future__ import annotations

from typing import Any

import pytest

from asyncsports.emulator._live import DIALECTS


def each_dialect(metafunc: pytest.Metafunc, ways: bool = False, **kw: Any) -> None:
    """Call from a module's ``pytest_generate_tests``: each test that uses
    ``sports_emulator`` runs once per live dialect, on ``Emulator(live_dialect=D, **kw)``
    (an ``emulator`` marker on each parameter; the fixture ignores the value).

    ``ways``: and once per way of reading a feed, the module's fixture ``way`` (``"feed"``:
    iterated; ``"merged"``: through a merge, pushed by the transport); every dialect but
    the emulator's own is then marked slow (a fault suite's shapes are the feed state's
    concern, which the dialect tests and the rest of the live tests cover fast)."""
    if "sports_emulator" not in metafunc.fixturenames:
        return
    if not ways:
        params = [
            pytest.param(d, id=d, marks=pytest.mark.emulator(live_dialect=d, **kw))
            for d in DIALECTS
        ]
        metafunc.parametrize("sports_emulator", params, indirect=True)
        return
    pairs = []
    for way in ("feed", "merged"):
        for d in DIALECTS:
            marks = [pytest.mark.emulator(live_dialect=d, **kw)]
            if d != DIALECTS[0]:
                marks.append(pytest.mark.slow)
            pairs.append(pytest.param(d, way, id=f"{d}-{way}", marks=marks))
    metafunc.parametrize(("sports_emulator", "way"), pairs, indirect=True)
