"""The live feeds' protocol, sans I/O: classify messages, order records, decide reconnects.

Nothing here touches a socket or a clock; the websocket loop (later, in ``asyncsports.live``)
feeds it what arrived and does what it answers, in the style of h11.

- :func:`classify`: one websocket message of a feed -> :class:`Packet` (a decoded record
  and its ``fixtureSeqNum``), :class:`Heartbeat`, :class:`Ack`, :class:`AuthFailed`,
  :class:`Unknown`, or :class:`Malformed` (looks like a packet, does not decode). Decimal
  fields arrive quoted or not (``"fixtureSeqNum": "12"``): the live decoders are lax.
- :class:`FeedState`: one feed across its connections. ``position`` counts the records
  delivered, and is the ``startPosition`` of the next connection. Each packet gets a
  :class:`Step`: deliver (in order, perhaps with held ones), drop (already delivered),
  hold (ahead of a missing one) or gap (reconnect at ``position``).
- :func:`reconnect`: after a connection ended, what next, through ``_retry.decide``:
  a connection that delivered a record resets the budget; a bad token raises at once.
- :class:`Watchdog`: when the idle timeout runs out (no message of any kind).
- :class:`MergeBook`: the bookkeeping of many feeds merged into one iterator: bounded
  buffers, which feed must pause reading, and resume points counted by what the consumer
  took, not by what arrived.

The rules, and why, are in docs/wire.md ("Live feeds").
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeAlias, TypeVar

import msgspec

from asyncsports._decoding import FAILURES, Failure, Source, body_error, type_name
from asyncsports._retry import Call, Decision, Outcome, RetryPolicy, decide
from asyncsports.errors import DecodeError
from asyncsports.models import Action, Statistics
from asyncsports.models._types import dec_hook

__all__ = [
    "Ack",
    "AuthFailed",
    "ConnectionEnd",
    "FeedKind",
    "FeedState",
    "Heartbeat",
    "Malformed",
    "MergeBook",
    "Message",
    "Packet",
    "Record",
    "Step",
    "Unknown",
    "Watchdog",
    "classify",
    "live_decoder",
    "reconnect",
    "reset",
]

FeedKind = Literal["actions", "statistics"]
Record: TypeAlias = Action | Statistics

# --------------------------------------------------------------------------- messages


@dataclass(slots=True)
class Packet:
    """A record of the feed. ``seq`` is its ``fixtureSeqNum`` (None when it has none)."""

    record: Record
    seq: int | None


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """A keep-alive between packets (any shape that says heartbeat, ping or pong)."""


@dataclass(frozen=True, slots=True)
class Ack:
    """An acknowledgement (the connection is authorised, subscribed, connected)."""

    text: str = ""


@dataclass(frozen=True, slots=True)
class AuthFailed:
    """The token was refused ("The supplied authentication is invalid", JSON or not)."""

    text: str = ""


@dataclass(frozen=True, slots=True)
class Unknown:
    """Anything else: never yielded, but it shows the socket is alive."""

    data: bytes = b""


@dataclass(frozen=True, slots=True)
class Malformed:
    """A message that looks like a packet of the feed and does not decode."""

    data: bytes
    error: Failure
    target: str


Message: TypeAlias = Packet | Heartbeat | Ack | AuthFailed | Unknown | Malformed

HEARTBEAT = Heartbeat()

_DECODERS: dict[FeedKind, msgspec.json.Decoder[Any]] = {
    "actions": msgspec.json.Decoder(Action, dec_hook=dec_hook, strict=False),
    "statistics": msgspec.json.Decoder(Statistics, dec_hook=dec_hook, strict=False),
}
_TYPES: dict[FeedKind, type] = {"actions": Action, "statistics": Statistics}
# Keys that only a packet of the feed has: a message with one of them is a packet or malformed.
_MARKERS: dict[FeedKind, tuple[str, ...]] = {
    "actions": ("fixtureAction",),
    "statistics": ("teamActionAggregates", "advancedSportStatistics"),
}


class _Seq(msgspec.Struct):
    fixtureSeqNum: Any = None  # the wire's name


_SEQ = msgspec.json.Decoder(_Seq)
_ANY = msgspec.json.Decoder()
_AUTH_INVALID = "supplied authentication is invalid"
_HEARTBEAT_WORDS = ("heartbeat", "ping", "pong", "keepalive", "keep-alive")
_ACK_WORDS = ("authori", "authenticated", "subscribed", "connected", "welcome")


def live_decoder(kind: FeedKind) -> msgspec.json.Decoder[Any]:
    """The lax decoder of a feed's packets: quoted numbers (``"12"``, ``"1.5"``) decode too.

    ``strict=False`` costs nothing measurable (about 1% on an action record), but it also
    reads ``"true"`` as a bool and a number as a datetime, so the REST models keep strict
    decoders and the live path has its own.
    """
    return _DECODERS[kind]


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def _words(doc: Any, depth: int = 0) -> str:
    """The keys and text of a small decoded message, lower-cased, for looking up words."""
    if depth > 3:
        return ""
    if isinstance(doc, str):
        return doc.lower()
    if isinstance(doc, dict):
        return " ".join(f"{k.lower()} {_words(v, depth + 1)}" for k, v in list(doc.items())[:16])
    if isinstance(doc, list):
        return " ".join(_words(v, depth + 1) for v in doc[:16])
    return ""


def _text_kind(words: str, raw: bytes) -> Message:
    """A message that is not a packet, by the words in it (``words`` lower-cased)."""
    if _AUTH_INVALID in words:
        return AuthFailed(raw.decode("utf-8", "replace").strip().strip("{}").strip())
    if any(w in words for w in _HEARTBEAT_WORDS):
        return HEARTBEAT
    if any(w in words for w in _ACK_WORDS) and "unauthori" not in words and "not " not in words:
        return Ack(raw.decode("utf-8", "replace").strip())
    return Unknown(raw)


def classify(data: bytes | bytearray | memoryview | str, kind: FeedKind) -> Message:
    """What one websocket message of a ``kind`` feed is. Pure; never raises.

    The packet decode is tried first (the hot path costs one msgspec decode). A statistics
    packet must carry statistics (aggregates, advanced statistics or a ``seqNum``): a
    message holding only a ``fixtureId`` and a ``timestamp`` (a heartbeat, perhaps) is not.
    """
    if not isinstance(data, bytes):
        data = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    failure: Failure | None = None
    try:
        record = _DECODERS[kind].decode(data)
    except FAILURES as exc:
        failure = exc
    else:
        if kind == "actions":
            return Packet(record, _int(record.fixture_action.fixture_seq_num))
        if (
            record.team_action_aggregates
            or record.advanced_sport_statistics is not None
            or record.seq_num is not None
        ):
            try:
                seq = _int(_SEQ.decode(data).fixtureSeqNum)
            except FAILURES:  # pragma: no cover - it decoded a moment ago
                seq = None
            return Packet(record, seq)
    try:
        doc = _ANY.decode(data)
    except FAILURES:
        text = data.decode("utf-8", "replace")
        if failure is not None and any(f'"{m}"' in text for m in _MARKERS[kind]):
            return Malformed(data, failure, type_name(_TYPES[kind]))
        return _text_kind(text.lower(), data)
    if isinstance(doc, dict) and failure is not None and any(m in doc for m in _MARKERS[kind]):
        return Malformed(data, failure, type_name(_TYPES[kind]))
    return _text_kind(_words(doc), data)


# --------------------------------------------------------------------------- ordering

Verdict = Literal["deliver", "drop", "hold", "gap", "auth"]
Numbering = Literal["auto", "restart", "continue"]


@dataclass(slots=True)
class Step:
    """What to do after a message: ``records`` to hand the consumer now, in order.

    ``verdict`` is ``"deliver"`` (``records`` is not empty), ``"drop"`` (a duplicate, or a
    message after a gap), ``"hold"`` (kept until the missing record arrives) or ``"gap"``
    (close this connection and connect again at ``FeedState.position``) or ``"auth"``
    (the token was refused: raise, do not reconnect). ``finished``:
    the fixture is over, the feed ends after these records. ``reason`` says why, for a log.
    Not frozen, as it is built for every message; treat it as read-only.
    """

    verdict: Verdict
    records: tuple[Record, ...] = ()
    finished: bool = False
    reason: str = ""


_DROP = Step("drop")
_HOLD = Step("hold")
_NOTHING = Step("drop", reason="not a packet")


def _finished(record: Record) -> bool:
    return record.finished is True


class FeedState:
    """One live feed across its connections: position, numbering, held records.

    ``position`` is the number of records delivered so far, counted from the start of the
    fixture's list, and the ``startPosition`` of the next connection. A record's index in
    that list is worked out from its ``fixtureSeqNum``: a server that numbers from 1 on each
    connection (``numbering="restart"``, as documented) puts seq 1 at the connection's
    ``startPosition``; one that goes on numbering (``"continue"``) puts seq ``n`` at index
    ``n - 1``. ``"auto"`` learns which from the first packet of a connection that starts
    past 0 (seq 1: restart; seq ``position + 1``: continue) and keeps it.

    Within a connection: an index below ``position`` is dropped (delivered already); the
    index at ``position`` is delivered, with any held records that follow it; an index
    above is held, up to ``window`` records and ``patience`` other messages, after which it
    is a gap. A packet without a seq is taken as the next record.
    """

    __slots__ = (
        "_ambiguous",
        "_decode",
        "_held",
        "_origin",
        "_stopped",
        "_waited",
        "connections",
        "finished",
        "kind",
        "numbering",
        "patience",
        "position",
        "window",
    )

    def __init__(
        self,
        start_position: int = 0,
        *,
        kind: FeedKind = "actions",
        numbering: Numbering = "auto",
        window: int = 32,
        patience: int = 2,
    ) -> None:
        if isinstance(start_position, bool) or not isinstance(start_position, int):
            raise TypeError(f"start_position: expected an int, got {start_position!r}")
        if start_position < 0:
            raise ValueError(f"start_position: must be >= 0, got {start_position}")
        if kind not in _DECODERS:
            raise ValueError(f"kind: expected actions or statistics, got {kind!r}")
        if numbering not in ("auto", "restart", "continue"):
            raise ValueError(f"numbering: expected auto, restart or continue, got {numbering!r}")
        if window < 1 or patience < 0:
            raise ValueError("window must be >= 1 and patience >= 0")
        self.position = start_position
        self.kind: FeedKind = kind
        self._decode = _DECODERS[kind].decode if kind == "actions" else None
        self.numbering: Numbering = numbering
        self.window = window
        self.patience = patience
        self.connections = 0
        self.finished = False
        self._origin: int | None = None
        self._held: dict[int, Record] = {}
        self._waited = 0
        self._stopped = False
        self._ambiguous = False

    def connect(self) -> int:
        """Start a new connection: forget its predecessor's held records; the startPosition."""
        self.connections += 1
        self._held.clear()
        self._waited = 0
        self._stopped = self.finished
        self._origin = self._origin_for(self.numbering)
        return self.position

    def _origin_for(self, numbering: Numbering) -> int | None:
        if numbering == "restart" or (numbering == "auto" and self.position == 0):
            return self.position
        if numbering == "continue":
            return 0
        return None

    # -- messages

    def feed(self, data: bytes | bytearray | memoryview | str, url: str = "") -> Step:
        """The step after one websocket message: :func:`classify`, then :meth:`receive`.

        The hot path (an action packet, in order) decodes once and allocates one Step.
        """
        dec = self._decode
        if dec is not None and type(data) is bytes:
            try:
                record = dec(data)
            except FAILURES:
                pass
            else:
                seq = record.fixture_action.fixture_seq_num
                origin = self._origin
                if (
                    type(seq) is int
                    and origin is not None
                    and origin + seq - 1 == self.position
                    and not self._held
                    and not self._stopped
                ):
                    self.position += 1  # in order, nothing held: the common case
                    if record.finished is True:
                        self.finished = self._stopped = True
                        return Step("deliver", (record,), True)
                    return Step("deliver", (record,))
                return self.packet(record, seq if type(seq) is int else _int(seq))
        return self.receive(classify(data, self.kind), url)

    def receive(self, message: Message, url: str = "") -> Step:
        """The step after ``message`` (from :func:`classify`).

        :class:`AuthFailed` is the ``"auth"`` verdict (raise AuthenticationError, do not
        reconnect). A :class:`Malformed` packet raises DecodeError naming the position.
        """
        if isinstance(message, Packet):
            return self.packet(message.record, message.seq)
        if isinstance(message, AuthFailed):
            return Step("auth", reason=message.text or "authentication refused")
        if isinstance(message, Malformed):
            raise self.malformed(message, url)
        return self.other()

    def malformed(self, message: Malformed, url: str = "") -> DecodeError:
        """The DecodeError for a malformed packet, naming the position to resume past it."""
        lead = (
            f"live {message.target} packet after position {self.position} does not decode "
            f"(start_position={self.position + 1} resumes past it): "
        )
        return body_error(Source(message.target, url), message.error, message.data, lead=lead)

    def other(self) -> Step:
        """A message that is not a packet (heartbeat, ack, unknown): a gap if one is held."""
        if self._held and not self._stopped:
            self._waited += 1
            if self._waited > self.patience:
                return self._gap("the missing record did not come before other messages")
        return _NOTHING

    def _gap(self, reason: str) -> Step:
        self._stopped = True
        self._held.clear()
        return Step("gap", reason=f"gap at position {self.position}: {reason}")

    def packet(self, record: Record, seq: int | None) -> Step:
        """The step for one decoded packet with ``fixtureSeqNum`` ``seq``."""
        if self._stopped:
            return _DROP
        if seq is None:
            return self._deliver(record)
        if seq < 1:
            return self._gap(f"fixtureSeqNum {seq} is below 1")
        if self._origin is None:
            origin = self._learn(seq)
            if origin is None:
                return self._gap(
                    f"first fixtureSeqNum {seq} of a connection at startPosition "
                    f"{self.position} fits neither numbering"
                )
            self._origin = origin
        index = self._origin + seq - 1
        if index < self.position:
            return Step("drop", reason=f"duplicate of record {index}")
        if index > self.position:
            if index in self._held:
                return Step("drop", reason=f"duplicate of held record {index}")
            if not self._held:
                self._waited = 0
            self._held[index] = record
            if len(self._held) > self.window:
                return self._gap(f"{len(self._held)} records held past the missing one")
            return _HOLD
        return self._deliver(record)

    def _learn(self, seq: int) -> int | None:
        """The origin of this connection from its first seq, numbering unknown, position > 0."""
        p = self.position
        if seq == 1:
            self.numbering = "restart"
            self._ambiguous = False
            return p
        if seq == p + 1:
            # p == 1, seq 2: also a restarting server whose seq 1 is late or lost. Reconnect
            # once; the same answer twice in a row is a server that continues.
            if p == 1 and not self._ambiguous:
                self._ambiguous = True
                return None
            self.numbering = "continue"
            self._ambiguous = False
            return 0
        return None

    def _deliver(self, record: Record) -> Step:
        out = [record]
        self.position += 1
        self._waited = 0
        finished = _finished(record)
        held = self._held
        while held and not finished:
            nxt = held.pop(self.position, None)
            if nxt is None:
                break
            out.append(nxt)
            self.position += 1
            finished = _finished(nxt)
        if finished:
            self.finished = self._stopped = True
            held.clear()
        return Step("deliver", tuple(out), finished)


