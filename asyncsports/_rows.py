"""Action rows straight from the wire: the backfill's hot path, without the full models.

A fixture's timeline is most of what a backfill stores (a hundred or more actions per
fixture, about 1.3 kB each). The sink needs a few key columns and the JSON as sent, so
:class:`ActionRows` decodes only those columns (msgspec skips everything else without
building it) and copies each element's text; the row it makes is exactly
:func:`asyncsports._sink.action_row`'s for the same record. Pure: no I/O.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import msgspec

__all__ = ["ActionRows", "utc_text"]

_UTC = dt.UTC
_to_builtins = msgspec.to_builtins


class _Keys(msgspec.Struct, gc=False, rename="camel"):
    """The action's key columns; the rest of the record is skipped unread."""

    action_id: uuid.UUID
    fixture_seq_num: int | None = None
    fixture_action_type: str | None = None
    send_type: str | None = None
    timestamp: dt.datetime | None = None


class _Action(msgspec.Struct, gc=False, rename="camel"):
    fixture_action: _Keys


_KEYS = msgspec.json.Decoder(list[_Action])
_RAW = msgspec.json.Decoder(list[msgspec.Raw])


def utc_text(value: dt.datetime | None) -> str | None:
    """``value`` as ISO 8601 UTC with a ``Z`` (a naive one is UTC); microseconds only
    when not zero, as ``datetime.isoformat`` writes them."""
    if value is None:
        return None
    tz = value.tzinfo
    if tz is None:
        value = value.replace(tzinfo=_UTC)
    elif tz is not _UTC:
        value = value.astimezone(_UTC)
    text: str = _to_builtins(value)  # msgspec writes UTC with a Z, in C
    return text


class ActionRows:
    """Decodes a fixture's action array into ``actions`` rows.

    Has the interface of a ``msgspec.json.Decoder(list[...])`` (``decode``, ``type``).
    """

    __slots__ = ("fixture_id", "sport")

    type: Any = list[_Action]

    def __init__(self, sport: str, fixture_id: str) -> None:
        self.sport = sport
        self.fixture_id = fixture_id

    def decode(self, buf: bytes, /) -> list[tuple[Any, ...]]:
        """The rows of the actions of ``buf``, a JSON array text."""
        actions = _KEYS.decode(buf)  # first: a bad element fails here, as without rows
        texts = _RAW.decode(buf)
        keys = [a.fixture_action for a in actions]
        ids: list[str] = _to_builtins([k.action_id for k in keys])
        fid, sport = self.fixture_id, self.sport
        return [
            (
                fid,
                aid,
                sport,
                k.fixture_seq_num,
                k.fixture_action_type,
                k.send_type,
                utc_text(k.timestamp),
                str(text, "utf-8"),
            )
            for aid, k, text in zip(ids, keys, texts, strict=True)
        ]
