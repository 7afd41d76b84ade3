"""The public surface fixed by issue 10: names, awaiting a listing, no-record answers, live=False."""

from __future__ import annotations

import asyncsports.models
import asyncsports.resources
from asyncsports import Client


def test_resource_classes_share_no_name_with_a_model(client: Client) -> None:
    resources = set(asyncsports.resources.__all__)
    assert resources.isdisjoint(asyncsports.models.__all__)
    assert all(name.endswith("Resource") for name in resources)
    assert type(client.standings).__name__ == "StandingsResource"
    assert type(client.statistics).__name__ == "StatisticsResource"
