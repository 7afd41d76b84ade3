"""One live feed as an object: :class:`Feed`, re-exported by :mod:`asyncsports.live`.

A feed is the caller's handle on the one connection driver (:mod:`asyncsports._http.live`):
it holds what following the feed takes (:attr:`Feed.following`, also what a merge pushes),
reads it the pull way when iterated, and says where it stands. What it asks the service
(is the fixture over? is a warned fixture unknown?) it is given by its maker, so that this
module imports nothing above the driver.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, Generic, Self, TypeVar

from asyncsports._http.health import Health, HealthEvents
from asyncsports._http.live import Following, Over, Progress, Warn, follow
from asyncsports._http.request import Request
from asyncsports._http.sports import Sport
from asyncsports._wire.live import FeedKind, FeedState
from asyncsports._wire.live.health import HealthState

__all__ = ["Feed"]

R = TypeVar("R")  # Action, Statistics, or either as a RawRecord (client.with_json.live)


class Feed(Generic[R]):
    """One live feed: an async iterator of records, an async context manager.

    Nothing is sent until it is iterated. ``position`` counts the records handed out so far
    (from the start of the fixture's list): a new feed given it as ``start_position``
    carries on with the next record. Iterate it once; ``async with`` (or :meth:`aclose`)
    closes the socket when the block ends, even after ``break``. A :class:`DecodeError`
    (a malformed packet) ends the feed with ``position`` just before that packet:
    ``start_position=feed.position + 1`` skips it.
    """

    __slots__ = ("_gen", "_wrap", "fixture_id", "following", "idle_timeout", "sport")

    def __init__(
        self,
        session: Any,
        req: Request,
        kind: FeedKind,
        fixture_id: uuid.UUID,
        start_position: int,
        idle_timeout: float,
        over: Over,
        warned: Warn,
        *,
        raw: bool = False,
        sport: Sport | str = "",
    ) -> None:
        state = FeedState(start_position, kind=kind, raw=raw)
        health = Health(fixture_id, idle_timeout / 2, None)
        # Made once, holding no reference to the feed: the generator that follows it would
        # hold the feed, and a feed dropped after a bare break would wait for the cycle
        # collector to close its socket.
        self.following = Following(
            session, req, state, idle_timeout, Progress(), over, warned, health
        )
        """What following this feed takes: :func:`~asyncsports._http.live.follow` when it is
        iterated, :func:`~asyncsports._http.live.push` when a merge reads it."""
        self._gen: AsyncGenerator[Any, None] | None = None
        self._wrap: Callable[[AsyncIterator[Any]], AsyncGenerator[Any, None]] | None = None
        self.fixture_id = fixture_id
        """The fixture followed."""
        self.idle_timeout = idle_timeout
        """Seconds without any message before a connection counts as stalled."""
        self.sport = sport
        """The fixture's sport, as given (for the service's word on the fixture)."""

    @property
    def kind(self) -> FeedKind:
        """``"actions"`` or ``"statistics"``."""
        return self.following.state.kind

    @property
    def position(self) -> int:
        """Records handed out so far, counted from the fixture's start: a resume point."""
        following = self.following
        return following.state.position - following.progress.pending

    @property
    def finished(self) -> bool:
        """Whether the fixture's finishing record was received."""
        return self.following.state.finished

    @property
    def ended(self) -> str | None:
        """Why the feed ended without the finishing record (the service said the fixture is
        over with every record delivered, e.g. postponed), else None."""
        return self.following.progress.ended

    @property
    def connections(self) -> int:
        """Websocket connections opened so far."""
        return self.following.state.connections

    def health(self, maxsize: int = 256) -> HealthEvents:
        """The feed's health events from now on: an async iterator of
        :data:`~asyncsports.live.HealthEvent` (connected, lost, reconnecting, resumed,
        delayed, recovered, the vendor's status messages, coverage changes, and last
        ended), beside the records. At most ``maxsize`` wait: a consumer that falls
        behind loses the oldest, counted in ``dropped``. It ends after the feed's
        :class:`~asyncsports.live.Ended`. Call it before reading the feed to miss nothing;
        as many listeners as wanted."""
        events = HealthEvents(maxsize)
        self.following.health.listen(events)
        return events

    @property
    def health_state(self) -> HealthState:
        """The feed's latest health: ``"connecting"``, ``"live"``, ``"delayed"``,
        ``"reconnecting"`` or ``"over"`` (kept whether anyone listens or not)."""
        return self.following.health.state

    @property
    def delayed_after(self) -> float:
        """Seconds without any message (record or heartbeat) after which a listened feed
        is :class:`~asyncsports.live.Delayed` (``"silent"``); default ``idle_timeout / 2``,
        before the stall that reconnects. Settable."""
        return self.following.health.delayed_after

    @delayed_after.setter
    def delayed_after(self, seconds: float) -> None:
        if not seconds > 0:
            raise ValueError(f"delayed_after: must be > 0, got {seconds!r}")
        self.following.health.delayed_after = seconds

    @property
    def lag_after(self) -> float | None:
        """Seconds a record's own timestamp may lag the clock before a listened feed is
        :class:`~asyncsports.live.Delayed` (``"lagging"``); None (the default) does not
        look (the vendor's clock is not ours). Settable; read by each new connection."""
        return self.following.health.lag_after

    @lag_after.setter
    def lag_after(self, seconds: float | None) -> None:
        if seconds is not None and not seconds > 0:
            raise ValueError(f"lag_after: must be > 0 or None, got {seconds!r}")
        self.following.health.lag_after = seconds

    def wrap(self, around: Callable[[AsyncIterator[Any]], AsyncGenerator[Any, None]]) -> None:
        """Read the feed's records through ``around`` when it is iterated (a tracer's span
        over the feed, say): ``around`` takes the records and yields them, and is closed
        with the feed. Before the first record only; a merge reads the feed past it."""
        if self._gen is not None:
            raise RuntimeError("wrap: the feed is already being read")
        self._wrap = around

    def __aiter__(self) -> AsyncGenerator[R, None]:
        gen: Any = self._gen
        if gen is None:
            gen = follow(self.following)
            if self._wrap is not None:
                gen = self._wrap(gen)
            self._gen = gen
        it: AsyncGenerator[R, None] = gen
        return it

    async def __anext__(self) -> R:
        record: R = await self.__aiter__().__anext__()
        return record

    async def aclose(self) -> None:
        """Close the socket (if open). Safe to call twice; the feed is done after it."""
        if self._gen is None:
            self._gen = _done()
        await self._gen.aclose()
        # Its driver says so when it ran; a feed closed before it was read ends here.
        self.following.health.ended(self.position, self.finished, "closed by its reader")

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<Feed {self.kind} {self.fixture_id} position={self.position}>"


async def _done() -> AsyncGenerator[Any, None]:
    return
    yield  # pragma: no cover - makes this an async generator
