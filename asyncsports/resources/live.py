"""``client.live``: the live feeds' resource, which builds a feed's request and checks its
arguments, and what a feed asks the service (:func:`over`); the feed itself is
:class:`~asyncsports._iter.feed.Feed`, both re-exported by :mod:`asyncsports.live`."""

from __future__ import annotations

import functools
import logging
import math
import uuid
from collections.abc import Iterable, Mapping
from typing import Any, Literal, Unpack

from asyncsports._http import request as arg
from asyncsports._http.request import Request, RequestOptions
from asyncsports._http.sports import Sport, sport_path
from asyncsports._iter.feed import Feed
from asyncsports._iter.merge import Merged
from asyncsports._wire.live import FeedKind
from asyncsports.errors import AsyncSportsError, AuthenticationError, NotFoundError
from asyncsports.models import Action, Statistics
from asyncsports.resources._base import Pairable, renamed, traced
from asyncsports.resources.actions import ActionsResource
from asyncsports.resources.fixtures import FixturesResource

__all__ = ["DEFAULT_IDLE_TIMEOUT", "LiveResource"]

log = logging.getLogger("asyncsports")

DEFAULT_IDLE_TIMEOUT = 60.0
"""Seconds without any message (record or heartbeat) before a connection counts as stalled:
three of the 20 s heartbeat intervals the vendor documents."""


def feed_request(
    kind: FeedKind,
    sport: Sport | str,
    fixture_id: uuid.UUID | str,
    replay: str | None,
    media: bool,
) -> Request:
    """The feed's path and fixed query (``startPosition`` is added per connection)."""
    if not isinstance(media, bool):
        raise TypeError(f"media: expected a bool, got {type(media).__name__}")
    fid = arg.uuid_id("fixture_id", fixture_id)
    prefix = "/media" if media else ""
    params: tuple[arg.Param, ...] = ()
    if replay is not None:  # the wire's speed
        params = (("speed", arg.open_choice("replay", replay, ("fast", "normal"))),)
    path = f"{prefix}{sport_path(sport)}/fixtures/{fid}/{kind}"
    return Request(path, params, route=prefix + "/{sport}/fixtures/{fixtureId}/" + kind)


