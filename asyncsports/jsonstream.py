"""Incremental framing of a JSON array as its bytes arrive (sans-I/O).

:class:`ArrayFramer` turns chunks of a body into *runs*: whole top-level elements framed
as a JSON array text (``b"[e1,e2]"``), each ready for one
``msgspec.json.Decoder(list[T]).decode``. :func:`decode_array` drives a framer over an
async iterator of chunks and yields the decoded batches.

Speed: the elements of a real array start alike (``,{"version":`` for action records), so
once the framer has seen one top-level boundary it learns that *head* and cuts each chunk
at the head's last occurrence, found by ``bytes.rfind``; nothing else reads the bytes
before msgspec does. A head may also occur inside an element (a nested object with the
same first key; inside a string only if the head holds no quote), so a cut is a guess, and
decoding checks it: if the text before a comma decodes as an array, that comma is a
top-level one (a cut inside a string leaves the string open, one inside a nested value
leaves it unclosed, and a comma cannot end a number early). A guess that fails to decode
is taken back, and that stretch is framed by an exact scanner (a regex jumping from string
to string and bracket to bracket, about 2.5x the cost of decoding), which also finds the
first boundary, the array's end and the end of input, and learns the head again.

Counting: :attr:`ArrayFramer.count` is the number of elements in the runs returned so
far. ``feed`` checks each guessed run with an untyped decode (``list[msgspec.Raw]``, a
fraction of a typed decode's cost), which also counts it. :func:`decode_array` leaves
that out, its typed decode checks the same; it counts what it decodes, and for ``skip``
splits the leading runs with the untyped decode, so skipped elements are never decoded
into ``T``.
"""

from __future__ import annotations

import re
import typing
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, Generic, TypeVar

import msgspec

from asyncsports.errors import DecodeError

__all__ = ["ArrayFramer", "decode_array"]

T = TypeVar("T")

# A complete JSON string, or a lone quote when the buffer ends inside one.
_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
_TOP = re.compile(_STRING + rb'|[{}\[\],"]', re.S)  # at the array's top level commas matter
_NEST = re.compile(_STRING + rb'|[{}\[\]"]', re.S)  # deeper, they do not
_STR_REST = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.S)  # the rest of an open string
_STR_FULL = re.compile(_STRING, re.S)
_NONWS = re.compile(rb"[^ \t\n\r]")
_SCALAR = re.compile(rb'[^ \t\n\r{}\[\],:"]+')
# What follows a top-level comma: whitespace, then the next element's opening and, for an
# object, its first key and colon. This is the pattern the fast path searches for.
_HEAD = re.compile(rb',[ \t\n\r]*(?:(\{)[ \t\n\r]*(?:"[^"\\]{1,64}"[ \t\n\r]*:)?|\[|")?')
_BYTE = re.compile(r" \(byte (\d+)\)$")
_RAW_LIST = msgspec.json.Decoder(list[msgspec.Raw])
_ANY = msgspec.json.Decoder()

_SNIPPET = 200
_LIMIT = 1 << 20  # bytes buffered without a head match before the exact scanner takes over
_LIMIT_MAX = 1 << 26
_MAX_BAD = 8  # wrong guesses tolerated before the fast path is given up for this body

# Phases of the text outside the array, and states of the member parser.
_OPEN, _KEY1, _KEY, _COLON, _VALUE, _SKIP, _NEXT, _TRAIL = range(8)


