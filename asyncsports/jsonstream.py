"""Incremental decoding of a JSON array as its bytes arrive (sans-I/O framing).

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
is retracted (:meth:`ArrayFramer.retract`), and that stretch is framed by an exact scanner
(a regex jumping from string to string and bracket to bracket, about 2.5x the cost of
decoding), which also finds the first boundary, the array's end and the end of input, and
learns the head again.

Checking: with ``verify=True`` (the default) the framer checks each run itself with an
untyped decode (``list[msgspec.Raw]``, a fraction of a typed decode's cost), which also
counts it. :func:`decode_array` turns that off, its typed decode checks the same; for
``skip`` it splits the leading runs with the untyped decode, so skipped elements are never
decoded into ``T``.

Layout: the byte scanning is in :mod:`asyncsports._wire.json.scan`, the framing inside the
array in :mod:`asyncsports._wire.json.array`, the text around it in
:mod:`asyncsports._wire.json.envelope`; every DecodeError is built by :mod:`asyncsports._wire.decoding`.
"""

from __future__ import annotations

import typing
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, Generic, Protocol, TypeVar

import msgspec

from asyncsports._wire.decoding import FAILURES, Failure, Source, key_path, run_error, type_name
from asyncsports._wire.json.array import ArrayCutter
from asyncsports._wire.json.envelope import Array, Element, Envelope
from asyncsports._wire.json.scan import spans
from asyncsports.errors import BodyTooLargeError, DecodeError

__all__ = ["ArrayFramer", "ListDecoder", "decode_array"]

T = TypeVar("T")


class ListDecoder(Protocol[T]):
    """What decodes a run: ``msgspec.json.Decoder(list[T])``, or anything with its
    ``decode(buf) -> list`` and ``type`` (such as :class:`asyncsports.raw.WithJSON`)."""

    @property
    def type(self) -> Any:
        """The decoded type, ``list[T]``: its element names the target in errors."""
        ...

    def decode(self, buf: bytes, /) -> list[T]:
        """The elements of one run, a JSON array text."""
        ...


_RAW_LIST = msgspec.json.Decoder(list[msgspec.Raw])


class ArrayFramer:
    """Frames the elements of a JSON array from chunks of the body.

    ``key=None``: the body is a JSON array. ``key="data"``: the body is an object and the
    array is the value of that key; other members are skipped (and checked); an object
    value counts as one element; ``null`` or a missing key means no elements.

    :meth:`feed` returns a run (``b"[e1,e2,...]"``) of whole elements or None;
    :meth:`close` returns the last run and raises :class:`DecodeError` (with the byte
    offset in the body) when the input was truncated or malformed. ``target``, ``url``
    and ``status`` go into every DecodeError.

    ``verify=True`` checks each run before returning it (retracting wrong guesses itself)
    and keeps :attr:`count`, the number of elements in the runs returned so far. With
    ``verify=False`` the caller checks: if decoding a run fails while :attr:`guessed` is
    true, it calls :meth:`retract` and decodes the run that returns instead.
    :attr:`run_offset` is the body offset of the byte after the ``[`` of the last run;
    :attr:`single` says that run is the key's one object value, not array elements.

    ``max_element`` bounds what the framer holds at once: the part of an element whose
    end has not arrived, or the envelope around the array. Past it, :meth:`feed` raises
    :class:`~asyncsports.errors.BodyTooLargeError`; a stream of any number of small
    elements is never refused.
    """

    def __init__(
        self,
        key: str | None = None,
        *,
        verify: bool = True,
        target: str = "",
        url: str = "",
        status: int | None = None,
        max_element: int | None = None,
    ) -> None:
        self.key = key
        self.verify = verify
        self.max_element = max_element
        self.count = 0
        self.run_offset = 0
        self.single = False
        self.path = key_path(key)
        self.source = Source(target, url, status)
        self._env = Envelope(key, self.path, self.source)
        self._array: ArrayCutter | None = None
        self._final = False

    @property
    def guessed(self) -> bool:
        """Whether the last run was cut at a guessed boundary (see :meth:`retract`)."""
        arr = self._array
        return arr is not None and arr.guessed

    @property
    def head(self) -> bytes | None:
        """The element head the fast path cuts at; None while framing exactly."""
        return None if self._array is None else self._array.head

    @property
    def buffered(self) -> int:
        """Bytes of the array held back, waiting for the end of their element."""
        return 0 if self._array is None else self._array.buffered

    def feed(self, chunk: bytes) -> bytes | None:
        """Take the next chunk; return a run of whole elements, or None if none is complete."""
        if not chunk:
            return None
        if not isinstance(chunk, bytes):
            chunk = bytes(chunk)
        arr = self._array
        if arr is not None and arr.rest is None:  # inside the array
            run = self._took(arr, arr.feed(chunk))
        else:
            run = self._outside(self._env.feed(chunk))
        limit = self.max_element
        if limit is not None and max(self.buffered, self._env.buffered) > limit:
            raise self._too_large(limit)
        if run is None or not self.verify:
            return run
        return self._checked(run)

    def close(self) -> bytes | None:
        """End of input: return the last run, or raise DecodeError if the body is incomplete."""
        self._final = True
        arr = self._array
        if arr is not None and arr.rest is None:
            run = self._took(arr, arr.finish())
        else:
            run = self._outside(self._env.parse(final=True))
        if run is None or not self.verify:
            return run
        return self._checked(run)

    def _too_large(self, limit: int) -> BodyTooLargeError:
        what = "an element of the array" if self._array is not None else "the body around the array"
        return BodyTooLargeError(
            f"{what} at {self.path} holds more than max_element_size={limit} bytes",
            limit=limit,
            url=self.source.url,
        )

    def retract(self) -> bytes | None:
        """Take back the last run, a guess that did not decode, and frame that stretch exactly.

        Returns the run that replaces it (shorter, or None until more input arrives); it
        may raise the DecodeError the exact framing finds. Only while :attr:`guessed`.
        """
        arr = self._array
        if arr is None or not arr.guessed:
            raise RuntimeError("retract() takes back a guessed run; the last run was not one")
        return self._took(arr, arr.retract())

    def _took(self, arr: ArrayCutter, run: bytes | None) -> bytes | None:
        """After a step of the array's framing: note the run; past the array, go on outside."""
        if run is not None:
            self.run_offset = arr.run_offset
        if arr.rest is not None:
            self._env.resume(arr.rest, arr.rest_offset, self._final)
        return run

    def _outside(self, found: Array | Element | None) -> bytes | None:
        """What the envelope found: the one object value, or the array opening."""
        if found is None:
            return None
        if isinstance(found, Element):
            self.run_offset, self.single = found.offset, True
            return found.run
        arr = self._array = ArrayCutter(found.data, found.offset, self.path, self.source)
        return self._took(arr, arr.finish() if self._final else arr.start())

    def _checked(self, run: bytes | None) -> bytes | None:
        """Check and count a run with an untyped decode; retract a guess that fails it."""
        while run is not None:
            try:
                n = len(_RAW_LIST.decode(run))
            except FAILURES as exc:
                if not self.guessed:
                    raise self.error_for(exc, run, self.count) from None
                run = self.retract()
                continue
            self.count += n
            return run
        return None

    def error_for(
        self, exc: Failure, run: bytes, index: int, shift: int = 0, delta: int = 0
    ) -> DecodeError:
        """The DecodeError for msgspec's ``exc``, raised decoding the last run ``run``.

        ``index`` is the array index of the run's first element. For a decode of only its
        tail, ``b"[" + run[delta + 1:]``, ``shift`` is the run index of that tail's first.
        """
        return run_error(
            self.source,
            exc,
            run,
            offset=self.run_offset,
            path=self.path,
            index=index,
            single=self.single,
            shift=shift,
            delta=delta,
        )


