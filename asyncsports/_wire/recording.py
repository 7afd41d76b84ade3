"""Recordings, sans I/O: the JSON Lines events ``Client(record=...)`` writes and what
``Emulator(replay=...)`` makes of them.

A recording is one JSON object a line (gzip when the file name ends ``.gz``): a header
(``{"format": "asyncsports-recording", "version": 1, ...}``), then events in the order they
happened, each with ``e`` (its kind), ``id`` (its exchange or connection) and ``t`` (seconds
since the recording started):

- a request: ``get`` (``host``: data, streaming or live; ``path``; ``query``: pairs), then
  ``reply`` (``status``, ``headers``), ``body`` pieces (``text``, or ``b64`` for bytes that
  are not UTF-8) and ``end`` (``complete``: the body was read to its end); or ``failed``;
- a live connection: ``connect`` (as ``get``), then ``open``, ``refused`` (``status``) or
  ``failed``; ``sent`` (what the client sent), ``recv`` (each message) and ``closed``
  (``code``, ``by``: server, client or lost).

Secrets never reach a line: request headers are not recorded at all, and the secrets
policy (:mod:`asyncsports._wire.secrets`) hides the query's and a sent message's
credentials by name and every secret seen, in every form, in bodies (:class:`Pieces`),
messages and headers (:func:`kept_headers`). The rules where the vendor is silent are in
docs/wire.md, "Recordings".

A recording to replay is untrusted input: :class:`Lines` and :func:`read` refuse anything
malformed, cut short or over a limit (:data:`MAX_LINE`, :data:`MAX_BODY`,
:data:`MAX_TOTAL`) with a :class:`~asyncsports.errors.RecordingError`, and load in time
linear in its bytes.
"""

from __future__ import annotations

import base64
import bisect
import difflib
import re
import urllib.parse
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

import msgspec

from asyncsports._wire.secrets import HIDDEN, Secrets, is_credential
from asyncsports.errors import RecordingError

__all__ = [
    "FORMAT",
    "MAX_BODY",
    "MAX_LINE",
    "MAX_TOTAL",
    "REDACTED",
    "End",
    "Entry",
    "Exchange",
    "Feed",
    "Lines",
    "Nearest",
    "Pieces",
    "Plan",
    "Recording",
    "decode_payload",
    "encode",
    "kept_headers",
    "key",
    "nearest",
    "payload",
    "position",
    "read",
    "schedule",
    "split",
]

FORMAT = "asyncsports-recording"
VERSION = 1
REDACTED = HIDDEN
"""What a secret is written as (the secrets policy's mark)."""
_IGNORED = frozenset({"timestamp", "operatorId"})
"""Query parameters a replay does not match on, beside credentials (any
:func:`~asyncsports._wire.secrets.is_credential` name): who asks, and when it signed, vary."""
_LIVE_IGNORED = frozenset({"startPosition", "speed"})
_DROPPED_HEADERS = frozenset(
    {
        "content-length",
        "content-encoding",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "set-cookie",
        "authorization",
        "proxy-authorization",
    }
)
PIECE = 64 * 1024
MAX_LINE = 16 * 1024 * 1024
"""Bytes of one line of a recording to replay (a body piece is 64 KiB; a message, a few)."""
MAX_BODY = 256 * 1024 * 1024
"""Bytes of one recorded body, decoded (the client's own ``max_body_size`` is 64 MiB)."""
MAX_TOTAL = 2 * 1024 * 1024 * 1024
"""Bytes of a whole recording, inflated: a replay holds what it serves in memory."""

_encoder = msgspec.json.Encoder()
_any = msgspec.json.Decoder()


def encode(event: Mapping[str, Any]) -> bytes:
    """One line of the file."""
    return _encoder.encode(event) + b"\n"


def payload(data: bytes) -> dict[str, str]:
    """Bytes as a field: ``text`` when they are UTF-8 (JSON always is), else ``b64``."""
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(data).decode("ascii")}