class _Skim:
    """Exact structural scanner: nesting depth and string state, resumable across calls.

    It finds top-level commas and the closer of the enclosing value; it does not check
    bracket kinds or scalars (msgspec does when the run is decoded).
    """

    __slots__ = ("commas", "depth", "esc", "first", "in_str", "last")

    def __init__(self, commas: list[int] | None = None) -> None:
        self.depth = 0
        self.in_str = False
        self.esc = False
        self.first = -1
        self.last = -1
        self.commas = commas

    def scan(self, buf: bytes | bytearray, pos: int, stop_first: bool = False) -> tuple[int, int]:
        """Scan ``buf[pos:]``; return (index of the closer at depth 0 or -1, position reached)."""
        n = len(buf)
        depth, in_str, esc = self.depth, self.in_str, self.esc
        top, nest, rest = _TOP.search, _NEST.search, _STR_REST.match
        closer = -1
        while pos < n:
            if in_str:
                if esc:
                    esc = False
                    pos += 1
                    continue
                e = rest(buf, pos).end()  # type: ignore[union-attr]  # always matches
                if e >= n:
                    pos = n
                    break
                if buf[e] == 0x22:
                    in_str = False
                    pos = e + 1
                    continue
                # A backslash as the last byte: the escaped byte comes in the next chunk.
                esc = True
                pos = e + 1
                continue
            m = (top if depth == 0 else nest)(buf, pos)
            if m is None:
                pos = n
                break
            i = m.start()
            c = buf[i]
            pos = m.end()
            if c == 0x22:
                in_str = pos - i == 1  # a lone quote: the string runs past the buffer
                continue
            if c == 0x2C:
                if self.first < 0:
                    self.first = i
                self.last = i
                if self.commas is not None:
                    self.commas.append(i)
                if stop_first:
                    break
                continue
            if c == 0x7B or c == 0x5B:
                depth += 1
                continue
            if depth == 0:
                closer = i
                break
            depth -= 1
        self.depth, self.in_str, self.esc = depth, in_str, esc
        return closer, pos


def _learn_head(buf: bytes | bytearray, c: int) -> bytes | None:
    """The head at the top-level comma ``c``, or None while the buffer may cut it short."""
    m = _HEAD.match(buf, c)
    assert m is not None
    e = m.end()
    if e >= len(buf):
        return None
    if m.group(1) is not None and buf[e - 1] != 0x3A and len(buf) - e < 80:
        return None  # an object whose first key may still be arriving
    return bytes(buf[c:e])


def _snip(data: bytes | bytearray) -> str:
    text = bytes(data).decode("utf-8", "replace")
    return text if len(text) <= _SNIPPET else text[: _SNIPPET - 3] + "..."


def _key_path(key: str | None) -> str:
    if key is None:
        return "$"
    if key.isidentifier():
        return f"$.{key}"
    return f"$[{msgspec.json.encode(key).decode()}]"


def _spans(run: bytes) -> list[tuple[int, int]]:
    """Start and end (run indices, whitespace trimmed) of each element of a run."""
    sk = _Skim(commas=[])
    closer, _ = sk.scan(run, 1)
    assert sk.commas is not None
    ends = [*sk.commas, closer if closer >= 0 else len(run) - 1]
    out = []
    start = 1
    for end in ends:
        m = _NONWS.search(run, start, end)
        s = m.start() if m else start
        e = end
        while e > s and run[e - 1] in b" \t\n\r":
            e -= 1
        out.append((s, e))
        start = end + 1
    return out


def _bad_utf8(data: bytes) -> int:
    """Index of the first byte that is not UTF-8 (msgspec's error does not say)."""
    try:
        data.decode()
    except UnicodeDecodeError as exc:
        return exc.start
    return len(data) - 1


def _element_at(spans: list[tuple[int, int]], index: int) -> int:
    """The element holding run index ``index``."""
    j = 0
    for k, (s, _) in enumerate(spans):
        if s <= index:
            j = k
    return j


