"""Statistics: the aggregated statistics packet of an ended fixture."""

from __future__ import annotations

import uuid
from typing import Literal, overload

from asyncsports import _request as q
from asyncsports._request import Request, Sport
from asyncsports.models import Statistics
from asyncsports.raw import RawRecord
from asyncsports.resources._base import Resource


def get_request(sport: Sport | str, fixture_id: uuid.UUID | str) -> Request:
    """The statistics packet of one fixture."""
    return Request(
        f"{q.sport_path(sport)}/fixtures/{q.uuid_id('fixture_id', fixture_id)}/statistics"
    )


class StatisticsResource(Resource):
    """``client.statistics``: per-fixture statistics packets."""

    @overload
    async def get(
        self, sport: Sport | str, fixture_id: uuid.UUID | str, *, raw: Literal[False] = False
    ) -> Statistics: ...
    @overload
    async def get(
        self, sport: Sport | str, fixture_id: uuid.UUID | str, *, raw: Literal[True]
    ) -> RawRecord[Statistics]: ...
    async def get(
        self, sport: Sport | str, fixture_id: uuid.UUID | str, *, raw: bool = False
    ) -> Statistics | RawRecord[Statistics]:
        """The statistics packet of a fixture (the service has it once the fixture ended).

        ``raw=True``: a ``RawRecord(packet, json)``, ``json`` the body as sent.
        """
        req = get_request(sport, fixture_id)
        if raw:
            return await self._one_raw(req, Statistics)
        packet: Statistics = await self._one(req, Statistics)
        return packet
