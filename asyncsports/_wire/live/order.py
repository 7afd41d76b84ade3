"""One feed across its connections: positions, duplicates, reorders, gaps (sans I/O)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from asyncsports._wire.decoding import FAILURES, Source, body_error
from asyncsports._wire.live.messages import (
    _DECODERS,
    AuthFailed,
    FeedKind,
    Malformed,
    Message,
    Packet,
    Record,
    Status,
    Unknown,
    Warned,
    _int,
    classify,
)
from asyncsports.errors import DecodeError
from asyncsports.raw import RawRecord

# --------------------------------------------------------------------------- ordering

Delivered = Record | RawRecord[Any]
"""A record as handed out: typed, or with its message's bytes (``client.with_json.live``)."""
Verdict = Literal["deliver", "drop", "hold", "gap", "auth", "warn"]
Numbering = Literal["auto", "restart", "continue"]


@dataclass(slots=True)
class Step:
    """What to do after a message: ``records`` to hand the consumer now, in order.

    ``verdict`` is ``"deliver"`` (``records`` is not empty), ``"drop"`` (a duplicate, or a
    message after a gap), ``"hold"`` (kept until the missing record arrives) or ``"gap"``
    (close this connection and connect again at ``FeedState.position``) or ``"auth"``
    (the token was refused: raise, do not reconnect) or ``"warn"`` (the server warned on
    an open socket: ask the service, ``reason`` is its text). ``finished``:
    the fixture is over, the feed ends after these records. ``reason`` says why, for a log.
    ``status``: the vendor's status message (or one of unknown shape) this step is for,
    for the feed's health. Not frozen, as it is built for every message; treat it as
    read-only.
    """

    verdict: Verdict
    records: tuple[Delivered, ...] = ()
    finished: bool = False
    reason: str = ""
    status: Status | None = None


_OFF = math.nan  # FeedState._next off the hot path: equal to no fixtureSeqNum
_DROP = Step("drop")
_HOLD = Step("hold")
_NOTHING = Step("drop", reason="not a packet")
UNKNOWN = "a message of unknown shape"


def _finished(record: Delivered) -> bool:
    if isinstance(record, RawRecord):
        return record.value.finished is True
    return record.finished is True


def _wire(data: bytes | bytearray | memoryview | str) -> bytes:
    """A message's bytes as sent (a text frame handed over as ``str`` is encoded back)."""
    if isinstance(data, str):
        return data.encode("utf-8", "surrogatepass")
    return bytes(data)


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

    ``raw=True``: each record is a :class:`~asyncsports.raw.RawRecord`, the typed record
    and the bytes of the message that carried it, as sent.
    """

    __slots__ = (
        "_ambiguous",
        "_decode",
        "_held",
        "_next",
        "_origin",
        "_stopped",
        "_waited",
        "connections",
        "finished",
        "kind",
        "numbering",
        "patience",
        "position",
        "raw",
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
        raw: bool = False,
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
        self.raw = raw
        self.connections = 0
        self.finished = False
        self._origin: int | None = None
        self._held: dict[int, Delivered] = {}
        self._waited = 0
        self._stopped = False
        self._ambiguous = False
        self._next: float = _OFF

    def connect(self) -> int:
        """Start a new connection: forget its predecessor's held records; the startPosition."""
        self.connections += 1
        self._held.clear()
        self._waited = 0
        self._stopped = self.finished
        self._origin = self._origin_for(self.numbering)
        self._sync()
        return self.position

    def _sync(self) -> None:
        """Set the seq :meth:`step`'s hot path takes: the next in order, when nothing
        else is going on (an actions feed, its numbering known, nothing held or stopped)."""
        origin = self._origin
        if origin is None or self._decode is None or self._held or self._stopped:
            self._next = _OFF
        else:
            self._next = self.position - origin + 1

    def _origin_for(self, numbering: Numbering) -> int | None:
        if numbering == "restart" or (numbering == "auto" and self.position == 0):
            return self.position
        if numbering == "continue":
            return 0
        return None

    # -- messages

    def step(self, data: bytes | bytearray | memoryview | str, url: str = "") -> Delivered | Step:
        """The step after one websocket message: the record itself on the hot path.

        The hot path (an action packet, the next in order, not the finishing one) decodes
        once and returns the record (a RawRecord when ``raw``), making neither a Step nor a
        tuple; anything else is :func:`classify`, then :meth:`receive`.
        """
        dec = self._decode
        if dec is not None and (type(data) is bytes or type(data) is str):
            try:
                record = dec(data)
            except FAILURES:
                pass
            else:
                seq = record.fixture_action.fixture_seq_num
                if seq == self._next and record.finished is not True:
                    self.position += 1
                    self._next = seq + 1
                    return RawRecord(record, _wire(data)) if self.raw else record
                item = RawRecord(record, _wire(data)) if self.raw else record
                return self.packet(item, seq if type(seq) is int else _int(seq))
        message = classify(data, self.kind)
        if self.raw and isinstance(message, Packet):
            return self.packet(RawRecord(message.record, _wire(data)), message.seq)
        return self.receive(message, url)

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
        if isinstance(message, Warned):
            return Step("warn", reason=message.text or "a warning without text")
        step = self.other()
        if isinstance(message, Status):
            return Step(step.verdict, reason=step.reason or "a status message", status=message)
        if isinstance(message, Unknown):
            # Kept whole for the feed's health (never dropped unseen), as its own word.
            reason = UNKNOWN if step is _NOTHING else step.reason
            return Step(step.verdict, reason=reason, status=Status("unknown", "", message.data))
        return step

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
                step = self._gap("the missing record did not come before other messages")
                self._sync()
                return step
        return _NOTHING

    def _gap(self, reason: str) -> Step:
        self._stopped = True
        self._held.clear()
        return Step("gap", reason=f"gap at position {self.position}: {reason}")

    def packet(self, record: Delivered, seq: int | None) -> Step:
        """The step for one decoded packet with ``fixtureSeqNum`` ``seq``."""
        step = self._packet(record, seq)
        self._sync()
        return step

    def _packet(self, record: Delivered, seq: int | None) -> Step:
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
            # Also a restarting server whose seqs 1 to p are late or lost (its packet at
            # index 2p came first). Reconnect once; the same answer twice in a row is a
            # server that continues (learnt once: a continuing server pays one reconnect).
            if not self._ambiguous:
                self._ambiguous = True
                return None
            self.numbering = "continue"
            self._ambiguous = False
            return 0
        return None

    def _deliver(self, record: Delivered) -> Step:
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
