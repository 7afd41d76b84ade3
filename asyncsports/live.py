"""Live feeds over the service's websockets: ``client.live``.

::

    async with Client(base_url, token=..., live_url="wss://dde-streams.data.imgarena.com") as c:
        async with c.live.actions("basketball", fixture_id) as feed:
            async for action in feed:          # the same Action records as actions.list
                ...
        # feed.position: records delivered; start_position=feed.position carries on
        async for action, json in c.with_json.live.actions("basketball", fixture_id):
            ...                                # json: the message's bytes, as sent

A :class:`Feed` reconnects by itself (backoff with jitter, through the client's retry
policy) and resumes at ``startPosition`` = records delivered, so each record comes once and
in order whatever the server does; it ends after the fixture's finishing record (or when
the service says the fixture is over with every record delivered), else it raises. Many
feeds merge into one iterator of ``(fixture_id, record)`` with :func:`merge`. The wire
rules the vendor leaves open are in docs/wire.md ("Live feeds").
"""

from __future__ import annotations

import functools
import logging
import math
import uuid
from collections.abc import AsyncGenerator, Iterable, Mapping
from typing import Any, Generic, Literal, Self, TypeVar, Unpack

from asyncsports._http import request as q
from asyncsports._http.live import Following, Progress, follow
from asyncsports._http.request import Request, RequestOptions
from asyncsports._http.sports import Sport, sport_path
from asyncsports._iter.merge import Merged, merge
from asyncsports._wire.live import FeedKind, FeedState
from asyncsports.errors import AsyncSportsError, AuthenticationError, NotFoundError
from asyncsports.models import Action, Statistics
from asyncsports.resources.actions import ActionsResource
from asyncsports.resources.fixtures import FixturesResource

__all__ = ["DEFAULT_IDLE_TIMEOUT", "Feed", "LiveResource", "Merged", "merge"]

R = TypeVar("R")  # Action, Statistics, or either as a RawRecord (client.with_json.live)

log = logging.getLogger("asyncsports")

DEFAULT_IDLE_TIMEOUT = 60.0
"""Seconds without any message (record or heartbeat) before a connection counts as stalled:
three of the 20 s heartbeat intervals the vendor documents."""


def feed_request(
    kind: FeedKind,
    sport: Sport | str,
    fixture_id: uuid.UUID | str,
    speed: str | None,
    media: bool,
) -> Request:
    """The feed's path and fixed query (``startPosition`` is added per connection)."""
    if not isinstance(media, bool):
        raise TypeError(f"media: expected a bool, got {type(media).__name__}")
    fid = q.uuid_id("fixture_id", fixture_id)
    prefix = "/media" if media else ""
    params: tuple[q.Param, ...] = ()
    if speed is not None:
        params = (("speed", q.open_choice("speed", speed, ("fast", "normal"))),)
    path = f"{prefix}{sport_path(sport)}/fixtures/{fid}/{kind}"
    return Request(path, params, route=prefix + "/{sport}/fixtures/{fixtureId}/" + kind)


