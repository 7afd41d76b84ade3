"""Statistics: the aggregated statistics packet of an ended fixture."""

from __future__ import annotations

import uuid
from typing import Literal, Unpack, overload

from asyncsports import _request as q
from asyncsports._request import Request, RequestOptions, Sport
from asyncsports.models import Statistics
from asyncsports.raw import RawRecord
from asyncsports.resources._base import Resource


def get_request(sport: Sport | str, fixture_id: uuid.UUID | str) -> Request:
    """The statistics packet of one fixture (the spec types this ``fixtureId`` a string)."""
    return Request(
        f"{q.sport_path(sport)}/fixtures/{q.string_id('fixture_id', fixture_id)}/statistics"
    )


class StatisticsResource(Resource):
    """``client.statistics``: per-fixture statistics packets."""

    @overload
    async def get(
        self,
        sport: Sport | str,
        fixture_id: uuid.UUID | str,
        *,
        raw: Literal[False] = False,
        **extra: Unpack[RequestOptions],
    ) -> Statistics: ...
    @overload
    async def get(
        self,
        sport: Sport | str,
        fixture_id: uuid.UUID | str,
        *,
        raw: Literal[True],
        **extra: Unpack[RequestOptions],
    ) -> RawRecord[Statistics]: ...
    async def get(
        self,
        sport: Sport | str,
        fixture_id: uuid.UUID | str,
        *,
        raw: bool = False,
        **extra: Unpack[RequestOptions],
    ) -> Statistics | RawRecord[Statistics]:
        """The statistics packet of a fixture (the service has it once the fixture ended).

        ``raw=True``: a ``RawRecord(packet, json)``, ``json`` the body as sent.
        ``extra_query``, ``extra_headers``: see :class:`~asyncsports.RequestOptions`.
        """
        req = q.options(get_request(sport, fixture_id), extra)
        if raw:
            return await self._one_raw(req, Statistics)
        packet: Statistics = await self._one(req, Statistics)
        return packet
