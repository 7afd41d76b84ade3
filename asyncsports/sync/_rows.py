"""A record and its wire JSON as a row of the mirror's tables (columns of ``_store.TABLES``).

The first three are the backfill's rows (asyncsports/_sink.py), column for column.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from asyncsports.models import Action, Event, Fixture, Squad, Standings, Statistics, Tournament

from ._store import Row

__all__ = [
    "action_row",
    "event_row",
    "fixture_row",
    "squad_row",
    "standings_row",
    "statistics_row",
    "tournament_row",
]


def iso(value: dt.datetime | None) -> str | None:
    """ISO 8601 UTC with a ``Z``, or None."""
    if value is None:
        return None
    return value.astimezone(dt.UTC).isoformat().removesuffix("+00:00") + "Z"


def _text(json: bytes) -> str:
    # The JSON as the service sent it keeps every field, even one the models do not know.
    return json.decode()


def _id(ref: Any) -> str | None:
    return str(ref.id) if ref is not None else None


def fixture_row(sport: str, f: Fixture, json: bytes) -> Row:
    season = f.stage.season if f.stage is not None else None
    return (str(f.id), sport, _id(season), iso(f.start_date_utc), f.status, f.name,
            int(f.fixture_deleted), _text(json))  # fmt: skip


def action_row(sport: str, fixture_id: str, a: Action, json: bytes, seq: int | None = None) -> Row:
    """``seq``: the record's place in the timeline when its ``fixtureSeqNum`` is not that
    (a websocket numbers each connection's packets from 1)."""
    fa = a.fixture_action
    return (fixture_id, str(fa.action_id), sport, seq if seq is not None else fa.fixture_seq_num,
            fa.fixture_action_type, fa.send_type, iso(fa.timestamp), _text(json))  # fmt: skip


def statistics_row(sport: str, fixture_id: str, p: Statistics, json: bytes) -> Row:
    return (fixture_id, sport, p.seq_num, iso(p.timestamp), _text(json))


def standings_row(sport: str, season_id: str, p: Standings, json: bytes) -> Row:
    return (season_id, _id(p.stage) or "", _id(p.group) or "", sport, iso(p.timestamp),
            _text(json))  # fmt: skip


def squad_row(sport: str, season_id: str, s: Squad, json: bytes) -> Row:
    return (str(s.id), sport, season_id, _id(s.team), _text(json))


def event_row(e: Event, json: bytes, live: bool) -> Row:
    return (e.id, e.title, iso(e.start_date), iso(e.end_date), int(live), _text(json))


def tournament_row(t: Tournament, json: bytes) -> Row:
    return (t.tournament_id, t.season_id, t.tournament_name, iso(t.start_date), iso(t.end_date),
            _text(json))  # fmt: skip
