"""Squads: the players registered to a team in a season."""

from __future__ import annotations

import uuid
from typing import Unpack

from asyncsports._http import request as arg
from asyncsports._http.request import Request, RequestOptions
from asyncsports._http.sports import Sport, sport_path
from asyncsports.models import Squad
from asyncsports.paging import AsyncList, ResumeToken
from asyncsports.resources._base import Resource, traced


def list_request(
    sport: Sport | str, season_id: uuid.UUID | str | None, team_id: uuid.UUID | str | None
) -> Request:
    """The squads of a season, or of a team (exactly one of the two).

    The spec types ``seasonId`` a string identifier (any one path segment) and ``teamId``
    a UUID.
    """
    name, value = arg.exactly_one(season_id=season_id, team_id=team_id)
    base = sport_path(sport)
    if name == "season_id":
        path = f"{base}/seasons/{arg.string_id(name, value)}/squads"
        return Request(path, route="/{sport}/seasons/{seasonId}/squads")
    return Request(f"{base}/squads/{arg.uuid_id(name, value)}", route="/{sport}/squads/{teamId}")


class SquadsResource(Resource):
    """``client.squads``: squads per season or per team."""

    @traced
    def list(
        self,
        sport: Sport | str,
        *,
        season_id: uuid.UUID | str | None = None,
        team_id: uuid.UUID | str | None = None,
        resume: ResumeToken | str | None = None,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[Squad]:
        """Squad records of a season or of a team: pass exactly one of the two ids.

        ``season_id`` is any id the service gives (the spec calls it a string identifier),
        ``team_id`` a UUID.
        ``extra_query``, ``extra_headers``: see :class:`~asyncsports.RequestOptions`.
        """
        req = arg.options(list_request(sport, season_id, team_id), extra)
        return self._stream_list(req, Squad, resume=resume)