class ArrayFramer:
    """Frames the elements of a JSON array from chunks of the body.

    ``key=None``: the body is a JSON array. ``key="data"``: the body is an object and the
    array is the value of that key; other members are skipped (and checked); an object
    value counts as one element; ``null`` or a missing key means no elements.

    :meth:`feed` returns a run (``b"[e1,e2,...]"``) of whole elements or None;
    :meth:`close` returns the last run and raises :class:`DecodeError` (with the byte
    offset in the body) when the input was truncated or malformed. :attr:`count` is the
    number of elements in the runs returned so far; :attr:`run_offset` is the body
    offset of the byte after the ``[`` of the last run.
    """

    def __init__(self, key: str | None = None) -> None:
        self.key = key
        self.count = 0
        self.run_offset = 0
        self._verify = True  # decode_array turns this off: its typed decode checks guesses
        self._final = False
        self._total = 0
        self._single = False
        # The text outside the array (the object around it, and what follows it).
        self._in_array = False
        self._st = _OPEN
        self._tb = bytearray()
        self._tbase = 0
        self._tp = 0
        self._target = False
        self._found = False
        self._vsk = _Skim()
        self._vstart = 0
        # The array: a carry of chunks (fast mode) or a bytearray being scanned exactly.
        self._pieces: list[bytes] = []
        self._plen = 0
        self._base = 0
        self._ex: bytearray | None = None
        self._exp = 0
        self._sk = _Skim()
        self._head: bytes | None = None
        self._learn = True
        self._bad = 0
        self._guesses = 0
        self._limit = _LIMIT
        self._after_comma = False
        self._undo: tuple[list[bytes], int, int, bool, int] | None = None
        self._guessed = False

    # public -------------------------------------------------------------------------

    def feed(self, chunk: bytes) -> bytes | None:
        """Take the next chunk; return a run of whole elements, or None if none is complete."""
        if not chunk:
            return None
        if not isinstance(chunk, bytes):
            chunk = bytes(chunk)
        self._total += len(chunk)
        if self._in_array:
            run = self._arr_feed(chunk)
        else:
            self._tb += chunk
            run = self._parse()
        return self._checked(run)

    def close(self) -> bytes | None:
        """End of input: return the last run, or raise DecodeError if the body is incomplete."""
        self._final = True
        run = self._arr_finish() if self._in_array else self._parse()
        return self._checked(run)

    # checking guessed runs ------------------------------------------------------------

    def _checked(self, run: bytes | None) -> bytes | None:
        if run is None or not self._verify:
            return run
        while True:
            try:
                n = len(_RAW_LIST.decode(run))
            except msgspec.DecodeError as exc:
                if self._guessed:
                    run = self._reject()
                    if run is None:
                        return None
                    continue
                raise _map_error(
                    exc, run, self.run_offset, self._key_prefix(), self.count, single=self._single
                ) from None
            self.count += n
            return run

    def _reject(self) -> bytes | None:
        """Take back the last (guessed) run and frame that stretch exactly instead."""
        assert self._undo is not None
        pieces, _, base, after, guessed_len = self._undo
        self._undo = None
        self._guessed = False
        self._pieces, self._plen = [], 0
        self._base, self._after_comma = base, after
        self._ex = bytearray(b"".join(pieces))
        self._exp = 0
        self._sk = _Skim()
        run = self._exact_step(stop_first=False)
        if run is None or len(run) != guessed_len:
            # The head also occurs inside elements. Each wrong guess costs a wasted decode,
            # so give up guessing for this body when it happens often.
            self._bad += 1
            if self._bad >= _MAX_BAD and self._bad * 4 > self._guesses:
                self._head = None
                self._learn = False
        return run

    # the array ---------------------------------------------------------------------------

    def _arr_begin(self, data: bytes, base: int) -> bytes | None:
        self._in_array = True
        self._base = base
        self._pieces, self._plen = [], 0
        self._ex = bytearray(data)
        self._exp = 0
        self._sk = _Skim()
        if self._final:
            return self._arr_finish()
        return self._exact_step(stop_first=self._learn) if data else None

    def _arr_feed(self, chunk: bytes) -> bytes | None:
        head = self._head
        if head is None and self._ex is None:
            self._to_exact()  # guessing was given up
        if self._ex is not None:
            self._ex += chunk
            return self._exact_step(stop_first=head is None and self._learn)
        assert head is not None
        c = chunk.rfind(head)
        if c >= 0:
            c += self._plen
        elif len(head) > 1 and self._pieces:
            c = self._straddle(chunk, head)
        self._pieces.append(chunk)
        self._plen += len(chunk)
        if c >= 0:
            return self._fast_cut(c, guessed=True)
        if self._plen <= self._limit:
            return None
        # No head for a long stretch: the elements start differently (the exact scan learns
        # a new head) or one element is that long (then wait longer next time).
        self._to_exact()
        run = self._exact_step(stop_first=False)
        if run is None and self._in_array:
            self._limit = min(self._limit * 2, _LIMIT_MAX)
        return run

    def _straddle(self, chunk: bytes, head: bytes) -> int:
        """A head that starts in the carry and ends in ``chunk`` (relative to the carry)."""
        need = len(head) - 1
        tail = b""
        for piece in reversed(self._pieces):
            tail = piece[-(need - len(tail)) :] + tail
            if len(tail) >= need:
                break
        j = (tail + chunk[:need]).rfind(head)
        return self._plen - len(tail) + j if j >= 0 else -1

    def _to_exact(self) -> None:
        self._ex = bytearray(b"".join(self._pieces))
        self._pieces, self._plen = [], 0
        self._exp = 0
        self._sk = _Skim()

    def _to_fast(self, data: bytes) -> None:
        self._ex = None
        self._pieces = [data] if data else []
        self._plen = len(data)

    def _empty_element(self, at: int) -> DecodeError:
        return DecodeError(
            "JSON is malformed: expected a value before ','",
            path=self._key_prefix(),
            offset=self._base + at,
            snippet=self._window(at),
        )

    def _window(self, at: int) -> str:
        buf = self._ex if self._ex is not None else b"".join(self._pieces)
        return _snip(buf[max(0, at - 40) : at + 40])

    def _fast_cut(self, c: int, guessed: bool) -> bytes:
        """Cut the carry at the comma at ``c``: the run is everything before it."""
        pieces = self._pieces
        acc = 0
        for piece in pieces:  # the run must hold an element, not only whitespace
            m = _NONWS.search(piece)
            if m is not None:
                if acc + m.start() >= c:
                    raise self._empty_element(c)
                break
            acc += len(piece)
        acc = 0
        k = 0
        while acc + len(pieces[k]) <= c:
            acc += len(pieces[k])
            k += 1
        off = c - acc
        with memoryview(pieces[k]) as mv:
            run = b"".join([b"[", *pieces[:k], mv[:off], b"]"])
        rest = pieces[k][off + 1 :]
        if k + 1 < len(pieces):
            rest = b"".join([rest, *pieces[k + 1 :]])
        self._undo = (pieces, self._plen, self._base, self._after_comma, len(run))
        self.run_offset = self._base
        self._base += c + 1
        self._after_comma = True
        self._guessed = guessed
        self._guesses += guessed
        self._pieces = [rest] if rest else []
        self._plen = len(rest)
        return run

    def _exact_step(self, stop_first: bool) -> bytes | None:
        """Scan the new part of the exact buffer; cut at its last top-level comma."""
        ex, sk = self._ex, self._sk
        assert ex is not None
        while True:
            closer, self._exp = sk.scan(ex, self._exp, stop_first)
            if closer >= 0:
                return self._arr_close(closer)
            if not (stop_first and self._exp < len(ex) and sk.first >= 0):
                break
            head = _learn_head(ex, sk.first)
            if head is not None:
                # Learned: the rest of this buffer goes through the fast path at once.
                self._head = head
                first = sk.first
                c = ex.rfind(head, first)
                self._to_fast(bytes(ex))
                return self._fast_cut(c, guessed=c != first)
            stop_first = False
        if sk.last < 0:
            return None
        c = sk.last
        if _NONWS.search(ex, 0, c) is None:
            raise self._empty_element(c)
        run = b"".join((b"[", ex[:c], b"]"))
        self._undo = None
        self._guessed = False
        self.run_offset = self._base
        self._base += c + 1
        self._after_comma = True
        if self._learn:
            self._relearn(ex, sk.first, c)
        if self._head is not None:
            self._to_fast(bytes(ex[c + 1 :]))
        else:
            del ex[: c + 1]
            self._exp -= c + 1
            sk.first = sk.last = -1
        return run

    def _relearn(self, ex: bytearray, first: int, last: int) -> None:
        """Learn the head again from the boundaries an exact scan found.

        Elements may not all start alike: where the first and the last boundary differ,
        what they have in common is the head (``,{"`` when the first keys differ).
        """
        a = _learn_head(ex, first)
        b = _learn_head(ex, last) if last != first else a
        if a is None or b is None:
            head = a or b
        else:
            n = 0
            while n < min(len(a), len(b)) and a[n] == b[n]:
                n += 1
            head = a[:n]
        if head:
            self._head = head

    def _arr_finish(self) -> bytes | None:
        """At the end of input: the rest of the array must be here, ending in ``]``."""
        if self._ex is None:
            self._to_exact()
        run = self._exact_step(stop_first=False)
        if self._in_array:
            raise DecodeError(
                "JSON is truncated: the array is not closed",
                path=self._key_prefix(),
                offset=self._total,
                snippet=self._window(len(self._ex) if self._ex is not None else self._plen),
            )
        return run

    def _arr_close(self, e: int) -> bytes | None:
        ex = self._ex
        assert ex is not None
        base = self._base
        if ex[e] != 0x5D:
            raise DecodeError(
                "JSON is malformed: expected ',' or ']'",
                path=self._key_prefix(),
                offset=base + e,
                snippet=self._window(e),
            )
        run = None
        if _NONWS.search(ex, 0, e) is not None:
            run = b"".join((b"[", ex[:e], b"]"))
            self.run_offset = base
        elif self._after_comma:
            raise DecodeError(
                "JSON is malformed: trailing comma in array",
                path=self._key_prefix(),
                offset=base - 1,
                snippet=self._window(e),
            )
        self._undo = None
        self._guessed = False
        self._in_array = False
        self._tb = bytearray(ex[e + 1 :])
        self._tbase = base + e + 1
        self._tp = 0
        self._ex = None
        self._st = _NEXT if self.key is not None else _TRAIL
        self._parse()
        return run

    # the text around the array ------------------------------------------------------------

    def _key_prefix(self) -> str:
        return _key_path(self.key)

    def _text_error(self, reason: str, at: int) -> DecodeError:
        tb = self._tb
        return DecodeError(
            reason,
            path="$",
            offset=self._tbase + at,
            snippet=_snip(tb[max(0, at - 40) : at + 60]),
        )

    def _check_value(self, at: int, end: int) -> Any:
        value = bytes(self._tb[at:end])
        try:
            return _ANY.decode(value)
        except UnicodeDecodeError as exc:
            raise self._text_error(f"invalid UTF-8: {exc.reason}", at + _bad_utf8(value)) from None
        except msgspec.DecodeError as exc:
            m = _BYTE.search(str(exc))
            if m is None:  # a scalar cut short, like `tru`: the value is whole, and wrong
                raise self._text_error("JSON is malformed: invalid value", at) from None
            raise self._text_error(_BYTE.sub("", str(exc)), at + int(m.group(1))) from None

    def _parse(self) -> bytes | None:
        """Parse the text outside the array (the object around it), as far as it goes."""
        tb = self._tb
        p = self._tp
        key = self.key
        out = None
        while True:
            st = self._st
            if st == _SKIP:
                closer, p = self._vsk.scan(tb, p)
                if closer < 0:
                    break
                v0 = self._vstart
                if tb[closer] != (0x7D if tb[v0] == 0x7B else 0x5D):
                    raise self._text_error("JSON is malformed: mismatched bracket", closer)
                if self._target:
                    out = b"".join((b"[", tb[v0 : closer + 1], b"]"))
                    self.run_offset = self._tbase + v0
                    self._single = True
                    self._guessed = False
                else:
                    self._check_value(v0, closer + 1)
                p = closer + 1
                self._st = _NEXT
                continue
            m = _NONWS.search(tb, p)
            if m is None:
                p = len(tb)
                break
            i = m.start()
            c = tb[i]
            if st == _OPEN:
                want = 0x7B if key is not None else 0x5B
                if c != want:
                    raise self._text_error(f"JSON is malformed: expected '{chr(want)}'", i)
                if key is None:
                    return self._arr_begin(bytes(tb[i + 1 :]), self._tbase + i + 1)
                p = i + 1
                self._st = _KEY1
            elif st in (_KEY1, _KEY):
                if st == _KEY1 and c == 0x7D:
                    p = i + 1
                    self._st = _TRAIL
                    continue
                if c != 0x22:
                    raise self._text_error("JSON is malformed: expected '\"'", i)
                m = _STR_FULL.match(tb, i)
                if m is None:
                    p = i
                    break
                name = self._check_value(i, m.end())
                self._target = name == key
                if self._target and self._found:
                    raise self._text_error(f"duplicate key {key!r}", i)
                p = m.end()
                self._st = _COLON
            elif st == _COLON:
                if c != 0x3A:
                    raise self._text_error("JSON is malformed: expected ':'", i)
                p = i + 1
                self._st = _VALUE
            elif st == _VALUE:
                if c == 0x5B or c == 0x7B:
                    if self._target:
                        self._found = True
                        if c == 0x5B:
                            return self._arr_begin(bytes(tb[i + 1 :]), self._tbase + i + 1)
                    self._vsk = _Skim()
                    self._vstart = i
                    p = i + 1
                    self._st = _SKIP
                    continue
                m = (_STR_FULL if c == 0x22 else _SCALAR).match(tb, i)
                if m is None:
                    if c != 0x22:
                        raise self._text_error("JSON is malformed: invalid character", i)
                    p = i
                    break
                if m.end() == len(tb) and c != 0x22 and not self._final:
                    p = i  # a number may go on in the next chunk
                    break
                value = self._check_value(i, m.end())
                if self._target:
                    if value is not None:
                        raise self._text_error(
                            f"expected an array, an object or null at {self._key_prefix()}", i
                        )
                    self._found = True
                p = m.end()
                self._st = _NEXT
            elif st == _NEXT:
                if c == 0x2C:
                    self._st = _KEY
                elif c == 0x7D:
                    self._st = _TRAIL
                else:
                    raise self._text_error("JSON is malformed: expected ',' or '}'", i)
                p = i + 1
            else:
                raise self._text_error("JSON is malformed: trailing characters", i)
        if self._st != _SKIP and p > 65536:
            del tb[:p]  # keep the buffer short; what is parsed is not needed again
            self._tbase += p
            p = 0
        self._tp = p
        if self._final and self._st != _TRAIL:
            raise DecodeError(
                "JSON is truncated",
                path=self._key_prefix() if self._found else "$",
                offset=self._total,
                snippet=_snip(tb[max(0, len(tb) - 80) :]),
            )
        return out