# --------------------------------------------------------------------------- reconnecting


@dataclass(frozen=True, slots=True)
class ConnectionEnd:
    """How one connection ended: ``delivered`` records in it; ``auth_failed`` when the
    token was refused; ``stalled`` when the idle timeout ran out; ``error`` the text of
    what broke it (for the TransportError)."""

    delivered: int = 0
    auth_failed: bool = False
    stalled: bool = False
    error: str = field(default="")


def reset(call: Call) -> None:
    """Start ``call``'s budget afresh: a connection delivered a record.

    (What ``Call.reset()`` would do in ``_retry.py``; see docs/wire.md.)
    """
    call.retries = 0
    call.refreshed = False
    call.resent = False


def reconnect(
    end: ConnectionEnd,
    call: Call,
    policy: RetryPolicy,
    *,
    now: float,
    refreshable: bool = False,
    rng: random.Random | None = None,
) -> Decision:
    """What to do after a connection of a feed that is not finished ended, and count it.

    A refused token is a 401 to :func:`~asyncsports._retry.decide`: one refresh when the
    token is refreshable, else ``raise`` (AuthenticationError, no loop). A connection
    that delivered a record resets the budget and its end is not counted: reconnect after
    the first backoff step. Any other end (a drop, a close at once, a stall, a gap alike)
    is one failed attempt: ``retry`` after the backoff, or ``raise`` (TransportError) once
    ``policy.max_retries + 1`` connections in a row delivered nothing. The decision is
    applied to ``call``.
    """
    call.attempts += 1
    if end.auth_failed:
        decision = decide(Outcome(status=401), call, policy, now=now, refreshable=refreshable)
    elif end.delivered > 0:
        reset(call)
        return decide(Outcome(), call, policy, now=now, rng=rng)  # not counted
    else:
        decision = decide(Outcome(), call, policy, now=now, rng=rng)
    call.apply(decision)
    return decision