def _idle(value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"idle_timeout: expected a number of seconds, got {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"idle_timeout: expected a finite number of seconds > 0, got {value!r}")
    return float(value)


_OVER = {"completed", "postponed", "cancelled", "canceled", "abandoned"}
_COLLECTION_OVER = {"collectiondropped", "collectioncompleted", "postmatchchecked"}


def _key(text: str | None) -> str:
    return "".join((text or "").split()).lower()


async def over(
    session: Any, sport: Sport | str, fixture_id: uuid.UUID, kind: FeedKind, position: int
) -> tuple[bool, str]:
    """Whether a feed of ``kind`` at ``position`` has every record of a fixture that is over.

    Over: status Completed, Postponed, Cancelled or Abandoned, or collection dropped,
    completed or checked. Then the REST timeline's length: an actions feed is complete at
    that length; a statistics feed only when there is no timeline (the REST API has no
    count of statistics packets, so one with a timeline must deliver its finished packet).
    """
    fixture = await FixturesResource(session).get(sport, fixture_id)
    said = f"fixture status {fixture.status or 'not given'}"
    if fixture.collection_status:
        said += f", collection {fixture.collection_status}"
    if (
        _key(fixture.status) not in _OVER
        and _key(fixture.collection_status) not in _COLLECTION_OVER
    ):
        return False, said + ", not over"
    length = len(await ActionsResource(session).list(sport, fixture_id).collect())
    if kind == "actions":
        if position >= length:
            return True, f"{said}, all {length} records of its timeline delivered"
        return False, f"{said}, {position} of the {length} records of its timeline delivered"
    if length == 0:
        return True, f"{said}, no timeline"
    return False, f"{said}, its finished statistics packet not delivered"


async def _ask(
    session: Any, sport: Sport | str, fixture_id: uuid.UUID, kind: FeedKind, position: int
) -> tuple[bool, str]:
    """:func:`over`, where a failure to ask is no answer (docs/wire.md, "Live feeds: the
    client's connection"); an unknown fixture or a refused token is raised."""
    try:
        return await over(session, sport, fixture_id, kind, position)
    except (NotFoundError, AuthenticationError):
        raise
    except AsyncSportsError as exc:
        # Not confirmed: the connection counts as one that ended, and the feed goes on.
        log.warning("live feed %s: asking the service failed: %s", fixture_id, exc)
        return False, f"the service could not be asked ({exc})"


async def _warned(session: Any, sport: Sport | str, fixture_id: uuid.UUID, text: str) -> None:
    """A server's warning on an open socket: an unknown fixture is a NotFoundError at once
    (asked of the service, not waited out until ``idle_timeout``); else it is logged."""
    try:
        await FixturesResource(session).get(sport, fixture_id)
    except NotFoundError as exc:
        exc.add_note(f"the live feed's server warned: {text}")
        raise
    except AsyncSportsError as exc:
        log.warning(
            "live feed %s: the server warned (%s); asking the service failed: %s",
            fixture_id,
            text,
            exc,
        )
        return
    log.warning("live feed %s: the server warned: %s", fixture_id, text)


class LiveResource(Pairable):
    """``client.live``: the actions and statistics websockets (needs ``live_url``)."""

    def __init__(self, session: Any) -> None:
        self._session = session

    def _feed(
        self,
        kind: FeedKind,
        sport: Sport | str,
        fixture_id: uuid.UUID | str,
        start_position: int,
        replay: str | None,
        media: bool,
        idle_timeout: float,
        extra: Mapping[str, object],
    ) -> Any:
        if not self._session.settings.live_url:
            raise ValueError(
                "live_url: the live feeds need the streams host: "
                "Client(..., live_url='wss://dde-streams.data.srarena.io')"
            )
        req = arg.options(feed_request(kind, sport, fixture_id, replay, media), extra)
        arg.integer("start_position", start_position, low=0)
        fid = uuid.UUID(arg.uuid_id("fixture_id", fixture_id))
        idle = _idle(idle_timeout)
        session = self._session
        # Module functions, not bound methods: what the feed follows holds no resource.
        asks = functools.partial(_ask, session, sport, fid, kind)
        warned = functools.partial(_warned, session, sport, fid)
        return Feed(
            session, req, kind, fid, start_position, idle, asks, warned, raw=self._raw, sport=sport
        )

    @traced
    def actions(
        self,
        sport: Sport | str,
        fixture_id: uuid.UUID | str,
        *,
        start_position: int = 0,
        replay: Literal["fast", "normal"] | str | None = None,
        media: bool = False,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        speed: Literal["fast", "normal"] | str | None = None,
        **extra: Unpack[RequestOptions],
    ) -> Feed[Action]:
        """The live actions of a fixture: the records of ``actions.list``, as they happen.

        ``start_position`` skips that many records from the fixture's start (a feed's
        ``position`` resumes it); ``replay`` (``fast``/``normal``, the wire's ``speed``;
        ``speed=`` is its deprecated old name) replays a fixture that is over; ``media``
        uses the media customers' path. ``idle_timeout``: seconds without any message (heartbeats count, the server's pings do not) before reconnecting.
        ``extra_query``, ``extra_headers``: as every method's
        (:class:`~asyncsports.RequestOptions`), sent with each connection's handshake.
        Through ``client.with_json.live`` each record is a ``RawRecord(action, json)``,
        ``json`` the bytes of the message that carried it, as sent (decimals quoted,
        ``fixtureSeqNum`` as the socket numbers it).
        """
        replay = renamed("replay", replay, "speed", speed)
        feed: Feed[Action] = self._feed(
            "actions", sport, fixture_id, start_position, replay, media, idle_timeout, extra
        )
        return feed

    @traced
    def statistics(
        self,
        sport: Sport | str,
        fixture_id: uuid.UUID | str,
        *,
        start_position: int = 0,
        replay: Literal["fast", "normal"] | str | None = None,
        media: bool = False,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        speed: Literal["fast", "normal"] | str | None = None,
        **extra: Unpack[RequestOptions],
    ) -> Feed[Statistics]:
        """The live statistics of a fixture: packets like ``statistics.get``'s, as they change.

        The arguments are those of :meth:`actions`; ``start_position`` counts packets.
        """
        replay = renamed("replay", replay, "speed", speed)
        feed: Feed[Statistics] = self._feed(
            "statistics", sport, fixture_id, start_position, replay, media, idle_timeout, extra
        )
        return feed

    def merge(self, feeds: Iterable[Feed[Any]] = (), *, per_feed: int = 64) -> Merged:
        """Many feeds as one iterator of ``(fixture_id, record)``: see :func:`merge`."""
        return Merged(feeds, per_feed=per_feed)