def _map_error(
    exc: msgspec.DecodeError | UnicodeDecodeError,
    run: bytes,
    run_offset: int,
    prefix: str,
    index0: int,
    *,
    single: bool,
    target: str = "",
    shift: int = 0,
    delta: int = 0,
) -> DecodeError:
    """Turn msgspec's error about (part of) a run into a DecodeError about the whole body.

    ``index0`` is the body index of the run's first element; the decoded text was
    ``b"[" + run[delta + 1:]`` whose element ``i`` is the run's element ``shift + i``.
    """
    msg = str(exc)
    spans = _spans(run)
    if isinstance(exc, msgspec.ValidationError):
        reason, _, rel = msg.partition(" - at `")
        rel = rel.rstrip("`")
        m = re.match(r"\$\[(\d+)\]", rel)
        if m is None:
            return DecodeError(
                reason, target=target, path=prefix, offset=run_offset, snippet=_snip(run[1:-1])
            )
        j = min(shift + int(m.group(1)), len(spans) - 1)
        rest = rel[m.end() :]
        path = prefix + rest if single else f"{prefix}[{index0 + j}]{rest}"
        s, e = spans[j]
        return DecodeError(
            reason, target=target, path=path, offset=run_offset - 1 + s, snippet=_snip(run[s:e])
        )
    if isinstance(exc, UnicodeDecodeError):
        at = _bad_utf8(run)
        msg = f"invalid UTF-8: {exc.reason}"
    else:
        m = _BYTE.search(msg)
        at = int(m.group(1)) + delta if m else len(run) - 1
    at = min(at, len(run) - 1)
    j = _element_at(spans, at)
    s, e = spans[j]
    path = prefix if single else f"{prefix}[{index0 + j}]"
    lo = max(s, at - 60)
    return DecodeError(
        _BYTE.sub("", msg),
        target=target,
        path=path,
        offset=run_offset - 1 + at,
        snippet=_snip(run[lo : lo + _SNIPPET]),
    )


