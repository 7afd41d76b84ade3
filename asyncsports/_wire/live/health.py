"""A live feed's health as data: the events, and the state machine that decides them (sans I/O).

The driver (:mod:`asyncsports._http.live`) tells a :class:`HealthMachine` what happened (a
connection opened or ended, a reconnect is due, the socket went silent, a record lagged,
the vendor sent a status message, the feed ended) with the time; the machine answers the
events a consumer sees, and keeps the feed's latest :attr:`~HealthMachine.state`. Nothing
here touches a socket or reads a clock. The rules, and why, are in docs/wire.md ("Feed
health").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

__all__ = [
    "Connected",
    "Coverage",
    "Delayed",
    "Ended",
    "HealthEvent",
    "HealthMachine",
    "HealthState",
    "Lost",
    "Reconnecting",
    "Recovered",
    "Resumed",
    "VendorStatus",
]

HealthState = Literal["connecting", "live", "delayed", "reconnecting", "over"]
"""Where a feed stands: ``connecting`` (before its first connection is open), ``live``,
``delayed`` (open, but silent or lagging), ``reconnecting`` (its connection was lost, or
an attempt failed) and ``over`` (it ended, for good)."""

DelayCause = Literal["silent", "lagging"]


@dataclass(frozen=True, slots=True)
class Connected:
    """A connection of the feed is open, its token sent: attempt ``connection`` (from 1,
    as ``feed.connections`` counts, refused handshakes too), asking for records from
    ``position`` on. ``at``: epoch seconds, as every event's."""

    fixture_id: Any
    at: float
    connection: int
    position: int


@dataclass(frozen=True, slots=True)
class Lost:
    """The feed's connection ended before the fixture did: ``cause`` says how (the
    server's close code, the error, a stall); ``stalled`` when nothing came for
    ``idle_timeout``. ``position``: records delivered when it ended."""

    fixture_id: Any
    at: float
    position: int
    cause: str
    stalled: bool = False


@dataclass(frozen=True, slots=True)
class Reconnecting:
    """The next attempt, the ``attempt``-th in a row that has not delivered, is made in
    ``wait`` seconds (the client's retry policy: backoff with jitter)."""

    fixture_id: Any
    at: float
    attempt: int
    wait: float


@dataclass(frozen=True, slots=True)
class Resumed:
    """A new connection after a :class:`Lost` one carries on from ``position`` (its
    ``startPosition``): no record is missed or repeated."""

    fixture_id: Any
    at: float
    position: int


@dataclass(frozen=True, slots=True)
class Delayed:
    """The feed is open but not current: ``cause`` is ``"silent"`` (no message, record or
    heartbeat, for ``seconds``, past the feed's ``delayed_after``) or ``"lagging"`` (a
    record's own timestamp is ``seconds`` behind the clock, past its ``lag_after``)."""

    fixture_id: Any
    at: float
    cause: DelayCause
    seconds: float


@dataclass(frozen=True, slots=True)
class Recovered:
    """The delay of the last :class:`Delayed` (its ``cause``) is over, after ``seconds``."""

    fixture_id: Any
    at: float
    cause: DelayCause
    seconds: float


@dataclass(frozen=True, slots=True)
class VendorStatus:
    """A message of the vendor's that is not a record, as it came (``raw``, its bytes).

    ``kind``: ``"alarm"`` (golf's ``{"eventElementType": "Alarm", "alarm": ...}``: ``text``
    is the alarm), ``"status"`` (any other ``eventElementType`` that is not a record or a
    heartbeat: ``text`` is the type), ``"notice"`` (a ``{"message": ..., "level": ...}``
    that is neither an acknowledgement, a heartbeat, a warning nor a refusal: ``text`` is
    the message) or ``"unknown"`` (a message of no shape known: ``text`` is empty)."""

    fixture_id: Any
    at: float
    kind: str
    text: str
    raw: bytes


@dataclass(frozen=True, slots=True)
class Coverage:
    """The fixture's coverage changed, as its records say: the ``collectionStatus`` of a
    record's fixture summary (``status``: ``CollectingLive``, ``CollectionSuspended``,
    ``CollectionDropped``...; see :class:`~asyncsports.models.CollectionStatus`) differs
    from the last record's (``previous``, None for the feed's first). ``reason`` is the
    summary's (why collection paused), ``position`` the records delivered with that one.
    The record itself comes as a record, as always."""

    fixture_id: Any
    at: float
    status: str | None
    previous: str | None
    reason: str
    position: int