def decode_payload(event: Mapping[str, Any]) -> bytes:
    """The bytes of a :func:`payload` field (ValueError: not base64, or not text)."""
    if "text" in event:
        text: str = event["text"]
        return text.encode("utf-8")
    return base64.b64decode(event.get("b64", ""), validate=True)


def kept_headers(secrets: Secrets, headers: Mapping[str, str]) -> dict[str, str]:
    """Response headers worth replaying: transport ones and cookies dropped, the rest with
    their secrets hidden (:meth:`Secrets.headers`)."""
    return secrets.headers({k: v for k, v in headers.items() if k.lower() not in _DROPPED_HEADERS})


class Pieces:
    """A body as scrubbed pieces of about :data:`PIECE` bytes, never cutting a secret.

    :meth:`feed` takes what arrived and returns a piece to write (or ``b""``); the last
    ``longest - 1`` bytes are held back, since a secret may go on in the next chunk, and
    the cut moves back to a UTF-8 character's start so that each piece stays text.
    """

    __slots__ = ("_buf", "_scrub", "size")

    def __init__(self, scrub: Secrets, size: int = PIECE) -> None:
        self._scrub = scrub
        self._buf = b""
        self.size = size

    def feed(self, chunk: bytes) -> bytes:
        buf = self._buf + chunk if self._buf else chunk
        if len(buf) < self.size:
            self._buf = buf
            return b""
        buf = self._scrub.bytes(buf)
        cut = max(0, len(buf) - max(0, self._scrub.longest - 1))
        while 0 < cut < len(buf) and (buf[cut] & 0xC0) == 0x80:
            cut -= 1
        self._buf = buf[cut:]
        return buf[:cut]

    def end(self) -> bytes:
        buf, self._buf = self._buf, b""
        return self._scrub.bytes(buf)


def split(url: str, bases: Mapping[str, str]) -> tuple[str, str, list[tuple[str, str]]]:
    """``(host, path, query)`` of a URL under one of ``bases`` (name -> base URL); the
    longest base wins (the emulator's streaming URL is under its base URL)."""
    target, _, query = url.partition("?")
    host, path = "", target
    for name, base in sorted(bases.items(), key=lambda b: -len(b[1])):
        if base and target.startswith(base):
            host, path = name, target[len(base) :]
            break
    pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
    return host, path or "/", pairs


def key(host: str, path: str, query: Iterable[tuple[str, str]] | Iterable[list[str]]) -> str:
    """What a replay matches a request by: host, path and the query sorted by name (the
    order of one name's values kept), credentials and live positions left out."""
    ignored = _LIVE_IGNORED | _IGNORED if host == "live" else _IGNORED
    kept = sorted(
        ((n, v) for n, v in query if n not in ignored and not is_credential(n)), key=lambda p: p[0]
    )
    qs = urllib.parse.urlencode(kept)
    return f"{host} {path}" + (f"?{qs}" if qs else "")


def nearest(target: str, keys: Iterable[str]) -> str | None:
    """The recorded key most like ``target`` (:meth:`Nearest.find`)."""
    return Nearest(keys).find(target)


class Nearest:
    """Recorded keys sorted by host and by host and path, for naming the nearest to a
    request not in the recording without a look at every key.

    The candidates are those of the same path (else of the same host) next to the target
    in sorted order, :data:`NEIGHBOURS` either side, which share the longest prefixes with
    it; the one most like it by text wins, compared on their first :data:`COMPARED`
    characters. So a miss costs a binary search and at most 64 comparisons of short
    strings, however large the recording.
    """

    NEIGHBOURS = 32
    COMPARED = 512

    __slots__ = ("_by_host", "_by_path")

    def __init__(self, keys: Iterable[str]) -> None:
        self._by_host: dict[str, list[str]] = {}
        self._by_path: dict[str, list[str]] = {}
        for k in keys:
            self._by_host.setdefault(k.partition(" ")[0], []).append(k)
            self._by_path.setdefault(k.partition("?")[0], []).append(k)
        for pool in (*self._by_host.values(), *self._by_path.values()):
            pool.sort()

    def find(self, target: str) -> str | None:
        """The recorded key most like ``target``: of its path if any, else of its host."""
        pool = self._by_path.get(target.partition("?")[0]) or self._by_host.get(
            target.partition(" ")[0]
        )
        if not pool:
            return None
        at = bisect.bisect_left(pool, target)
        near = pool[max(0, at - self.NEIGHBOURS) : at + self.NEIGHBOURS]
        head = target[: self.COMPARED]
        matcher = difflib.SequenceMatcher(None, b=head)  # b's index is built once

        def likeness(k: str) -> float:
            matcher.set_seq1(k[: self.COMPARED])
            return matcher.ratio()

        return max(near, key=likeness)


