"""A recording's live connections as feeds: each live key's messages on one timeline
across its connections, each record once at its index, the other messages where they
came, and where the recorded service ended a connection (:class:`RecordedFeed`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import msgspec

__all__ = ["CUT", "Conn", "End", "Entry", "RecordedFeed", "build", "end_at"]

CUT = 1006
"""An end without a close frame (RFC 6455's code for it, never sent in one): a drop."""

# Codes a close frame may carry (RFC 6455 7.4.1: 1004, 1005, 1006 and 1015 are never sent).
_SENDABLE = frozenset(range(1000, 5000)) - {1004, 1005, 1006, 1015}
_MARKERS = ("fixtureAction", "fixtureSeqNum", "teamActionAggregates", "advancedSportStatistics")
_any = msgspec.json.Decoder()


@dataclass(frozen=True, slots=True)
class Entry:
    """A live message on a feed's timeline: ``index`` is the record's position from the
    fixture's start (None: not a record, sent after record ``after``)."""

    t: float
    text: str
    index: int | None
    after: int
    seq: int | None = None


@dataclass(frozen=True, slots=True)
class End:
    """The recorded service ending a connection, at ``t``, with close ``code`` (:data:`CUT`:
    the connection was cut)."""

    t: float
    code: int


def end_at(t: float, code: int | None) -> End:
    """The end a connection closed at ``t`` with ``code`` makes (:data:`CUT` for a code no
    close frame carries: none, or one the service could not have sent)."""
    return End(t, code if code in _SENDABLE else CUT)


@dataclass
class RecordedFeed:
    """One live feed as a recording holds it: its messages across its connections.

    ``preamble`` is what the first connection got before its first record (the
    acknowledgement). ``numbering`` is how the recorded service numbered ``fixtureSeqNum``
    from a ``startPosition`` past 0 (None: no such connection shows it). ``ends`` maps a
    position to the recorded service's end of a connection there, after record
    ``position - 1``.
    """

    preamble: list[str] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    numbering: Literal["restart", "continue"] | None = None
    ends: dict[int, End] = field(default_factory=dict)

    @property
    def length(self) -> int:
        """The records on the timeline: the position after its last."""
        return max((e.index + 1 for e in self.entries if e.index is not None), default=0)


@dataclass
class Conn:
    """One recorded live connection: its key, ``startPosition``, messages (time, text) and
    the service's end of it (None: the service did not end it)."""

    key: str
    start: int
    messages: list[tuple[float, str]] = field(default_factory=list)
    end: End | None = None


@dataclass(frozen=True, slots=True)
class _Packet:
    record: bool
    seq: int | None = None
    finished: bool = False


_NOT_A_RECORD = _Packet(False)


def _packet(text: str) -> _Packet:
    """Whether a live message is a record (a packet of a feed), its fixtureSeqNum, and
    whether it is the finishing one."""
    try:
        doc = _any.decode(text)
    except msgspec.DecodeError:
        return _NOT_A_RECORD
    if not isinstance(doc, dict) or not any(m in doc for m in _MARKERS):
        return _NOT_A_RECORD
    action = doc.get("fixtureAction")
    raw = action.get("fixtureSeqNum") if isinstance(action, dict) else doc.get("fixtureSeqNum")
    finished = doc.get("finished") is True
    try:
        seq = int(raw) if raw is not None and not isinstance(raw, bool) else None
    except (TypeError, ValueError):
        seq = None
    return _Packet(True, seq, finished)


@dataclass
class _Seen:
    """A feed's records so far, kept across its connections (not rebuilt for each)."""

    indices: set[int] = field(default_factory=set)
    front: int = -1


def build(order: list[Conn]) -> dict[str, RecordedFeed]:
    """The feeds, by key, of live connections given in the order they were recorded."""
    feeds: dict[str, RecordedFeed] = {}
    ends: dict[str, list[tuple[int, End, bool]]] = {}
    seen: dict[str, _Seen] = {}
    for conn in order:
        feed = feeds.setdefault(conn.key, RecordedFeed())
        so_far = seen.setdefault(conn.key, _Seen())
        end = _merge(feed, conn, len(feed.entries) == 0 and not feed.preamble, so_far)
        if end is not None:
            ends.setdefault(conn.key, []).append(end)
    for name, feed in feeds.items():
        _place_ends(feed, ends.get(name, []))
        feed.entries.sort(key=lambda e: (e.after, e.index is None))
        t = 0.0
        for i, e in enumerate(feed.entries):  # times that never go back
            t = max(t, e.t)
            feed.entries[i] = Entry(t, e.text, e.index, e.after, e.seq)
    return feeds


def _merge(
    feed: RecordedFeed, conn: Conn, first: bool, so_far: _Seen
) -> tuple[int, End, bool] | None:
    """Add one connection's messages to its feed: each record at its index (the first
    arrival wins), other messages where the connection stood at the feed's front.
    ``so_far`` holds the feed's records so far and is updated.

    Returns the service's end of the connection, if it ended it: at the position its
    client would have resumed at (the records it carried in a row from its start), and
    whether it carried none.
    """
    seen = so_far.indices
    front = so_far.front
    origin: int | None = None
    nxt = conn.start
    last = conn.start - 1
    began = False
    carried: set[int] = set()
    for t, text in conn.messages:
        packet = _packet(text)
        seq = packet.seq
        if not packet.record:
            if first and not began:
                feed.preamble.append(text)
            elif began and last >= front:
                feed.entries.append(Entry(t, text, None, last))
            continue
        if origin is None:
            # The vendor numbers from 1 per connection; a server may go on from the start.
            origin = 0 if seq is not None and seq != 1 and seq == conn.start + 1 else conn.start
            if seq is not None and conn.start > 0 and feed.numbering is None:
                feed.numbering = "continue" if origin == 0 else "restart"
        index = origin + seq - 1 if seq is not None else nxt
        nxt, began = index + 1, True
        if index < 0:
            continue
        carried.add(index)
        if packet.finished:
            # The service ends a feed after its finishing record (the emulator closes
            # 1000); the recording client may have closed first, so that is not recorded.
            feed.ends.setdefault(index + 1, End(t, 1000))
        if index in seen:
            continue
        seen.add(index)
        last, front = index, max(front, index)
        feed.entries.append(Entry(t, text, index, index, seq))
    so_far.front = front
    if conn.end is None:
        return None
    reach = conn.start
    while reach in carried:
        reach += 1
    return reach, conn.end, reach == conn.start


def _place_ends(feed: RecordedFeed, ends: list[tuple[int, End, bool]]) -> None:
    """Put the recorded ends on the timeline: those of connections that carried records
    where they ended; those of connections that carried none only at or past the end
    (at an earlier position every connection from there would end at once)."""
    length = feed.length
    recorded: dict[int, End] = {}
    for position, end, empty in ends:
        if not empty or position >= length:
            recorded.setdefault(position, end)
    feed.ends = {**feed.ends, **recorded}  # the recorded end wins over the assumed one
