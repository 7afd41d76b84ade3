"""Actions: the timeline of one fixture."""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator
from contextlib import aclosing

from asyncsports import _request as q
from asyncsports._request import Request, Sport
from asyncsports._watch import Change, Tracker
from asyncsports.models import Action
from asyncsports.paging import AsyncList, ResumeToken
from asyncsports.resources._base import Resource


def list_request(sport: Sport | str, fixture_id: uuid.UUID | str) -> Request:
    """The action timeline of one fixture."""
    return Request(f"{q.sport_path(sport)}/fixtures/{q.uuid_id('fixture_id', fixture_id)}/actions")


class ActionsResource(Resource):
    """``client.actions``: fixture action timelines."""

    def list(
        self,
        sport: Sport | str,
        fixture_id: uuid.UUID | str,
        *,
        resume: ResumeToken | str | None = None,
    ) -> AsyncList[Action]:
        """Every action of a fixture so far, in timeline order."""
        return self._stream_list(list_request(sport, fixture_id), Action, resume=resume)

    async def follow(
        self,
        sport: Sport | str,
        fixture_id: uuid.UUID | str,
        *,
        interval: float = 5.0,
        jitter: float = 0.1,
    ) -> AsyncGenerator[Change[Action], None]:
        """Poll a fixture's timeline and yield each action once as it appears.

        Yields ``Change("new", action)`` for an action not seen before and
        ``Change("update", action)`` for a later version of one (say Pending, then
        Confirmed). Ends after the record with ``finished`` true. Polls every
        ``interval`` seconds, spread by ``jitter`` so that many followers drift apart;
        a poll that fails for a passing reason is logged and the next one tried.
        """
        tracker: Tracker[Action] = Tracker(lambda a: a.fixture_action.action_id)
        polls = self._polls(list_request(sport, fixture_id), list[Action], interval, jitter)
        async with aclosing(polls):
            async for actions in polls:
                for change in tracker.seen(actions):
                    yield change
                    if change.record.finished:
                        return
