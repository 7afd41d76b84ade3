"""Actions: the timeline of one fixture."""

from __future__ import annotations

import builtins
import uuid
from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from typing import Any, TypeVar, Unpack

from asyncsports._http import request as arg
from asyncsports._http.request import Request, RequestOptions
from asyncsports._http.session import Response, Session
from asyncsports._http.sports import Sport, sport_path
from asyncsports._iter.watch import Change, Tracker
from asyncsports._wire.decoding import FAILURES, Source, body_error, type_name
from asyncsports.jsonstream import ListDecoder
from asyncsports.models import Action
from asyncsports.paging import AsyncList, ResumeToken
from asyncsports.resources._base import Body, Resource, traced

T = TypeVar("T")


def list_request(sport: Sport | str, fixture_id: uuid.UUID | str) -> Request:
    """The action timeline of one fixture (the spec types this ``fixtureId`` a string)."""
    fid = arg.string_id("fixture_id", fixture_id)
    path = f"{sport_path(sport)}/fixtures/{fid}/actions"
    return Request(path, route="/{sport}/fixtures/{fixtureId}/actions")


class ActionsResource(Resource):
    """``client.actions``: fixture action timelines."""

    @traced
    def list(
        self,
        sport: Sport | str,
        fixture_id: uuid.UUID | str,
        *,
        resume: ResumeToken | str | None = None,
        **extra: Unpack[RequestOptions],
    ) -> AsyncList[Action]:
        """Every action of a fixture so far, in timeline order.

        ``extra_query``, ``extra_headers``: see :class:`~asyncsports.RequestOptions`.
        """
        req = arg.options(list_request(sport, fixture_id), extra)
        return self._stream_list(req, Action, resume=resume)

    @traced
    async def follow(
        self,
        sport: Sport | str,
        fixture_id: uuid.UUID | str,
        *,
        interval: float = 5.0,
        jitter: float = 0.1,
        **extra: Unpack[RequestOptions],
    ) -> AsyncGenerator[Change[Action], None]:
        """Poll a fixture's timeline and yield each action once as it appears.

        Yields ``Change("new", action)`` for an action not seen before and
        ``Change("update", action)`` for a later version of one (say Pending, then
        Confirmed). Ends after the record with ``finished`` true. Polls every
        ``interval`` seconds, spread by ``jitter`` so that many followers drift apart;
        a poll that fails for a passing reason is logged and the next one tried.
        ``extra_query``, ``extra_headers``: see :class:`~asyncsports.RequestOptions`.
        """
        value = self._value()
        tracker: Tracker[Any] = Tracker(lambda r: value(r).fixture_action.action_id)
        req = arg.options(list_request(sport, fixture_id), extra)
        polls = self._polls(req, _TIMELINE, _same, interval, jitter)
        async with aclosing(polls):
            async for actions in polls:
                for change in tracker.seen(actions):
                    yield change
                    if value(change.record).finished:
                        return


def _same(body: Sequence[Action]) -> Sequence[Action]:
    return body


_TIMELINE: Body[list[Action]] = Body(list[Action])


async def timeline_rows(
    session: Session, sport: str, fixture_id: str, rows: ListDecoder[T]
) -> builtins.list[T]:
    """A fixture's timeline as ``rows`` decodes it (the backfill's sink rows), read through
    ``session`` (a client's :attr:`~asyncsports.resources.namespaces.Namespaces.session`).

    The body is read whole and decoded in one call, without the element framing of
    :meth:`ActionsResource.list` (the backfill keeps a fixture's rows until they are
    written anyway).
    """

    def parse(resp: Response) -> builtins.list[T]:
        try:
            return rows.decode(resp.body)
        except FAILURES as exc:
            where = Source(type_name(rows.type), resp.url, resp.status)
            raise body_error(where, exc, resp.body) from exc

    return await session.read(list_request(sport, fixture_id), parse)