def _type_name(decoder: msgspec.json.Decoder[Any]) -> str:
    t = decoder.type
    args = typing.get_args(t)
    item = args[0] if args else t
    return getattr(item, "__name__", None) or repr(item)


class _Batches(Generic[T]):
    """Decodes the runs of one body; keeps the element count and the skip left."""

    def __init__(
        self, framer: ArrayFramer, decoder: msgspec.json.Decoder[list[T]], skip: int, target: str
    ) -> None:
        self.framer = framer
        self.decoder = decoder
        self.skip = skip
        self.target = target

    def feed(self, chunk: bytes) -> list[T]:
        try:
            run = self.framer.feed(chunk)
            return [] if run is None else self.decode(run)
        except DecodeError as exc:
            exc.target = exc.target or self.target
            raise

    def close(self) -> list[T]:
        try:
            run = self.framer.close()
            return [] if run is None else self.decode(run)
        except DecodeError as exc:
            exc.target = exc.target or self.target
            raise

    def decode(self, run: bytes) -> list[T]:
        fr = self.framer
        while True:
            try:
                return self._decode(run)
            except (msgspec.DecodeError, UnicodeDecodeError) as exc:
                if fr._guessed:
                    # The cut was a guess; it may be the cut and not the data that is wrong.
                    again = fr._reject()
                    if again is None:
                        return []
                    run = again
                    continue
                raise _map_error(
                    exc,
                    run,
                    fr.run_offset,
                    fr._key_prefix(),
                    fr.count,
                    single=fr._single,
                    target=self.target,
                ) from None

    def _decode(self, run: bytes) -> list[T]:
        fr = self.framer
        if not self.skip:
            items = self.decoder.decode(run)
            fr.count += len(items)
            return items
        n = len(_RAW_LIST.decode(run))
        if n <= self.skip:
            self.skip -= n
            fr.count += n
            return []
        k = self.skip
        start = _spans(run)[k][0]
        try:
            items = self.decoder.decode(b"[" + run[start:])
        except (msgspec.DecodeError, UnicodeDecodeError) as exc:
            raise _map_error(
                exc,
                run,
                fr.run_offset,
                fr._key_prefix(),
                fr.count,
                single=fr._single,
                target=self.target,
                shift=k,
                delta=start - 1,
            ) from None
        self.skip = 0
        fr.count += n
        return items


async def decode_array(
    chunks: AsyncIterable[bytes],
    decoder: msgspec.json.Decoder[list[T]],
    *,
    key: str | None = None,
    skip: int = 0,
    target: str = "",
) -> AsyncIterator[list[T]]:
    """Decode a JSON array arriving in ``chunks``, yielding batches of elements.

    ``key`` as for :class:`ArrayFramer`. ``skip`` drops the first ``skip`` elements
    without decoding them into ``T`` (to resume a retried body). Every failure is a
    :class:`DecodeError` naming ``target`` (default: the element type's name), the JSON
    path in the whole body (``$[1234].fixtureAction.period``, ``$.data[7].x``), the byte
    offset and a snippet of the offending element.
    """
    framer = ArrayFramer(key)
    framer._verify = False
    batches = _Batches(framer, decoder, skip, target or _type_name(decoder))
    async for chunk in chunks:
        batch = batches.feed(chunk)
        if batch:
            yield batch
    batch = batches.close()
    if batch:
        yield batch