@dataclass(frozen=True, slots=True)
class Ended:
    """The feed is over ("over"): after the fixture's finishing record (``finished``), the
    service's word that the fixture is over, an error (``reason`` names it), or the feed
    closed by its reader. The last event of a feed."""

    fixture_id: Any
    at: float
    position: int
    finished: bool
    reason: str


HealthEvent: TypeAlias = (
    Connected
    | Lost
    | Reconnecting
    | Resumed
    | Delayed
    | Recovered
    | VendorStatus
    | Coverage
    | Ended
)
"""Any of a feed's health events; each names its fixture (``fixture_id``)."""


class HealthMachine:
    """One feed's health across its connections: what happened in, events out.

    Rules: nothing after :class:`Ended`. A :class:`Delayed` is followed by its
    :class:`Recovered`, or ended by a :class:`Lost` (the connection's end supersedes it),
    or by the feed's end; there is one delay at a time (a silent feed is not also said to
    lag). :class:`Resumed` follows the :class:`Connected` of a connection opened after a
    :class:`Lost` one. Status messages and coverage changes change no state (what they
    mean for a market is the consumer's to decide).
    """

    __slots__ = ("_delay", "_lost", "fixture_id", "state")

    def __init__(self, fixture_id: Any = None) -> None:
        self.fixture_id = fixture_id
        self.state: HealthState = "connecting"
        self._delay: tuple[DelayCause, float] | None = None  # the cause, since when
        self._lost = False

    @property
    def delayed(self) -> DelayCause | None:
        """The cause of the current delay, or None."""
        return None if self._delay is None else self._delay[0]

    def connected(self, connection: int, position: int, now: float) -> list[HealthEvent]:
        """A connection opened at ``position``."""
        if self.state == "over":
            return []
        self.state = "live"
        self._delay = None
        out: list[HealthEvent] = [Connected(self.fixture_id, now, connection, position)]
        if self._lost:
            self._lost = False
            out.append(Resumed(self.fixture_id, now, position))
        return out

    def lost(self, position: int, cause: str, stalled: bool, now: float) -> list[HealthEvent]:
        """The open connection ended before the fixture did."""
        if self.state not in ("live", "delayed"):
            return []
        self.state = "reconnecting"
        self._delay = None
        self._lost = True
        return [Lost(self.fixture_id, now, position, cause, stalled)]

    def reconnecting(self, attempt: int, wait: float, now: float) -> list[HealthEvent]:
        """Another attempt is due in ``wait`` seconds (after a lost connection or a failed
        attempt)."""
        if self.state == "over":
            return []
        self.state = "reconnecting"
        self._delay = None
        return [Reconnecting(self.fixture_id, now, attempt, wait)]

    def delay(self, cause: DelayCause, seconds: float, now: float) -> list[HealthEvent]:
        """The open connection went silent, or a record lagged, for ``seconds``."""
        if self.state != "live":
            return []
        self.state = "delayed"
        self._delay = (cause, now)
        return [Delayed(self.fixture_id, now, cause, seconds)]

    def recover(self, cause: DelayCause, now: float) -> list[HealthEvent]:
        """What delayed the feed (``cause``) is over: a message came, or a record on time."""
        delay = self._delay
        if self.state != "delayed" or delay is None or delay[0] != cause:
            return []
        self.state = "live"
        self._delay = None
        return [Recovered(self.fixture_id, now, cause, max(0.0, now - delay[1]))]

    def status(self, kind: str, text: str, raw: bytes, now: float) -> list[HealthEvent]:
        """A status message of the vendor's."""
        if self.state == "over":
            return []
        return [VendorStatus(self.fixture_id, now, kind, text, raw)]

    def coverage(
        self, status: str | None, previous: str | None, reason: str, position: int, now: float
    ) -> list[HealthEvent]:
        """A record whose fixture summary's collection status differs from the last's."""
        if self.state == "over":
            return []
        return [Coverage(self.fixture_id, now, status, previous, reason, position)]

    def ended(self, position: int, finished: bool, reason: str, now: float) -> list[HealthEvent]:
        """The feed is over."""
        if self.state == "over":
            return []
        self.state = "over"
        self._delay = None
        return [Ended(self.fixture_id, now, position, finished, reason)]