def position(raw: str) -> int | None:
    """A ``startPosition`` as given: ASCII digits, at most 18 (None: not one). ``str.isdigit``
    takes ``²`` and 5,000 digits, which ``int`` refuses or takes long over."""
    if not raw or len(raw) > 18 or not raw.isascii() or not raw.isdigit():
        return None
    return int(raw)


# --------------------------------------------------------------------------- reading


@dataclass
class Exchange:
    """One recorded REST answer."""

    status: int
    headers: dict[str, str]
    body: bytes = b""
    complete: bool = False


@dataclass(frozen=True, slots=True)
class Entry:
    """A live message on a feed's timeline: ``index`` is the record's position from the
    fixture's start (None: not a record, sent after record ``after``)."""

    t: float
    text: str
    index: int | None
    after: int
    seq: int | None = None


CUT = 1006
"""An end without a close frame (RFC 6455's code for it, never sent in one): a drop."""


@dataclass(frozen=True, slots=True)
class End:
    """The recorded service ending a connection, at ``t``, with close ``code`` (:data:`CUT`:
    the connection was cut)."""

    t: float
    code: int


@dataclass
class Feed:
    """One live feed's messages across its recorded connections.

    ``numbering`` is how the recorded service numbered ``fixtureSeqNum`` from a
    ``startPosition`` past 0 (None: no such connection shows it). ``ends`` maps a position
    to the recorded service's end of a connection there, after record ``position - 1``.
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
class Recording:
    """What a replay serves: answers per :func:`key` in the order recorded, and feeds."""

    exchanges: dict[str, list[Exchange]] = field(default_factory=dict)
    feeds: dict[str, Feed] = field(default_factory=dict)


_MARKERS = ("fixtureAction", "fixtureSeqNum", "teamActionAggregates", "advancedSportStatistics")


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


# Codes a close frame may carry (RFC 6455 7.4.1: 1004, 1005, 1006 and 1015 are never sent).
_SENDABLE = frozenset(range(1000, 5000)) - {1004, 1005, 1006, 1015}


def _by_the_service(closed: _Event) -> bool:
    """Whether the service ended a connection: not the client's own close (after a gap or
    a stall, or once it had the finishing record), nor its consumer cancelled mid-read."""
    by = closed.by
    return by == "server" or (by == "lost" and closed.error != "CancelledError")


@dataclass
class _Conn:
    key: str
    start: int
    messages: list[tuple[float, str]] = field(default_factory=list)
    end: End | None = None


_BLANKS = re.compile(rb"\n+")


class Lines:
    """A recording's bytes, as they come in ``chunks`` of any size, as its lines (without
    their newlines; blank ones skipped). A line is refused past ``line`` bytes before it
    is held whole, and the whole past ``total`` bytes: a gzip bomb of one line is refused
    after 16 MiB of it, not once it fills the memory.

    ``number`` is the number (from 1) of the line last given, or being read: what an error
    about the stream, or :func:`read` about a line, names.
    """

    __slots__ = ("_chunks", "file", "line", "number", "total")

    def __init__(
        self,
        chunks: Iterable[bytes],
        file: str = "<recording>",
        *,
        line: int = MAX_LINE,
        total: int = MAX_TOTAL,
    ) -> None:
        self._chunks = chunks
        self.file = file
        self.line = line
        self.total = total
        self.number = 1

    def __iter__(self) -> Iterator[bytes]:
        held: list[bytes] = []  # the line so far, joined once when it ends
        size = 0
        seen = 0
        for chunk in self._chunks:
            seen += len(chunk)
            if seen > self.total:
                raise RecordingError(
                    self.file, self.number, f"more than {self.total} bytes inflated"
                )
            start = 0
            while (nl := chunk.find(b"\n", start)) >= 0:
                if size + nl - start > self.line:
                    break
                if nl == start and size == 0:  # a run of blank lines, skipped in one step
                    run = _BLANKS.match(chunk, start)
                    assert run is not None
                    self.number += run.end() - start
                    start = run.end()
                    held.clear()
                    continue
                held.append(chunk[start:nl])
                yield b"".join(held)
                held.clear()
                size = 0
                start = nl + 1
                self.number += 1
            rest = len(chunk) - start if nl < 0 else nl - start
            if size + rest > self.line:
                raise RecordingError(
                    self.file, self.number, f"a line longer than {self.line} bytes"
                )
            if start < len(chunk):
                held.append(chunk[start:])
                size += len(chunk) - start
        if size:
            yield b"".join(held)


class _Event(msgspec.Struct, frozen=True, gc=False):
    """One event line, its types checked as it is decoded (a recording is untrusted)."""

    e: str
    id: int
    t: Annotated[float, msgspec.Meta(ge=0.0, le=1e9)]
    host: str | None = None
    path: str | None = None
    query: list[tuple[str, str]] = []
    status: Annotated[int, msgspec.Meta(ge=100, le=599)] | None = None
    headers: dict[str, str] = {}
    text: str | None = None
    b64: str | None = None
    complete: bool = False
    code: int | None = None
    by: str | None = None
    error: str | None = None


_events = msgspec.json.Decoder(_Event)


def _bytes_of(ev: _Event) -> bytes:
    return decode_payload({"text": ev.text} if ev.text is not None else {"b64": ev.b64 or ""})


@dataclass
class _Timeline:
    """A feed's records so far, kept across its connections (not rebuilt for each)."""

    seen: set[int] = field(default_factory=set)
    front: int = -1


