"""A live feed's health, as the driver reports it: the feed's :class:`Health`, and the
consumer's :class:`HealthEvents` (``feed.health()``, ``merged.health()``).

The driver (:mod:`asyncsports._http.live`) tells a feed's :class:`Health` what happened,
per connection and per status message, never per record; the pure
:class:`~asyncsports._wire.live.health.HealthMachine` decides the events. With no
subscriber, a feed keeps its state and makes no event, runs no timer and wraps no step:
its record path is the same as without health. With one:

- a silence (no message at all for ``delayed_after`` seconds) is found by one timer per
  connection, re-armed from the last message as the idle watchdog is (the listener
  already notes each message's time for it), and its end within :data:`POLL` seconds;
- a coverage change (an action record whose summary's collection status is not the last
  one's) is found by the feed's step, wrapped while someone listens: three attribute
  reads a record, only then;
- a lagging record (its own timestamp ``lag_after`` seconds behind the clock) is found by
  the feed's step, wrapped while someone listens and ``lag_after`` is set: a record's
  timestamp is read at most every :data:`LAG_EVERY` seconds (every record while it lags),
  the one cost per record, and only then.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Self

from asyncsports._wire.live import FeedState, Status, Step
from asyncsports._wire.live.health import (
    Ended,
    HealthEvent,
    HealthMachine,
    HealthState,
)
from asyncsports.raw import RawRecord

if TYPE_CHECKING:
    from asyncsports._http.connection import Idle

__all__ = ["LAG_EVERY", "POLL", "Health", "HealthEvents", "record_timestamp"]

POLL = 0.05
"""Seconds between looks at a silent connection: a :class:`Recovered` comes at most this
long after the message that ends the silence (a timer while delayed, not a check per
message)."""

LAG_EVERY = 0.1
"""Seconds between the records whose timestamps a listened feed with ``lag_after``
compares to the clock (the first record of a connection, then the first after each
interval; every record while it lags): reading a timestamp costs about 1 us, a
record's whole path about 7."""

Stepper = Callable[[Any, str], Any]


