"""Statistics: the aggregated statistics packet of an ended fixture."""

from __future__ import annotations

import uuid

from asyncsports import _request as q
from asyncsports._request import Request, Sport
from asyncsports.models import Statistics
from asyncsports.resources._base import Resource


def get_request(sport: Sport | str, fixture_id: uuid.UUID | str) -> Request:
    """The statistics packet of one fixture."""
    return Request(
        f"{q.sport_path(sport)}/fixtures/{q.uuid_id('fixture_id', fixture_id)}/statistics"
    )


class StatisticsResource(Resource):
    """``client.statistics``: per-fixture statistics packets."""

    async def get(self, sport: Sport | str, fixture_id: uuid.UUID | str) -> Statistics:
        """The statistics packet of a fixture (the service has it once the fixture ended)."""
        packet: Statistics = await self._one(get_request(sport, fixture_id), Statistics)
        return packet