def read(
    lines: Iterable[bytes], file: str = "<recording>", *, max_body: int = MAX_BODY
) -> Recording:
    """A recording's lines (header first; :class:`Lines`, which numbers them itself, or
    any lines) as what a replay serves, in time linear in its bytes.

    Raises :class:`~asyncsports.errors.RecordingError` (``file``, the line, what is wrong)
    for a file that is not a recording, a malformed line, a line over :data:`MAX_LINE`
    or a body over ``max_body`` bytes.
    """
    numbered = lines if isinstance(lines, Lines) else None
    if numbered is not None:
        file = numbered.file
    it = iter(lines)
    first = next(it, b"")
    _header(first, file, numbered.number if numbered is not None else 1)
    reader = _Reader(max_body)
    for count, line in enumerate(it, 2):
        number = numbered.number if numbered is not None else count
        if not line.strip():
            continue
        if len(line) > MAX_LINE:
            raise RecordingError(file, number, f"a line longer than {MAX_LINE} bytes")
        try:
            ev = _events.decode(line)
            reader.take(ev)
        except msgspec.ValidationError as exc:
            raise RecordingError(file, number, f"an event that does not fit: {exc}") from None
        except msgspec.DecodeError as exc:
            raise RecordingError(file, number, f"not JSON: {exc}") from None
        except ValueError as exc:
            raise RecordingError(file, number, f"{ev.e}: {exc}") from None
    return reader.finish()


def _header(first: bytes, file: str, number: int) -> None:
    """RecordingError unless ``first`` is the header of a recording this reads."""
    try:
        head = _any.decode(first)
    except msgspec.DecodeError:
        head = None
    if not isinstance(head, dict) or head.get("format") != FORMAT:
        what = "not an asyncsports recording (its first line has no format)"
        raise RecordingError(file, number, what)
    if head.get("version") != VERSION:
        what = f"recording version {head.get('version')!r}: this reads {VERSION}"
        raise RecordingError(file, number, what)


