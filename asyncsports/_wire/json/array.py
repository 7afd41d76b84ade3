"""Framing the elements inside a JSON array as its bytes arrive (sans-I/O).

:class:`ArrayCutter` takes the text after an array's ``[`` and cuts it into *runs*: whole
elements framed as an array text (``b"[e1,e2]"``). Its fast path cuts each chunk at the
last occurrence of the learned element *head* (``bytes.rfind``) and marks the run
``guessed``; whoever decodes the run checks the guess and, if it fails, calls
:meth:`ArrayCutter.retract` to have that stretch framed by the exact scanner instead.
"""

from __future__ import annotations

from asyncsports._wire.decoding import Source, around, error
from asyncsports._wire.json.scan import NONWS, Skim, learn_head
from asyncsports.errors import DecodeError

__all__ = ["ArrayCutter"]

_LIMIT = 1 << 20  # bytes buffered without a head match before the exact scanner takes over
_LIMIT_MAX = 1 << 26
_MAX_BAD = 8  # wrong guesses tolerated before the fast path is given up for this body


class ArrayCutter:
    """Cuts the text after an array's ``[`` into runs of whole elements.

    ``data`` is what has arrived after the ``[``, ``base`` its body offset; ``path`` and
    ``src`` go into the errors. :meth:`feed` and :meth:`start` return a run or None;
    :meth:`finish` (end of input) raises DecodeError if the array is not closed. Once the
    closing ``]`` is found, :attr:`rest` holds the bytes after it (None while inside) and
    :attr:`rest_offset` their body offset. :attr:`run_offset` is the body offset of the
    byte after the ``[`` of the last run; :attr:`head` is what the fast path searches for.
    """

    def __init__(self, data: bytes, base: int, path: str, src: Source) -> None:
        self.path = path
        self.src = src
        self.run_offset = 0
        self.guessed = False
        self.rest: bytes | None = None
        self.rest_offset = 0
        self.head: bytes | None = None
        # A carry of chunks (fast mode) or a bytearray being scanned exactly.
        self._pieces: list[bytes] = []
        self._plen = 0
        self._base = base
        self._ex: bytearray | None = bytearray(data)
        self._exp = 0
        self._sk = Skim()
        self._learn = True
        self._bad = 0
        self._guesses = 0
        self._limit = _LIMIT
        self._after_comma = False
        self._undo: tuple[list[bytes], int, bool, int] | None = None

    @property
    def buffered(self) -> int:
        """Bytes held back, waiting for the end of the element they belong to."""
        return len(self._ex) if self._ex is not None else self._plen

    def start(self) -> bytes | None:
        """Frame what arrived with the ``[``."""
        return self._exact_step(stop_first=self._learn) if self._ex else None

    def feed(self, chunk: bytes) -> bytes | None:
        """Take the next chunk; return a run of whole elements, or None if none is complete."""
        head = self.head
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
        if run is None and self.rest is None:
            self._limit = min(self._limit * 2, _LIMIT_MAX)
        return run

    def finish(self) -> bytes | None:
        """At the end of input: the rest of the array must be here, ending in ``]``."""
        if self._ex is None:
            self._to_exact()
        run = self._exact_step(stop_first=False)
        if self.rest is None:
            end = self.buffered
            buf = self._ex if self._ex is not None else b"".join(self._pieces)
            raise error(
                self.src,
                "JSON is truncated: the array is not closed",
                path=self.path,
                offset=self._base + end,
                snippet=around(buf, end),
            )
        return run

    def retract(self) -> bytes | None:
        """Take back the last (guessed) run and frame that stretch exactly instead."""
        assert self._undo is not None and self.guessed
        pieces, base, after, guessed_len = self._undo
        self._undo = None
        self.guessed = False
        self._pieces = []
        self._plen = 0
        self._base = base
        self._after_comma = after
        self._ex = bytearray(b"".join(pieces))
        self._exp = 0
        self._sk = Skim()
        run = self._exact_step(stop_first=False)
        if run is None or len(run) != guessed_len:
            # The head also occurs inside elements. Each wrong guess costs a wasted decode,
            # so give up guessing for this body when it happens often.
            self._bad += 1
            if self._bad >= _MAX_BAD and self._bad * 4 > self._guesses:
                self.head = None
                self._learn = False
        return run

    # the fast path ------------------------------------------------------------------------

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
        self._pieces = []
        self._plen = 0
        self._exp = 0
        self._sk = Skim()

    def _to_fast(self, data: bytes) -> None:
        self._ex = None
        self._pieces = [data] if data else []
        self._plen = len(data)

    def _fail(self, reason: str, at: int, offset: int | None = None) -> DecodeError:
        """A framing error at index ``at`` of the buffer (body offset ``offset``, if not there)."""
        buf = self._ex if self._ex is not None else b"".join(self._pieces)
        where = self._base + at if offset is None else offset
        return error(self.src, reason, path=self.path, offset=where, snippet=around(buf, at))

    def _fast_cut(self, c: int, guessed: bool) -> bytes:
        """Cut the carry at the comma at ``c``: the run is everything before it."""
        pieces = self._pieces
        acc = 0
        # The run must hold an element, not only whitespace. The comma at c is not
        # whitespace, so the loop always ends at a break.
        for piece in pieces:  # pragma: no branch  (the comma at c ends it by break)
            m = NONWS.search(piece)
            if m is not None:
                if acc + m.start() >= c:
                    raise self._fail("JSON is malformed: expected a value before ','", c)
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
        self._undo = (pieces, self._base, self._after_comma, len(run))
        self.run_offset = self._base
        self._base += c + 1
        self._after_comma = True
        self.guessed = guessed
        self._guesses += guessed
        self._pieces = [rest] if rest else []
        self._plen = len(rest)
        return run

    # the exact scanner --------------------------------------------------------------------

    def _exact_step(self, stop_first: bool) -> bytes | None:
        """Scan the new part of the exact buffer; cut at its last top-level comma."""
        ex, sk = self._ex, self._sk
        assert ex is not None
        while True:
            closer, self._exp = sk.scan(ex, self._exp, stop_first)
            if closer >= 0:
                return self._close(closer)
            if not (stop_first and self._exp < len(ex) and sk.first >= 0):
                break
            head = learn_head(ex, sk.first)
            if head is not None:
                # Learned: the rest of this buffer goes through the fast path at once.
                self.head = head
                first = sk.first
                c = ex.rfind(head, first)
                self._to_fast(bytes(ex))
                return self._fast_cut(c, guessed=c != first)
            stop_first = False
        if sk.last < 0:
            return None
        c = sk.last
        if NONWS.search(ex, 0, c) is None:
            raise self._fail("JSON is malformed: expected a value before ','", c)
        run = b"".join((b"[", ex[:c], b"]"))
        self._undo = None
        self.guessed = False
        self.run_offset = self._base
        self._base += c + 1
        self._after_comma = True
        if self._learn:
            self._relearn(ex, sk.first, c)
        if self.head is not None:
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
        a = learn_head(ex, first)
        b = learn_head(ex, last) if last != first else a
        if a is None or b is None:
            head = a or b
        else:
            n = 0
            while n < min(len(a), len(b)) and a[n] == b[n]:
                n += 1
            head = a[:n]
        if head:
            self.head = head

    def _close(self, e: int) -> bytes | None:
        """The array's closer is at ``e``: the last run, and the rest for the envelope."""
        ex = self._ex
        assert ex is not None
        base = self._base
        if ex[e] != 0x5D:
            raise self._fail("JSON is malformed: expected ',' or ']'", e)
        run = None
        if NONWS.search(ex, 0, e) is not None:
            run = b"".join((b"[", ex[:e], b"]"))
            self.run_offset = base
        elif self._after_comma:
            raise self._fail("JSON is malformed: trailing comma in array", e, offset=base - 1)
        self._undo = None
        self.guessed = False
        self.rest = bytes(ex[e + 1 :])
        self.rest_offset = base + e + 1
        self._ex = None
        return run