class Watchdog:
    """The idle timeout of one connection: any message, packet or not, feeds it."""

    __slots__ = ("last", "timeout")

    def __init__(self, timeout: float, now: float) -> None:
        if not timeout > 0:
            raise ValueError(f"idle_timeout: must be > 0, got {timeout!r}")
        self.timeout = timeout
        self.last = now

    def feed(self, now: float) -> None:
        """A message arrived at ``now``."""
        self.last = now

    def remaining(self, now: float) -> float:
        """Seconds before the connection counts as stalled (0 when it does)."""
        return max(0.0, self.last + self.timeout - now)

    def expired(self, now: float) -> bool:
        """Whether nothing arrived for ``timeout`` seconds."""
        return now - self.last >= self.timeout


# --------------------------------------------------------------------------- merging

K = TypeVar("K", bound=Hashable)


class MergeBook(Generic[K]):
    """Many feeds, one consumer: records in arrival order, each feed's order kept.

    ``push`` a feed's delivered records; it answers whether that feed must stop reading its
    socket (its share of the buffer, ``per_feed`` records, is full). ``pop`` hands out the
    oldest record and its feed's key; a paused feed whose buffer fell to half is listed
    by :meth:`resumable`. Memory is bounded by ``per_feed`` (plus one delivery's records)
    per feed. :meth:`position` is the resume point of a feed: records the consumer took,
    so a merge stopped with records still buffered loses none of them.
    """

    __slots__ = ("_buffered", "_paused", "_queue", "_taken", "per_feed")

    def __init__(self, per_feed: int = 64) -> None:
        if per_feed < 1:
            raise ValueError(f"per_feed: must be >= 1, got {per_feed}")
        self.per_feed = per_feed
        self._queue: deque[tuple[K, Record]] = deque()
        self._buffered: dict[K, int] = {}
        self._taken: dict[K, int] = {}
        self._paused: set[K] = set()

    def add(self, key: K, start_position: int = 0) -> None:
        """Follow a feed whose consumer has taken ``start_position`` records already."""
        if key in self._taken:
            raise ValueError(f"feed {key!r} is merged already")
        self._taken[key] = start_position
        self._buffered[key] = 0

    def push(self, key: K, records: tuple[Record, ...]) -> bool:
        """Buffer ``records`` of feed ``key``; True when that feed must pause reading."""
        queue = self._queue
        for record in records:
            queue.append((key, record))
        n = self._buffered[key] = self._buffered[key] + len(records)
        if n >= self.per_feed:
            self._paused.add(key)
            return True
        return False

    def pop(self) -> tuple[K, Record] | None:
        """The oldest buffered record and its feed, or None when none is buffered."""
        if not self._queue:
            return None
        key, record = self._queue.popleft()
        self._buffered[key] -= 1
        self._taken[key] += 1
        return key, record

    def resumable(self) -> list[K]:
        """Paused feeds whose buffer fell to half ``per_feed`` or below: resume them now."""
        ready = [k for k in self._paused if self._buffered[k] <= self.per_feed // 2]
        self._paused.difference_update(ready)
        return ready

    def paused(self, key: K) -> bool:
        """Whether feed ``key`` is paused."""
        return key in self._paused

    def buffered(self, key: K | None = None) -> int:
        """Records buffered for feed ``key`` (all feeds when None)."""
        return len(self._queue) if key is None else self._buffered[key]

    def position(self, key: K) -> int:
        """Records of feed ``key`` the consumer took: its ``start_position`` to resume."""
        return self._taken[key]

    def remove(self, key: K) -> list[Record]:
        """Stop following ``key``; its buffered records (not taken) are dropped and returned."""
        kept: deque[tuple[K, Record]] = deque()
        dropped: list[Record] = []
        for item in self._queue:
            if item[0] == key:
                dropped.append(item[1])
            else:
                kept.append(item)
        self._queue = kept
        del self._buffered[key], self._taken[key]
        self._paused.discard(key)
        return dropped