def _feeds(rec: Recording, order: list[_Conn]) -> None:
    """``rec``'s feeds from its live connections, in the order they were recorded."""
    ends: dict[str, list[tuple[int, End, bool]]] = {}
    timelines: dict[str, _Timeline] = {}
    for conn in order:
        feed = rec.feeds.setdefault(conn.key, Feed())
        timeline = timelines.setdefault(conn.key, _Timeline())
        end = _merge(feed, conn, len(feed.entries) == 0 and not feed.preamble, timeline)
        if end is not None:
            ends.setdefault(conn.key, []).append(end)
    for name, feed in rec.feeds.items():
        _place_ends(feed, ends.get(name, []))
        feed.entries.sort(key=lambda e: (e.after, e.index is None))
        t = 0.0
        for i, e in enumerate(feed.entries):  # times that never go back
            t = max(t, e.t)
            feed.entries[i] = Entry(t, e.text, e.index, e.after, e.seq)


@dataclass
class _Reader:
    """What :func:`read` builds, one event at a time: a handler per kind of event
    (:data:`_HANDLERS`); ValueError from one says the event makes no sense."""

    max_body: int
    rec: Recording = field(default_factory=Recording)
    keys: dict[int, str] = field(default_factory=dict)
    """Each request's key, by its id."""
    bodies: dict[int, tuple[Exchange, list[bytes]]] = field(default_factory=dict)
    """The replies whose body is still coming, with its pieces so far, by id."""
    sizes: dict[int, int] = field(default_factory=dict)
    conns: dict[int, _Conn] = field(default_factory=dict)
    order: list[_Conn] = field(default_factory=list)
    """The live connections in the order they opened."""

    def take(self, ev: _Event) -> None:
        """Take one event in; an event of a kind this does not know is left out."""
        handler = _HANDLERS.get(ev.e)
        if handler is not None:
            handler(self, ev)

    def finish(self) -> Recording:
        """The recording, its feeds built from the live connections."""
        for answer, parts in self.bodies.values():  # the recording stopped mid-body
            answer.body = b"".join(parts)
        _feeds(self.rec, self.order)
        return self.rec

    def request(self, ev: _Event) -> None:
        """A ``get`` or a live ``connect``."""
        if ev.host is None or ev.path is None:
            raise ValueError("host and path are required")
        self.keys[ev.id] = key(ev.host, ev.path, ev.query)
        if ev.e == "connect":
            raw = dict(ev.query).get("startPosition", "0")
            start = position(raw)
            if start is None:
                raise ValueError(f"startPosition {raw[:40]!r}: expected 0 to 18 digits")
            self.conns[ev.id] = _Conn(self.keys[ev.id], start)

    def reply(self, ev: _Event) -> None:
        if ev.status is None:
            raise ValueError("status is required")
        if ev.id not in self.keys:
            raise ValueError(f"a reply to request {ev.id}, which was not recorded")
        answer = Exchange(ev.status, ev.headers)
        self.bodies[ev.id] = (answer, [])
        self.sizes[ev.id] = 0
        self.rec.exchanges.setdefault(self.keys[ev.id], []).append(answer)

    def body(self, ev: _Event) -> None:
        if ev.id not in self.bodies:
            return
        piece = _bytes_of(ev)
        self.sizes[ev.id] += len(piece)
        if self.sizes[ev.id] > self.max_body:
            raise ValueError(f"a body longer than {self.max_body} bytes")
        self.bodies[ev.id][1].append(piece)

    def end(self, ev: _Event) -> None:
        if ev.id not in self.bodies:
            return
        answer, parts = self.bodies.pop(ev.id)
        answer.body = b"".join(parts)  # joined once: += would copy the body for each piece
        answer.complete = ev.complete

    def opened(self, ev: _Event) -> None:
        if ev.id in self.conns:
            self.order.append(self.conns[ev.id])

    def received(self, ev: _Event) -> None:
        if ev.id in self.conns:
            self.conns[ev.id].messages.append((ev.t, _bytes_of(ev).decode("utf-8", "replace")))

    def closed(self, ev: _Event) -> None:
        if ev.id in self.conns and _by_the_service(ev):
            code = ev.code
            self.conns[ev.id].end = End(ev.t, code if code in _SENDABLE else CUT)