class HealthEvents:
    """A consumer's health events: an async iterator, fed by one feed or by a merge's.

    At most ``maxsize`` events wait; when the consumer lags, the oldest waiting event is
    dropped for the new one and counted in :attr:`dropped` (the latest state is never lost:
    the newest events are kept, and ``feed.health_state`` says where the feed stands). The
    iteration ends once every feed it follows has ended (its :class:`Ended` is handed out
    first). :meth:`aclose` stops listening.
    """

    __slots__ = ("_closed", "_hubs", "_open", "_queue", "_waiter", "dropped", "maxsize")

    def __init__(self, maxsize: int = 256) -> None:
        if maxsize < 1:
            raise ValueError(f"maxsize: must be >= 1, got {maxsize}")
        self.maxsize = maxsize
        self.dropped = 0
        """Events dropped (the oldest first) because the consumer fell ``maxsize`` behind."""
        self._queue: deque[HealthEvent] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._hubs: list[Health] = []
        self._open = 0  # followed feeds not ended
        self._closed = False

    def follow(self, hub: Health) -> None:
        """Listen to one more feed (its events from now on; an ended feed's end at once)."""
        if self._closed or hub in self._hubs:
            return
        self._hubs.append(hub)
        if hub.state == "over":
            return
        self._open += 1
        hub.listeners.append(self)

    def put(self, event: HealthEvent) -> None:
        """Take one event (from a feed's :class:`Health`)."""
        queue = self._queue
        if len(queue) >= self.maxsize:
            queue.popleft()
            self.dropped += 1
        queue.append(event)
        if isinstance(event, Ended):
            self._open -= 1
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> HealthEvent:
        while not self._queue:
            if self._closed or (self._open <= 0 and self._hubs):
                raise StopAsyncIteration
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            await waiter
        return self._queue.popleft()

    def get_nowait(self) -> HealthEvent | None:
        """The next waiting event, or None."""
        return self._queue.popleft() if self._queue else None

    async def aclose(self) -> None:
        """Stop listening (the iteration ends). Safe to call twice."""
        self._closed = True
        for hub in self._hubs:
            if self in hub.listeners:
                hub.listeners.remove(self)
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class Health:
    """One feed's health, told by the driver: its state, its listeners, its watchers."""

    __slots__ = (
        "_coverage",
        "_idle",
        "_listened",
        "_machine",
        "_quiet_since",
        "_timer",
        "delayed_after",
        "lag_after",
        "listeners",
    )

    def __init__(self, fixture_id: Any, delayed_after: float, lag_after: float | None) -> None:
        self._machine = HealthMachine(fixture_id)
        self.listeners: list[HealthEvents] = []
        self.delayed_after = delayed_after
        self.lag_after = lag_after
        self._idle: Idle | None = None
        self._listened: Callable[[], None] | None = (
            None  # the open connection's, told of a listener
        )
        self._timer: asyncio.TimerHandle | None = None
        self._quiet_since = 0.0
        self._coverage: str | None = None  # the last record's collection status

    @property
    def state(self) -> HealthState:
        """The feed's latest state."""
        return self._machine.state

    def _emit(self, events: list[HealthEvent]) -> None:
        for event in events:
            for listener in list(self.listeners):
                listener.put(event)
            if isinstance(event, Ended):
                self.listeners.clear()

    def listen(self, events: HealthEvents) -> None:
        """Add a listener; watch the open connection for silence from now on."""
        events.follow(self)
        if self._idle is not None and self._timer is None and self.listeners:
            self._arm(self.delayed_after)
        if self._listened is not None:
            self._listened()

    # -- what the driver tells

    def connected(
        self, connection: int, position: int, idle: Idle, listened: Callable[[], None]
    ) -> None:
        """A connection opened at ``position``; ``idle`` is its watchdog (the last
        message's time), ``listened`` tells it a listener came (its step changes)."""
        self._emit(self._machine.connected(connection, position, time.time()))
        self._idle = idle
        self._listened = listened
        if self.listeners:
            self._arm(self.delayed_after)

    def lost(self, position: int, cause: str, stalled: bool) -> None:
        """The connection ended before the fixture did."""
        self._unwatch()
        self._emit(self._machine.lost(position, cause, stalled, time.time()))

    def reconnecting(self, attempt: int, wait: float) -> None:
        """Another attempt in ``wait`` seconds."""
        self._unwatch()
        self._emit(self._machine.reconnecting(attempt, wait, time.time()))

    def status(self, status: Status) -> None:
        """A status message of the vendor's."""
        if self.listeners:
            self._emit(self._machine.status(status.kind, status.text, status.data, time.time()))

    def ended(self, position: int, finished: bool, reason: str) -> None:
        """The feed is over (a no-op once it is)."""
        idle, machine = self._idle, self._machine
        if idle is not None and machine.delayed == "silent" and idle.since != self._quiet_since:
            # Messages came after the silence (the finishing record at least) before the
            # timer saw them: the delay was over before the feed, so say so first.
            self._emit(machine.recover("silent", time.time()))
        self._unwatch()
        self._emit(self._machine.ended(position, finished, reason, time.time()))

    def stepper(self, step: Stepper, state: FeedState) -> Stepper:
        """The step a new connection uses: ``step`` itself, or, while someone listens,
        ``step`` with each action record's coverage (its summary's collection status)
        compared to the last, and, when ``lag_after`` is set, a sample of the records'
        timestamps compared to the clock."""
        if not self.listeners:
            return step
        machine, lag_after, covered = self._machine, self.lag_after, self._covered
        due = [0.0]  # when the next record is compared (monotonic): sampled, not each one
        monotonic = time.monotonic
        actions, raw = state.kind == "actions", state.raw

        def listened(data: Any, url: str) -> Any:
            out = step(data, url)
            if type(out) is not Step:  # the hot path: one record, inline
                record: Any = out
                if actions:
                    summary = (out.value if raw else out).fixture_summary
                    if summary is not None and summary.collection_status != self._coverage:
                        covered(summary, state.position)
            elif out.records:
                record = out.records[-1]
                if actions:
                    first = state.position - len(out.records)
                    each: Any
                    for i, each in enumerate(out.records, 1):
                        summary = (each.value if raw else each).fixture_summary
                        if summary is not None and summary.collection_status != self._coverage:
                            covered(summary, first + i)
            else:
                return out  # a heartbeat, a held record: nothing to compare
            if lag_after is None:
                return out
            if machine.state != "delayed" and monotonic() < due[0]:  # an attribute, not
                return out  # the property: a call less per record
            due[0] = monotonic() + LAG_EVERY
            self._lagged(record, lag_after)
            return out

        return listened

    def _lagged(self, record: Any, lag_after: float) -> None:
        """Compare a record's own timestamp to the clock: delayed, or recovered."""
        stamp = record_timestamp(record)
        if stamp is None:
            return
        machine, now = self._machine, time.time()
        behind = now - stamp
        if behind > lag_after:
            if machine.state == "live":
                self._emit(machine.delay("lagging", behind, now))
        elif machine.delayed == "lagging":
            self._emit(machine.recover("lagging", now))

    def _covered(self, summary: Any, position: int) -> None:
        """Tell a change of the fixture's collection status (an action record's summary)."""
        status = summary.collection_status
        previous, self._coverage = self._coverage, status
        reason = summary.reason or ""
        self._emit(self._machine.coverage(status, previous, reason, position, time.time()))

    # -- silence

    def _arm(self, delay: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(max(delay, 0.0), self._tick)

    def _unwatch(self) -> None:
        self._idle = self._listened = None
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _tick(self) -> None:
        self._timer = None
        idle = self._idle
        if idle is None or not self.listeners:
            return
        machine, limit = self._machine, self.delayed_after
        since = idle.since  # the last message's (monotonic); inf while the consumer paused it
        now = time.monotonic()
        if machine.delayed == "silent":
            if since != self._quiet_since:
                self._emit(machine.recover("silent", time.time()))
                self._arm(limit)
            else:
                self._arm(min(POLL, limit))
            return
        quiet = now - since
        if quiet >= limit and machine.state == "live":
            self._quiet_since = since
            self._emit(machine.delay("silent", quiet, time.time()))
            self._arm(min(POLL, limit))
        else:
            self._arm(limit - quiet if 0 < limit - quiet < limit else limit)


def record_timestamp(record: Any) -> float | None:
    """A live record's timestamp, epoch seconds (an action's or a statistics packet's)."""
    if isinstance(record, RawRecord):
        record = record.value
    action = getattr(record, "fixture_action", None)
    stamp = getattr(action if action is not None else record, "timestamp", None)
    return None if stamp is None else float(stamp.timestamp())
