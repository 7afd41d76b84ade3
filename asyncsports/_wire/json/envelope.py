"""The text around a streamed JSON array: ``[`` and what follows ``]``, or ``{"data": [...]}``.

:class:`Envelope` parses it as it arrives, checking every member it skips, and reports
where the array of interest opens (:class:`Array`) or, for a key holding an object, that
one value as a run (:class:`Element`). It holds what it has not parsed yet; the array's
own bytes are :class:`~asyncsports._wire.json.array.ArrayCutter`'s.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import msgspec

from asyncsports._wire.decoding import FAILURES, Source, around, error, value_error
from asyncsports._wire.json.scan import NONWS, SCALAR, STR_FULL, Skim
from asyncsports.errors import DecodeError

__all__ = ["Array", "Element", "Envelope"]

_ANY = msgspec.json.Decoder()

# Where the parser is: before the body, before a member's name (the first, or a later
# one), before its colon, before its value, inside a value being skipped, after a value,
# after the body.
_OPEN, _KEY1, _KEY, _COLON, _VALUE, _SKIP, _NEXT, _TRAIL = range(8)


class Array(NamedTuple):
    """The array opened: the bytes that arrived after its ``[``, and their body offset."""

    data: bytes
    offset: int


class Element(NamedTuple):
    """The key holds an object: that one value as a run ``[{...}]`` (``offset``: of ``{``)."""

    run: bytes
    offset: int


class Envelope:
    """Parses the text outside the array as it arrives.

    ``key=None``: the body is the array itself. ``key="data"``: the body is an object and
    the array is that member's value; other members are skipped (and checked); an object
    value is one element; ``null`` or a missing member means no elements. ``path`` and
    ``src`` go into the errors.
    """

    def __init__(self, key: str | None, path: str, src: Source) -> None:
        self.key = key
        self.path = path
        self.src = src
        self.found = False  # the member named key was seen
        self._st = _OPEN
        self._tb = bytearray()
        self._tbase = 0  # body offset of _tb[0]
        self._tp = 0
        self._target = False  # the member being parsed is the one named key
        self._vsk = Skim()
        self._vstart = 0

    @property
    def buffered(self) -> int:
        """Bytes held: a member being skipped, or text not parsed yet."""
        return len(self._tb)

    def feed(self, chunk: bytes, final: bool = False) -> Array | Element | None:
        """Take the next chunk (``final``: the last) and parse as far as it goes."""
        self._tb += chunk
        return self.parse(final)

    def resume(self, rest: bytes, offset: int, final: bool) -> None:
        """The array closed: parse what follows its ``]`` (body offset ``offset``)."""
        self._tb = bytearray(rest)
        self._tbase = offset
        self._tp = 0
        self._st = _NEXT if self.key is not None else _TRAIL
        self.parse(final)

    # A state machine, one arm per place in the envelope, resumable at any byte: split
    # into a method per state, each would pass back where it stopped and what it found.
    def parse(self, final: bool) -> Array | Element | None:  # noqa: C901, PLR0912, PLR0915
        """Parse what has arrived; raise DecodeError if it is wrong (or, if ``final``, cut short)."""
        tb = self._tb
        p = self._tp
        out = None
        while True:
            st = self._st
            if st == _SKIP:
                closer, p = self._vsk.scan(tb, p)
                if closer < 0:
                    break
                out = self._skipped(closer) or out
                p = closer + 1
                continue
            m = NONWS.search(tb, p)
            if m is None:
                p = len(tb)
                break
            i = m.start()
            c = tb[i]
            if st == _OPEN:
                want = 0x7B if self.key is not None else 0x5B
                if c != want:
                    raise self._fail(f"JSON is malformed: expected '{chr(want)}'", i)
                if self.key is None:
                    return self._open(i)
                p = i + 1
                self._st = _KEY1
            elif st in (_KEY1, _KEY):
                if st == _KEY1 and c == 0x7D:
                    p = i + 1
                    self._st = _TRAIL
                    continue
                p = self._name(i, c)
                if p < 0:
                    p = i  # the name goes on in the next chunk
                    break
                self._st = _COLON
            elif st == _COLON:
                if c != 0x3A:
                    raise self._fail("JSON is malformed: expected ':'", i)
                p = i + 1
                self._st = _VALUE
            elif st == _VALUE:
                p, opened = self._value(i, c, final)
                if opened is not None:
                    return opened
                if p < 0:
                    p = i  # the value goes on in the next chunk
                    break
            elif st == _NEXT:
                self._st = self._after_member(i, c)
                p = i + 1
            else:
                raise self._fail("JSON is malformed: trailing characters", i)
        self._keep(p)
        if final and self._st != _TRAIL:
            raise self._truncated()
        return out

    def _truncated(self) -> DecodeError:
        tb = self._tb
        return error(
            self.src,
            "JSON is truncated",
            path=self.path if self.found else "$",
            offset=self._tbase + len(tb),
            snippet=tb[max(0, len(tb) - 80) :],
        )

    def _keep(self, p: int) -> None:
        """Parsed up to ``p``: drop what is parsed, unless a skipped value still needs it."""
        if self._st != _SKIP and p > 65536:
            del self._tb[:p]
            self._tbase += p
            p = 0
        self._tp = p

    def _value(self, i: int, c: int, final: bool) -> tuple[int, Array | None]:
        """A member's value at ``i``: where parsing goes on (-1: the value is not all
        here), and the named array if this value opens it."""
        if c == 0x5B or c == 0x7B:
            if self._target:
                self.found = True
                if c == 0x5B:
                    return i, self._open(i)
            self._vsk = Skim()
            self._vstart = i
            self._st = _SKIP
            return i + 1, None
        p = self._scalar(i, c, final)
        if p >= 0:
            self._st = _NEXT
        return p, None

    def _after_member(self, i: int, c: int) -> int:
        """The state after a member, from the character ``c`` at ``i`` that follows it."""
        if c == 0x2C:
            return _KEY
        if c == 0x7D:
            return _TRAIL
        raise self._fail("JSON is malformed: expected ',' or '}'", i)

    def _open(self, i: int) -> Array:
        found = Array(bytes(self._tb[i + 1 :]), self._tbase + i + 1)
        self._tb = bytearray()  # the array's bytes are the cutter's now
        return found

    def _skipped(self, closer: int) -> Element | None:
        """The value that started at ``_vstart`` closes at ``closer``: check it, or frame it."""
        tb = self._tb
        v0 = self._vstart
        self._st = _NEXT
        if tb[closer] != (0x7D if tb[v0] == 0x7B else 0x5D):
            raise self._fail("JSON is malformed: mismatched bracket", closer)
        if self._target:
            return Element(b"".join((b"[", tb[v0 : closer + 1], b"]")), self._tbase + v0)
        self._check(v0, closer + 1)
        return None

    def _name(self, i: int, c: int) -> int:
        """A member's name at ``i``: the position after it, or -1 if it is not all here."""
        if c != 0x22:
            raise self._fail("JSON is malformed: expected '\"'", i)
        m = STR_FULL.match(self._tb, i)
        if m is None:
            return -1
        self._target = self._check(i, m.end()) == self.key
        if self._target and self.found:
            raise self._fail(f"duplicate key {self.key!r}", i)
        return m.end()

    def _scalar(self, i: int, c: int, final: bool) -> int:
        """A scalar value at ``i``: the position after it, or -1 if it is not all here."""
        tb = self._tb
        m = (STR_FULL if c == 0x22 else SCALAR).match(tb, i)
        if m is None:
            if c != 0x22:
                raise self._fail("JSON is malformed: invalid character", i)
            return -1
        if m.end() == len(tb) and c != 0x22 and not final:
            return -1  # a number may go on in the next chunk
        value = self._check(i, m.end())
        if self._target:
            if value is not None:
                raise self._fail(f"expected an array, an object or null at {self.path}", i)
            self.found = True
        return m.end()

    def _check(self, start: int, end: int) -> Any:
        """Decode the value at ``_tb[start:end]``, untyped, which checks it."""
        try:
            return _ANY.decode(bytes(self._tb[start:end]))
        except FAILURES as exc:
            raise value_error(self.src, exc, self._tb, start, end, self._tbase) from None

    def _fail(self, reason: str, at: int) -> DecodeError:
        return error(self.src, reason, offset=self._tbase + at, snippet=around(self._tb, at))