_HANDLERS: dict[str, Callable[[_Reader, _Event], None]] = {
    "get": _Reader.request,
    "connect": _Reader.request,
    "reply": _Reader.reply,
    "body": _Reader.body,
    "end": _Reader.end,
    "open": _Reader.opened,
    "recv": _Reader.received,
    "closed": _Reader.closed,
}
"""Each kind of event line, the :class:`_Reader` method that takes it."""


def _merge(
    feed: Feed, conn: _Conn, first: bool, timeline: _Timeline
) -> tuple[int, End, bool] | None:
    """Add one connection's messages to its feed: each record at its index (the first
    arrival wins), other messages where the connection stood at the feed's front.
    ``timeline`` holds the feed's records so far and is updated.

    Returns the service's end of the connection, if it ended it: at the position its
    client would have resumed at (the records it carried in a row from its start), and
    whether it carried none.
    """
    seen = timeline.seen
    front = timeline.front
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
    timeline.front = front
    if conn.end is None:
        return None
    reach = conn.start
    while reach in carried:
        reach += 1
    return reach, conn.end, reach == conn.start


def _place_ends(feed: Feed, ends: list[tuple[int, End, bool]]) -> None:
    """Put the recorded ends on the timeline: those of connections that carried records
    where they ended; those of connections that carried none only at or past the end
    (at an earlier position every connection from there would end at once)."""
    length = feed.length
    recorded: dict[int, End] = {}
    for position, end, empty in ends:
        if not empty or position >= length:
            recorded.setdefault(position, end)
    feed.ends = {**feed.ends, **recorded}  # the recorded end wins over the assumed one


_SEQ = re.compile(r'("fixtureSeqNum"\s*:\s*"?)(-?\d+)')


@dataclass(frozen=True, slots=True)
class Plan:
    """What one replayed connection is sent: ``messages`` (seconds after the first, text),
    then, ``at`` seconds after the first, the end: a close ``code``, :data:`CUT` (no close
    frame) or None (left open: the recorded service ended no connection there)."""

    messages: list[tuple[float, str]]
    code: int | None = None
    at: float = 0.0


def schedule(feed: Feed, start: int) -> Plan:
    """What a connection at ``startPosition`` ``start`` is sent: the records from index
    ``start`` on, numbered as the recorded service numbered them (from 1 on the connection,
    or ``index + 1`` when it went on numbering; rewritten only where the recording numbered
    them otherwise), up to the first recorded end past ``start``, and that end."""
    length = feed.length
    end_at = min((p for p in feed.ends if p > start), default=None)
    if end_at is None and start >= length:
        # Nothing to send: the service's end at or past the timeline's end, if recorded.
        end_at = max((p for p in feed.ends if length <= p <= start), default=None)
    restart = feed.numbering != "continue"
    out: list[tuple[float, str]] = []
    t0: float | None = None
    t = 0.0
    for e in feed.entries:
        if e.after < start:
            continue
        if end_at is not None and e.after >= end_at:
            break
        text = e.text
        if e.index is not None and e.seq is not None:
            want = e.index - start + 1 if restart else e.index + 1
            if e.seq != want:
                text = _SEQ.sub(rf"\g<1>{want}", text, count=1)
        t0 = e.t if t0 is None else t0
        t = e.t
        out.append((e.t - t0, text))
    if end_at is None:
        return Plan(out)
    end = feed.ends[end_at]
    at = max(end.t, t) - t0 if t0 is not None else 0.0
    return Plan(out, end.code, at)
