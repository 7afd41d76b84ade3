"""Records with their JSON as sent: nothing the service adds is lost.

Every listing and single-record method of ``client.with_json`` (:mod:`asyncsports.views`)
returns (or yields) :class:`RawRecord` pairs instead of bare records: ``value`` is the
typed record, as from the plain method, and ``json`` the bytes of that record exactly as
the service sent them, fields the models do not know included::

    async for action, json in client.with_json.actions.list("soccer", fixture_id):
        store(action.fixture_action.action_id, json)

Through the plain methods nothing here runs: the default path decodes as it always did.
Through the view each body is scanned a second time by msgspec as ``list[msgspec.Raw]`` (a
fraction of the typed decode: no objects are built, only the elements' spans) and each
element's bytes are copied out, so a record's JSON never keeps the whole body alive.

- :class:`RawRecord`: the pair.
- :class:`WithJSON`: a decoder of a JSON array text into pairs (streamed listings).
- :func:`elements`: the JSON of each record of a body: an array, one object, or an
  object's field holding either.
"""

from __future__ import annotations

from itertools import repeat
from typing import Any, Generic, NamedTuple, TypeVar

import msgspec

from asyncsports.models._types import decoder

__all__ = ["RawRecord", "WithJSON", "elements", "paired"]

T = TypeVar("T")

_RAW_LIST = msgspec.json.Decoder(list[msgspec.Raw])
_FIELDS = msgspec.json.Decoder(dict[str, msgspec.Raw])
_new = tuple.__new__


class RawRecord(NamedTuple, Generic[T]):
    """A typed record and its JSON exactly as the service sent it.

    A named pair: ``record.value`` and ``record.json``, or ``value, json = record``.
    ``json`` is ``bytes`` (UTF-8 JSON text: ``json.decode()`` for a ``str``, for a TEXT
    or ``jsonb`` column); ``msgspec.json.decode(record.json)`` gives every field, known or
    not.
    """

    value: T
    json: bytes


class WithJSON(Generic[T]):
    """Decodes a JSON array text into :class:`RawRecord` pairs of ``item``.

    Has the interface of ``msgspec.json.Decoder(list[item])`` that the stream decoder
    uses (``decode`` and ``type``), so a streamed listing gets pairs by swapping decoders.
    The typed decode runs first, so a bad element fails exactly as it does when not paired.
    """

    __slots__ = ("_typed", "type")

    def __init__(self, item: Any) -> None:
        self.type: Any = list[item]
        self._typed: msgspec.json.Decoder[list[T]] = decoder(list[item])

    def decode(self, buf: bytes, /) -> list[RawRecord[T]]:
        """The elements of the array ``buf``, each with its bytes."""
        values = self._typed.decode(buf)
        return paired(values, list(map(bytes, _RAW_LIST.decode(buf))))


def elements(body: bytes | msgspec.Raw, key: str | None = None) -> list[bytes]:
    """The JSON of each record of ``body``: the elements of an array, else ``body`` itself.

    With ``key``, an object body holds its records in its field ``key`` (the fixtures'
    ``content``, the snooker ``data``), an array body is the records all the same.
    ``null`` (or nothing) holds no record. For a body the typed decode has already read,
    so it is well-formed JSON.
    """
    data = bytes(body)
    head = data.lstrip()[:1]
    if key is not None and head == b"{":
        return elements(_FIELDS.decode(data).get(key, b"null"))
    if head == b"[":
        return list(map(bytes, _RAW_LIST.decode(data)))
    if not head or data.strip() == b"null":
        return []
    return [data.strip()]


def paired(values: list[T], jsons: list[bytes]) -> list[RawRecord[T]]:
    """``values`` paired with ``jsons`` (the same records, in the same order)."""
    # tuple.__new__ builds each pair in C: a third of the cost of calling RawRecord(v, j).
    return list(map(_new, repeat(RawRecord), zip(values, jsons, strict=True)))
