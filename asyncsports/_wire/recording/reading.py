"""Reading a recording to replay, which is untrusted input: :class:`Lines` and :func:`read`
refuse anything malformed, cut short or over a limit (:data:`MAX_LINE`, :data:`MAX_BODY`,
:data:`MAX_TOTAL`) with a :class:`~asyncsports.errors.RecordingError`, and load it in time
linear in its bytes, as what a replay serves (:class:`Recording`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Annotated

import msgspec

from asyncsports._wire.recording.feeds import Conn, RecordedFeed, build, end_at
from asyncsports._wire.recording.format import FORMAT, VERSION, decode_payload, key, position
from asyncsports.errors import RecordingError

__all__ = ["MAX_BODY", "MAX_LINE", "MAX_TOTAL", "Exchange", "Lines", "Recording", "read"]

MAX_LINE = 16 * 1024 * 1024
"""Bytes of one line of a recording to replay (a body piece is 64 KiB; a message, a few)."""
MAX_BODY = 256 * 1024 * 1024
"""Bytes of one recorded body, decoded (the client's own ``max_body_size`` is 64 MiB)."""
MAX_TOTAL = 2 * 1024 * 1024 * 1024
"""Bytes of a whole recording, inflated: a replay holds what it serves in memory."""

_any = msgspec.json.Decoder()


@dataclass
class Exchange:
    """One recorded REST answer."""

    status: int
    headers: dict[str, str]
    body: bytes = b""
    complete: bool = False


@dataclass
class Recording:
    """What a replay serves: answers per :func:`~.format.key` in the order recorded, and
    the live feeds by key."""

    exchanges: dict[str, list[Exchange]] = field(default_factory=dict)
    feeds: dict[str, RecordedFeed] = field(default_factory=dict)


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
    conns: dict[int, Conn] = field(default_factory=dict)
    order: list[Conn] = field(default_factory=list)
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
        self.rec.feeds = build(self.order)
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
            self.conns[ev.id] = Conn(self.keys[ev.id], start)

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
            self.conns[ev.id].end = end_at(ev.t, ev.code)


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


def _by_the_service(ev: _Event) -> bool:
    """Whether the service ended a connection: not the client's own close (after a gap or
    a stall, or once it had the finishing record), nor its consumer cancelled mid-read."""
    return ev.by == "server" or (ev.by == "lost" and ev.error != "CancelledError")
