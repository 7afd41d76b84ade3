"""Actions: the timeline of one fixture."""

from __future__ import annotations

import uuid

from asyncsports import _request as q
from asyncsports._request import Request, Sport
from asyncsports.models import Action
from asyncsports.paging import AsyncList, ResumeToken
from asyncsports.resources._base import Resource


def list_request(sport: Sport | str, fixture_id: uuid.UUID | str) -> Request:
    """The action timeline of one fixture."""
    return Request(f"{q.sport_path(sport)}/fixtures/{q.segment('fixture_id', fixture_id)}/actions")


class Actions(Resource):
    """``client.actions``: fixture action timelines."""

    def list(
        self,
        sport: Sport | str,
        fixture_id: uuid.UUID | str,
        *,
        resume: ResumeToken | str | None = None,
    ) -> AsyncList[Action]:
        """Every action of a fixture so far, in timeline order."""
        return self._body_list(list_request(sport, fixture_id), list[Action], resume=resume)
