"""Standings: aggregated team standings of a season or a stage."""

from __future__ import annotations

import uuid
from typing import Unpack

from asyncsports._http import request as arg
from asyncsports._http.request import Request, RequestOptions
from asyncsports._http.sports import Sport, sport_path
from asyncsports.models import Standings
from asyncsports.resources._base import Body, Resource, traced


def get_request(
    sport: Sport | str, season_id: uuid.UUID | str | None, stage_id: uuid.UUID | str | None
) -> Request:
    """The standings of a season or of a stage (exactly one of the two).

    The spec types both ids string identifiers: any one path segment.
    """
    name, value = arg.exactly_one(season_id=season_id, stage_id=stage_id)
    kind = "seasons" if name == "season_id" else "stages"
    path = f"{sport_path(sport)}/{kind}/{arg.string_id(name, value)}/standings"
    return Request(path, route=f"/{{sport}}/{kind}/{{{name[:-3]}Id}}/standings")


class StandingsResource(Resource):
    """``client.standings``: team standings."""

    @traced
    async def get(
        self,
        sport: Sport | str,
        *,
        season_id: uuid.UUID | str | None = None,
        stage_id: uuid.UUID | str | None = None,
        **extra: Unpack[RequestOptions],
    ) -> list[Standings]:
        """The standings of a season or of a stage as a LIST of packets, one per table.

        Pass exactly one of the two ids. The service keeps one standings table per group
        (and per stage), so it answers with an array of packets, each naming its
        ``stage`` and ``group``; a season without groups gives a list of one. The name
        ``get`` is kept (it is a fixed public name): it gets the standings, which are
        several packets. A body holding one packet object is returned as a list of one.
        The ids are any the
        service gives (the spec calls them string identifiers). ``extra_query``,
        ``extra_headers``: see :class:`~asyncsports.RequestOptions`.
        """
        req = arg.options(get_request(sport, season_id, stage_id), extra)
        return list(await self._records(req, _PACKETS, _as_list))


_PACKETS: Body[list[Standings] | Standings] = Body(list[Standings] | Standings)


def _as_list(body: list[Standings] | Standings) -> list[Standings]:
    return body if isinstance(body, list) else [body]
