"""Squads: the players registered to a team in a season."""

from __future__ import annotations

import uuid
from typing import Literal, overload

from asyncsports import _request as q
from asyncsports._request import Request, Sport
from asyncsports.models import Squad
from asyncsports.paging import AsyncList, ResumeToken
from asyncsports.raw import RawRecord
from asyncsports.resources._base import Resource


def list_request(
    sport: Sport | str, season_id: uuid.UUID | str | None, team_id: uuid.UUID | str | None
) -> Request:
    """The squads of a season, or of a team (exactly one of the two)."""
    name, value = q.exactly_one(season_id=season_id, team_id=team_id)
    base = q.sport_path(sport)
    if name == "season_id":
        return Request(f"{base}/seasons/{q.uuid_id(name, value)}/squads")
    return Request(f"{base}/squads/{q.uuid_id(name, value)}")


class SquadsResource(Resource):
    """``client.squads``: squads per season or per team."""

    @overload
    def list(
        self,
        sport: Sport | str,
        *,
        season_id: uuid.UUID | str | None = None,
        team_id: uuid.UUID | str | None = None,
        resume: ResumeToken | str | None = None,
        raw: Literal[False] = False,
    ) -> AsyncList[Squad]: ...
    @overload
    def list(
        self,
        sport: Sport | str,
        *,
        season_id: uuid.UUID | str | None = None,
        team_id: uuid.UUID | str | None = None,
        resume: ResumeToken | str | None = None,
        raw: Literal[True],
    ) -> AsyncList[RawRecord[Squad]]: ...
    def list(
        self,
        sport: Sport | str,
        *,
        season_id: uuid.UUID | str | None = None,
        team_id: uuid.UUID | str | None = None,
        resume: ResumeToken | str | None = None,
        raw: bool = False,
    ) -> AsyncList[Squad] | AsyncList[RawRecord[Squad]]:
        """Squad records of a season or of a team: pass exactly one of the two ids.

        ``raw=True``: each as a ``RawRecord(squad, json)``.
        """
        req = list_request(sport, season_id, team_id)
        return self._stream_list(req, Squad, resume=resume, raw=raw)
