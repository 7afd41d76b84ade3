"""Statistics: the aggregated statistics packet of an ended fixture."""

from __future__ import annotations

import uuid
from typing import Unpack

from asyncsports._http import request as arg
from asyncsports._http.request import Request, RequestOptions
from asyncsports._http.sports import Sport, sport_path
from asyncsports.models import Statistics
from asyncsports.resources._base import Body, Resource, traced


def get_request(sport: Sport | str, fixture_id: uuid.UUID | str) -> Request:
    """The statistics packet of one fixture (the spec types this ``fixtureId`` a string)."""
    return Request(
        f"{sport_path(sport)}/fixtures/{arg.string_id('fixture_id', fixture_id)}/statistics",
        route="/{sport}/fixtures/{fixtureId}/statistics",
    )


class StatisticsResource(Resource):
    """``client.statistics``: per-fixture statistics packets."""

    @traced
    async def get(
        self,
        sport: Sport | str,
        fixture_id: uuid.UUID | str,
        **extra: Unpack[RequestOptions],
    ) -> Statistics:
        """The statistics packet of a fixture (the service has it once the fixture ended).

        ``extra_query``, ``extra_headers``: see :class:`~asyncsports.RequestOptions`.
        """
        req = arg.options(get_request(sport, fixture_id), extra)
        return await self._one(req, _PACKET)


_PACKET: Body[Statistics] = Body(Statistics)