class _Batches(Generic[T]):
    """Decodes the runs of one body; keeps the element count and the skip left."""

    def __init__(self, framer: ArrayFramer, decoder: ListDecoder[T], skip: int) -> None:
        self.framer = framer
        self.decoder = decoder
        self.skip = skip
        self.count = 0  # elements decoded (or skipped) so far: the index of the next run

    def feed(self, chunk: bytes) -> list[T]:
        run = self.framer.feed(chunk)
        return [] if run is None else self.decode(run)

    def close(self) -> list[T]:
        run = self.framer.close()
        return [] if run is None else self.decode(run)

    def decode(self, run: bytes | None) -> list[T]:
        fr = self.framer
        while run is not None:
            try:
                if self.skip:
                    return self._skipping(run)
                items = self.decoder.decode(run)
            except FAILURES as exc:
                if not fr.guessed:
                    raise fr.error_for(exc, run, self.count) from None
                # The cut was a guess; it may be the cut and not the data that is wrong.
                run = fr.retract()
                continue
            self.count += len(items)
            return items
        return []

    def _skipping(self, run: bytes) -> list[T]:
        """Decode the run but its first ``skip`` elements (the untyped decode checks a guess)."""
        n = len(_RAW_LIST.decode(run))
        if n <= self.skip:
            self.skip -= n
            self.count += n
            return []
        k = self.skip
        start = spans(run)[k][0]
        try:
            items = self.decoder.decode(b"[" + run[start:])
        except FAILURES as exc:
            raise self.framer.error_for(exc, run, self.count, shift=k, delta=start - 1) from None
        self.skip = 0
        self.count += n
        return items


def _element_name(decoder: ListDecoder[Any]) -> str:
    args = typing.get_args(decoder.type)
    return type_name(args[0] if args else decoder.type)


async def decode_array(
    chunks: AsyncIterable[bytes],
    decoder: ListDecoder[T],
    *,
    key: str | None = None,
    skip: int = 0,
    target: str | None = None,
    url: str = "",
    status: int | None = None,
    max_element: int | None = None,
) -> AsyncIterator[list[T]]:
    """Decode a JSON array arriving in ``chunks``, yielding batches of elements.

    ``key`` as for :class:`ArrayFramer`. ``skip`` drops the first ``skip`` elements
    without decoding them into ``T`` (to resume a retried body). Every failure is a
    :class:`DecodeError` naming ``target`` (default: the element type's name), the JSON
    path in the whole body (``$[1234].fixtureAction.period``, ``$.data[7].x``), the byte
    offset, a snippet of the offending element, and the response's ``url`` and ``status``.
    ``max_element`` bounds one element (see :class:`ArrayFramer`). ``chunks`` is closed
    (``aclose``, where it has one) when decoding stops, however it stops.
    """
    name = _element_name(decoder) if target is None else target
    framer = ArrayFramer(
        key, verify=False, target=name, url=url, status=status, max_element=max_element
    )
    batches = _Batches(framer, decoder, skip)
    try:
        async for chunk in chunks:
            batch = batches.feed(chunk)
            if batch:
                yield batch
        batch = batches.close()
        if batch:
            yield batch
    finally:
        # A source left suspended would be closed later by a task of the garbage
        # collector's (an async generator's finalizer), outliving the request.
        close = getattr(chunks, "aclose", None)
        if close is not None:
            await close()
