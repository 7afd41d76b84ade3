"""Records as rows of the store's tables: one builder per table, one rule for time.

Every row keeps a few key columns and the record's JSON as the service sent it (``json``);
a time is ISO 8601 UTC text with a ``Z`` (:func:`utc_text`: a naive datetime is UTC). The
backfill and the mirror build their rows here, so the same record is the same row
whichever wrote it. Pure: no I/O.

Action rows straight from the wire are the backfill's hot path. A fixture's timeline is most of what a backfill stores (a hundred or more actions per
fixture, about 1.3 kB each). The sink needs a few key columns and the JSON as sent, so
:class:`ActionRows` decodes only those columns (msgspec skips everything else without
building it) and copies each element's text; the row it makes is exactly
:func:`action_row`'s for the same record.
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any, NamedTuple

import msgspec

from asyncsports.models import (
    Action,
    Event,
    Fixture,
    Squad,
    Standings,
    Statistics,
    Tournament,
    encode,
)
from asyncsports.store._types import Row

__all__ = [
    "ActionRows",
    "EventRow",
    "FixtureRow",
    "Row",
    "action_row",
    "event_row",
    "feed_health_row",
    "fixture_row",
    "squad_row",
    "standings_row",
    "statistics_row",
    "tournament_row",
    "utc_text",
]

_UTC = dt.UTC


class FixtureRow(NamedTuple):
    """A ``fixtures`` row, its columns by name (``deleted``: 0 or 1)."""

    id: str
    sport: str
    season_id: str | None
    start_date_utc: str | None
    status: str | None
    name: str | None
    deleted: int
    json: str


class EventRow(NamedTuple):
    """An ``events`` row, its columns by name (``live``: 1 while listed as live)."""

    id: int
    title: str | None
    start_date: str | None
    end_date: str | None
    live: int
    json: str


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


def _text(record: Any, json: bytes | None) -> str:
    # The JSON as the service sent it keeps every field, even one the models do not know.
    return json.decode() if json is not None else encode(record).decode()


def _id(ref: Any) -> str | None:
    return str(ref.id) if ref is not None else None


def fixture_row(sport: str, fixture: Fixture, json: bytes | None = None) -> FixtureRow:
    """The ``fixtures`` row of a fixture; ``json`` is its wire JSON when known."""
    stage = fixture.stage
    season = stage.season if stage is not None else None
    return FixtureRow(
        str(fixture.id),
        sport,
        _id(season),
        utc_text(fixture.start_date_utc),
        fixture.status,
        fixture.name,
        int(fixture.fixture_deleted),
        _text(fixture, json),
    )


def action_row(
    sport: str, fixture_id: str, action: Action, json: bytes | None = None, seq: int | None = None
) -> Row:
    """The ``actions`` row of an action of fixture ``fixture_id`` (``json``: as sent).

    ``seq``: the record's place in the timeline when its ``fixtureSeqNum`` is not that (a
    websocket numbers each connection's packets from 1).
    """
    fa = action.fixture_action
    return (
        fixture_id,
        str(fa.action_id),
        sport,
        seq if seq is not None else fa.fixture_seq_num,
        fa.fixture_action_type,
        fa.send_type,
        utc_text(fa.timestamp),
        _text(action, json),
    )


def statistics_row(
    sport: str, fixture_id: str, packet: Statistics, json: bytes | None = None
) -> Row:
    """The ``statistics`` row of fixture ``fixture_id``'s packet (``json``: as sent)."""
    return (fixture_id, sport, packet.seq_num, utc_text(packet.timestamp), _text(packet, json))


def standings_row(sport: str, season_id: str, p: Standings, json: bytes | None = None) -> Row:
    """The ``standings`` row of a season's standings packet (stage and group '' if none)."""
    return (
        season_id,
        _id(p.stage) or "",
        _id(p.group) or "",
        sport,
        utc_text(p.timestamp),
        _text(p, json),
    )


def squad_row(sport: str, season_id: str, s: Squad, json: bytes | None = None) -> Row:
    """The ``squads`` row of a season's squad."""
    return (str(s.id), sport, season_id, _id(s.team), _text(s, json))


def event_row(e: Event, json: bytes | None = None, live: bool = False) -> EventRow:
    """The ``events`` row of a live stream event; ``live``: listed as live now."""
    start, end = utc_text(e.start_date), utc_text(e.end_date)
    return EventRow(e.id, e.title, start, end, int(live), _text(e, json))


def feed_health_row(
    fixture_id: str, feed: str, sport: str, state: str, cause: str, since: float, position: int
) -> Row:
    """The ``feed_health`` row of a live feed of the mirror (``feed``: ``actions`` or
    ``statistics``) in ``state`` since ``since`` (epoch seconds) for ``cause``, with
    ``position`` records delivered; its ``json`` the same as one object (what a change
    carries as its record)."""
    at = utc_text(dt.datetime.fromtimestamp(since, _UTC))
    doc = {
        "fixture_id": fixture_id,
        "feed": feed,
        "sport": sport,
        "state": state,
        "cause": cause,
        "since": at,
        "position": position,
    }
    return (fixture_id, feed, sport, state, cause, at, position, _HEALTH.encode(doc).decode())


_HEALTH = msgspec.json.Encoder()


def tournament_row(t: Tournament, json: bytes | None = None) -> Row:
    """The ``snooker_tournaments`` row of a tournament."""
    return (
        t.tournament_id,
        t.season_id,
        t.tournament_name,
        utc_text(t.start_date),
        utc_text(t.end_date),
        _text(t, json),
    )
