"""Exact structural scanning of JSON bytes, resumable across chunks (sans-I/O, pure).

:class:`Skim` follows nesting depth and string state to find top-level commas and the
closer of the enclosing value; :func:`spans`, :func:`learn_head`, :func:`bad_utf8` and
:func:`deepest` answer the framer's and the error builder's questions about a buffer.
"""

from __future__ import annotations

import re

__all__ = [
    "HEAD",
    "NONWS",
    "SCALAR",
    "STR_FULL",
    "Skim",
    "bad_utf8",
    "deepest",
    "learn_head",
    "spans",
]

# A complete JSON string, or a lone quote when the buffer ends inside one.
_STRING = rb'"[^"\\]*(?:\\.[^"\\]*)*"'
_TOP = re.compile(_STRING + rb'|[{}\[\],"]', re.S)  # at the array's top level commas matter
_NEST = re.compile(_STRING + rb'|[{}\[\]"]', re.S)  # deeper, they do not
_STR_REST = re.compile(rb'[^"\\]*(?:\\.[^"\\]*)*', re.S)  # the rest of an open string
STR_FULL = re.compile(_STRING, re.S)
NONWS = re.compile(rb"[^ \t\n\r]")
SCALAR = re.compile(rb'[^ \t\n\r{}\[\],:"]+')
# What follows a top-level comma: whitespace, then the next element's opening and, for an
# object, its first key and colon. This is the pattern the framer's fast path searches for.
HEAD = re.compile(rb',[ \t\n\r]*(?:(\{)[ \t\n\r]*(?:"[^"\\]{1,64}"[ \t\n\r]*:)?|\[|")?')


class Skim:
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

    # The loop over every byte of a streamed page (array.py frames with it): its state in
    # locals, no call per token; a helper per kind of byte would cost a call each.
    def scan(  # noqa: C901, PLR0912, PLR0915
        self, buf: bytes | bytearray, pos: int, stop_first: bool = False
    ) -> tuple[int, int]:
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


def learn_head(buf: bytes | bytearray, c: int) -> bytes | None:
    """The head at the top-level comma ``c``, or None while the buffer may cut it short."""
    m = HEAD.match(buf, c)
    assert m is not None
    e = m.end()
    if e >= len(buf):
        return None
    if m.group(1) is not None and buf[e - 1] != 0x3A and len(buf) - e < 80:
        return None  # an object whose first key may still be arriving
    return bytes(buf[c:e])


def spans(run: bytes) -> list[tuple[int, int]]:
    """Start and end (run indices, whitespace trimmed) of each element of a run ``[...]``."""
    sk = Skim(commas=[])
    closer, _ = sk.scan(run, 1)
    assert sk.commas is not None
    ends = [*sk.commas, closer if closer >= 0 else len(run) - 1]
    out = []
    start = 1
    for end in ends:
        m = NONWS.search(run, start, end)
        s = m.start() if m else start
        e = end
        while e > s and run[e - 1] in b" \t\n\r":
            e -= 1
        out.append((s, e))
        start = end + 1
    return out


def bad_utf8(data: bytes | bytearray) -> int:
    """Index of the first byte that is not UTF-8 (msgspec's error does not say)."""
    try:
        bytes(data).decode()
    except UnicodeDecodeError as exc:
        return exc.start
    return len(data) - 1


def deepest(data: bytes | bytearray) -> tuple[int, int]:
    """The greatest nesting depth in ``data`` and the index of the bracket that reaches it.

    For msgspec's RecursionError, which says neither how deep nor where.
    """
    depth = best = 0
    at = 0
    for m in _NEST.finditer(data):
        i = m.start()
        c = data[i]
        if c == 0x22:
            if m.end() - i == 1:
                break  # a string that never closes: nothing after it is structure
            continue
        if c == 0x7B or c == 0x5B:
            depth += 1
            if depth > best:
                best, at = depth, i
        else:
            depth -= 1
    return best, at