def _idle(value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"idle_timeout: expected a number of seconds, got {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"idle_timeout: expected a finite number of seconds > 0, got {value!r}")
    return float(value)


class Feed(Generic[R]):
    """One live feed: an async iterator of records, an async context manager.

    Nothing is sent until it is iterated. ``position`` counts the records handed out so far
    (from the start of the fixture's list): a new feed given it as ``start_position``
    carries on with the next record. Iterate it once; ``async with`` (or :meth:`aclose`)
    closes the socket when the block ends, even after ``break``. A :class:`DecodeError`
    (a malformed packet) ends the feed with ``position`` just before that packet:
    ``start_position=feed.position + 1`` skips it.
    """

    __slots__ = (
        "_gen",
        "_progress",
        "_req",
        "_session",
        "_state",
        "fixture_id",
        "idle_timeout",
        "sport",
    )

    def __init__(
        self,
        session: Any,
        req: Request,
        kind: FeedKind,
        fixture_id: uuid.UUID,
        start_position: int,
        idle_timeout: float,
        raw: bool = False,
        sport: Sport | str = "",
    ) -> None:
        self._session = session
        self._req = req
        self._state = FeedState(start_position, kind=kind, raw=raw)
        self._progress = Progress()
        self._gen: AsyncGenerator[Any, None] | None = None
        self.fixture_id = fixture_id
        """The fixture followed."""
        self.idle_timeout = idle_timeout
        """Seconds without any message before a connection counts as stalled."""
        self.sport = sport
        """The fixture's sport, as given (for the service's word on the fixture)."""

    @property
    def kind(self) -> FeedKind:
        """``"actions"`` or ``"statistics"``."""
        return self._state.kind

    @property
    def position(self) -> int:
        """Records handed out so far, counted from the fixture's start: a resume point."""
        return self._state.position - self._progress.pending

    @property
    def finished(self) -> bool:
        """Whether the fixture's finishing record was received."""
        return self._state.finished

    @property
    def ended(self) -> str | None:
        """Why the feed ended without the finishing record (the service said the fixture is
        over with every record delivered, e.g. postponed), else None."""
        return self._progress.ended

    @property
    def connections(self) -> int:
        """Websocket connections opened so far."""
        return self._state.connections

    def __aiter__(self) -> AsyncGenerator[R, None]:
        gen: Any = self._gen
        if gen is None:
            gen = self._gen = follow(self._follow())
        it: AsyncGenerator[R, None] = gen
        return it

    def _follow(self) -> Following:
        """What :func:`follow` (and the merge's ``push``) take to follow this feed."""
        session = self._session
        return Following(
            session,
            self._req,
            self._state,
            self.idle_timeout,
            self._progress,
            # Not bound methods: the generator would hold the feed, and a feed dropped
            # after a bare break would wait for the cycle collector to close its socket.
            functools.partial(_ask, session, self.sport, self.fixture_id, self.kind),
            functools.partial(_warned, session, self.sport, self.fixture_id),
        )

    async def __anext__(self) -> R:
        record: R = await self.__aiter__().__anext__()
        return record

    async def aclose(self) -> None:
        """Close the socket (if open). Safe to call twice; the feed is done after it."""
        if self._gen is None:
            self._gen = _done()
        await self._gen.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<Feed {self.kind} {self.fixture_id} position={self.position}>"


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
        log.warning("live feed %s: the server warned (%s); asking the service failed: %s",
                    fixture_id, text, exc)  # fmt: skip
        return
    log.warning("live feed %s: the server warned: %s", fixture_id, text)


async def _done() -> AsyncGenerator[Any, None]:
    return
    yield  # pragma: no cover - makes this an async generator


class LiveResource:
    """``client.live``: the actions and statistics websockets (needs ``live_url``)."""

    _raw = False
    """Whether records come as RawRecord pairs: only on the twin of ``with_json``."""

    def __init__(self, session: Any) -> None:
        self._session = session

    def _feed(
        self,
        kind: FeedKind,
        sport: Sport | str,
        fixture_id: uuid.UUID | str,
        start_position: int,
        speed: str | None,
        media: bool,
        idle_timeout: float,
        extra: Mapping[str, object],
    ) -> Any:
        if not self._session.settings.live_url:
            raise ValueError(
                "live_url: the live feeds need the streams host: "
                "Client(..., live_url='wss://dde-streams.data.imgarena.com')"
            )
        req = q.options(feed_request(kind, sport, fixture_id, speed, media), extra)
        q.integer("start_position", start_position, low=0)
        fid = uuid.UUID(q.uuid_id("fixture_id", fixture_id))
        idle = _idle(idle_timeout)
        return Feed(self._session, req, kind, fid, start_position, idle, self._raw, sport)

    def actions(
        self,
        sport: Sport | str,
        fixture_id: uuid.UUID | str,
        *,
        start_position: int = 0,
        speed: Literal["fast", "normal"] | str | None = None,
        media: bool = False,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        **extra: Unpack[RequestOptions],
    ) -> Feed[Action]:
        """The live actions of a fixture: the records of ``actions.list``, as they happen.

        ``start_position`` skips that many records from the fixture's start (a feed's
        ``position`` resumes it); ``speed`` (``fast``/``normal``) replays a fixture that is
        over; ``media`` uses the media customers' path. ``idle_timeout``: seconds without
        any message (heartbeats count, the server's pings do not) before reconnecting.
        ``extra_query``, ``extra_headers``: as every method's
        (:class:`~asyncsports.RequestOptions`), sent with each connection's handshake.
        Through ``client.with_json.live`` each record is a ``RawRecord(action, json)``,
        ``json`` the bytes of the message that carried it, as sent (decimals quoted,
        ``fixtureSeqNum`` as the socket numbers it).
        """
        feed: Feed[Action] = self._feed(
            "actions", sport, fixture_id, start_position, speed, media, idle_timeout, extra
        )
        return feed

    def statistics(
        self,
        sport: Sport | str,
        fixture_id: uuid.UUID | str,
        *,
        start_position: int = 0,
        speed: Literal["fast", "normal"] | str | None = None,
        media: bool = False,
        idle_timeout: float = DEFAULT_IDLE_TIMEOUT,
        **extra: Unpack[RequestOptions],
    ) -> Feed[Statistics]:
        """The live statistics of a fixture: packets like ``statistics.get``'s, as they change.

        The arguments are those of :meth:`actions`; ``start_position`` counts packets.
        """
        feed: Feed[Statistics] = self._feed(
            "statistics", sport, fixture_id, start_position, speed, media, idle_timeout, extra
        )
        return feed

    def merge(self, feeds: Iterable[Feed[Any]] = (), *, per_feed: int = 64) -> Merged:
        """Many feeds as one iterator of ``(fixture_id, record)``: see :func:`merge`."""
        return Merged(feeds, per_feed=per_feed)
