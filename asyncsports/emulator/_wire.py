"""The wire format of the data service, written from api-spec 2 (never from the models).

Datetimes: fixture, stage, season and period times are ISO 8601 without a zone
(``2026-06-01T12:00:00``); action timestamps carry milliseconds and ``Z``; statistics
timestamps seven or nine fraction digits; durations ``hh:mm:ss.fffffff`` with a ``d.``
prefix past a day.

Beyond api-spec, the fields the vendor's documentation shows (docs/wire.md): every fixture
has ``updateCount``, soccer fixtures ``rules``; action records ``traceId``, the action
``relatedFixtureActionIds`` (and ``delayStatus`` when delayed), its team ``homeTeam``, the
summary ``collectionStatus``, ``currentClockState``, ``finished`` (and ``reason``,
``reasonId`` while collection is suspended).

Fixtures and actions are the hot paths of large bodies, so the parts that repeat (teams,
stage, venue, summary periods) are encoded once and spliced in as raw JSON.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

from asyncsports.emulator._ids import mix64
from asyncsports.emulator._records import Competition, Fixture, Location, Player, Season, Team
from asyncsports.emulator._timeline import Action, Period

__all__ = [
    "CHUNK",
    "COVERAGE_TEXT",
    "ActionWriter",
    "FixtureWriter",
    "chunked",
    "duration",
    "encode",
    "envelope",
    "iso_ms",
    "iso_ns",
    "iso_ticks",
    "iso_z",
    "json_array",
    "location",
    "naive",
    "plus0000",
    "ref",
    "squad_player",
]

CHUNK = 64 * 1024
"""Size of the pieces a large body is written in."""

encode = msgspec.json.Encoder().encode
_Raw = msgspec.Raw

_STATUS = {
    "scheduled": b"Scheduled",
    "live": b"Live",
    "completed": b"Completed",
    "postponed": b"Postponed",
}
COLLECTION_STATUS = {
    "scheduled": "CollectionScheduled",
    "live": "CollectingLive",
    "completed": "PostMatchChecked",
    "postponed": "CollectionScheduled",
}
"""A volleyball fixture's ``collectionStatus`` by its status (the vendor's values)."""
_VOLLEYBALL = {
    status: b',"collectionStatus":"%s","sport":"volleyball"' % collection.encode()
    for status, collection in COLLECTION_STATUS.items()
}
_SOCCER_RULES = b',"rules":' + msgspec.json.encode(
    [
        {"rule": "ExtraTime", "value": "false"},
        {"rule": "PeriodLength", "value": "45"},
        {"rule": "ExtraTimeLength", "value": "null"},
        {"rule": "PenaltyShootout", "value": "false"},
        {"rule": "PenaltyShootoutType", "value": "null"},
    ]
)
_CUP_RULES = b',"rules":' + msgspec.json.encode(
    [
        {"rule": "ExtraTime", "value": "true"},
        {"rule": "PeriodLength", "value": "45"},
        {"rule": "ExtraTimeLength", "value": "15"},
        {"rule": "PenaltyShootout", "value": "true"},
        {"rule": "PenaltyShootoutType", "value": "ABBA"},
    ]
)
"""Soccer fixtures' rules: a league's, and a cup's (extra time, then a shootout)."""
_TYPE = {"official": b"Official", "simulation": b"Simulation", "training": b"Training"}
COVERAGE_TEXT = {
    "noCoverage": "No Coverage",
    "inVenue": "In Venue",
    "lowLatencyStream": "Low Latency Stream",
    "standardStream": "Standard Stream",
    "video(postmatch)": "Video (Postmatch)",
}
"""Response text of each coverageLevel filter value (docs/wire.md)."""
_COVERAGE = {k: v.encode() for k, v in COVERAGE_TEXT.items()}


def naive(ts: float) -> str:
    """``YYYY-MM-DDTHH:MM:SS`` in UTC without a zone suffix."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts))


def iso_z(ts: float) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ``."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


def iso_ms(ts_ms: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS.mmmZ``."""
    return f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(ts_ms // 1000))}.{ts_ms % 1000:03d}Z"


def iso_ns(ts_ns: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS.nnnnnnnnnZ`` (nanoseconds, as statistics timestamps are)."""
    seconds, ns = divmod(ts_ns, 1_000_000_000)
    return f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(seconds))}.{ns:09d}Z"


def iso_ticks(ts_ns: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS.fffffffZ`` (seven digits: 100 ns ticks, truncated)."""
    seconds, ns = divmod(ts_ns, 1_000_000_000)
    return f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(seconds))}.{ns // 100:07d}Z"


def plus0000(ts: float) -> str:
    """``YYYY-MM-DDTHH:MM:SS+0000`` (the events listing's form)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S+0000", time.gmtime(ts))


def duration(ticks: int) -> str:
    """A duration of ``ticks`` of 100 ns as ``hh:mm:ss.fffffff``, ``d.hh:mm:ss.fffffff`` past a day."""
    seconds, fraction = divmod(ticks, 10_000_000)
    days, seconds = divmod(seconds, 86400)
    text = f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{fraction:07d}"
    return f"{days}.{text}" if days else text


def location(loc: Location) -> dict[str, Any]:
    """A Location object: ``{}`` when empty; country and continent may be ``{}``."""
    if loc.empty:
        return {}
    out: dict[str, Any] = {}
    if loc.name is not None:
        out["name"] = loc.name
    out["country"] = {} if loc.country is None else {"name": loc.country}
    out["continent"] = {} if loc.continent is None else {"name": loc.continent}
    return out


def chunked(parts: Iterable[bytes], size: int = CHUNK) -> Iterator[bytes]:
    """Join small pieces into chunks of about ``size`` bytes."""
    buf: list[bytes] = []
    n = 0
    for part in parts:
        buf.append(part)
        n += len(part)
        if n >= size:
            yield b"".join(buf)
            buf.clear()
            n = 0
    if buf:
        yield b"".join(buf)


def json_array(items: Iterable[bytes], size: int = CHUNK) -> Iterator[bytes]:
    """A JSON array of already encoded elements, in chunks of about ``size`` bytes."""

    def parts() -> Iterator[bytes]:
        yield b"["
        sep = b""
        for item in items:
            yield sep
            yield item
            sep = b","
        yield b"]"

    return chunked(parts(), size)


def ref(entity: Team | Player | Season) -> dict[str, str]:
    """``{id, name}`` of a team, player or season."""
    if isinstance(entity, Player):
        return {"id": entity.id, "name": entity.full_name}
    return {"id": entity.id, "name": entity.name}


def _competition(c: Competition) -> dict[str, Any]:
    volley = c.rules.name == "volleyball"
    out: dict[str, Any] = {"id": c.id, "name": c.name}
    if volley:
        out["type"] = c.kind
    out["category"] = {"id": c.category[0], "name": c.category[1]}
    out["tour"] = {"id": c.tour[0], "name": c.tour[1]}
    out["location"] = location(c.location)
    if volley:
        out["latestComment"] = c.latest_comment
        out["commentCount"] = c.comment_count
    return out


def _stage(s: Season) -> dict[str, Any]:
    season: dict[str, Any] = {
        "id": s.id,
        "name": s.name,
        "startDateUTC": naive(s.start),
        "endDateUTC": naive(s.end),
        "competition": _competition(s.competition),
    }
    if s.rules.name == "volleyball":
        season["sport"] = "volleyball"
    return {
        "id": s.stage_id,
        "name": s.stage_name,
        "season": season,
        "startDateUTC": naive(s.start),
        "endDateUTC": naive(s.end),
    }


def _team(t: Team, home: bool) -> dict[str, Any]:
    return {
        "id": t.id,
        "name": t.name,
        "club": {"id": t.club_id, "name": t.club_name},
        "category": {"id": t.category[0], "name": t.category[1]},
        "homeTeam": home,
    }


class FixtureWriter:
    """Encodes fixtures, reusing the encoded stage, teams and venue of earlier ones."""

    def __init__(self) -> None:
        self._stages: dict[str, bytes] = {}
        self._pairs: dict[tuple[str, str], tuple[bytes, bytes, bytes]] = {}

    def _pair(self, f: Fixture) -> tuple[bytes, bytes, bytes]:
        pair_key = (f.home.id, f.away.id)
        parts = self._pairs.get(pair_key)
        if parts is None:
            venue = {
                "id": f.home.venue.id,
                "name": f.home.venue.name,
                "location": location(f.home.venue.location),
            }
            parts = (
                encode(f"{f.home.name} v {f.away.name}"),
                encode([_team(f.home, True), _team(f.away, False)]),
                encode(venue),
            )
            self._pairs[pair_key] = parts
        return parts

    def _stage(self, s: Season) -> bytes:
        stage = self._stages.get(s.id)
        if stage is None:
            stage = self._stages[s.id] = encode(_stage(s))
        return stage

    def __call__(self, f: Fixture, now: float) -> bytes:
        """One Fixture object."""
        name, teams, venue = self._pair(f)
        status = f.status(now)
        sport = f.season.rules.name
        extra = _VOLLEYBALL[status] if sport == "volleyball" else b""
        if sport == "soccer":
            extra = _CUP_RULES if "Cup" in f.season.competition.name else _SOCCER_RULES
        return b"".join(
            (
                b'{"id":"%s","name":%s,"status":"%s","type":"%s","coverageLevel":"%s"'
                % (f.id.encode(), name, _STATUS[status], _TYPE[f.type], _COVERAGE[f.coverage]),
                b',"startDateUTC":"%s","teams":%s,"stage":%s,"venue":%s,"fixtureDeleted":%s'
                % (
                    naive(f.start).encode(),
                    teams,
                    self._stage(f.season),
                    venue,
                    b"true" if f.deleted else b"false",
                ),
                extra,
                b',"updateCount":%d}' % f.update_count,
            )
        )


def envelope(items: list[bytes], page: int, size: int, total: int, sorted_: bool) -> bytes:
    """The paged list envelope of api-spec 2.1 around encoded elements."""
    sort = {"empty": not sorted_, "unsorted": not sorted_, "sorted": sorted_}
    pages = -(-total // size)
    meta = {
        "pageable": {
            "pageNumber": page,
            "pageSize": size,
            "sort": sort,
            "offset": page * size,
            "paged": True,
            "unpaged": False,
        },
        "last": page >= pages - 1,
        "first": page == 0,
        "totalPages": pages,
        "totalElements": total,
        "size": size,
        "number": page,
        "numberOfElements": len(items),
        "sort": sort,
        "empty": not items,
    }
    return b'{"content":[' + b",".join(items) + b"]," + encode(meta)[1:]


def _period(p: Period) -> dict[str, Any]:
    return {
        "id": p.id,
        "type": "Overtime" if p.overtime else "Regular",
        "label": p.label,
        "start": naive(p.start_ms / 1000),
        "end": None if p.end_ms is None else naive(p.end_ms / 1000),
        "awayTeamScore": p.away,
        "homeTeamScore": p.home,
        "awayTeamPeriodScore": p.away_period,
        "homeTeamPeriodScore": p.home_period,
    }


def trace_id(action_id: str, seq: int) -> str:
    """A record's ``traceId``: 32 hex digits, a pure function of the action and its record."""
    key = mix64(int(action_id[-12:], 16) ^ seq * 0x9E3779B97F4A7C15)
    return f"{key:016x}{mix64(key):016x}"


class ActionWriter:
    """Encodes the action records of one fixture, reusing the encoded periods and refs."""

    def __init__(self, fixture_id: str, home_id: str) -> None:
        self._fixture_id = fixture_id
        self._home_id = home_id
        self._periods: tuple[Period, ...] | None = None
        self._periods_raw = _Raw(b"[]")
        self._refs: dict[str, msgspec.Raw] = {}

    def _ref(self, entity: Team | Player) -> msgspec.Raw:
        raw = self._refs.get(entity.id)
        if raw is None:
            wire: dict[str, Any] = ref(entity)
            if isinstance(entity, Team):
                wire["homeTeam"] = entity.id == self._home_id
            raw = self._refs[entity.id] = _Raw(encode(wire))
        return raw

    def __call__(self, a: Action) -> bytes:
        """One action record."""
        if a.periods is not self._periods:
            self._periods = a.periods
            self._periods_raw = _Raw(encode([_period(p) for p in a.periods]))
        action: dict[str, Any] = {
            "actionId": a.action_id,
            "fixtureId": self._fixture_id,
            "fixtureSeqNum": a.seq,
            "timelineSequence": _Raw(b"1.0E-16") if a.tiny_sequence else a.seq,
            "fixtureActionType": a.type.name,
            "fixtureActionTypeId": a.type.id,
        }
        if a.subtype is not None:
            action["fixtureActionSubType"], action["fixtureActionSubTypeId"] = a.subtype
        action["period"] = a.period
        action["clockTime"] = a.clock
        action["timestamp"] = iso_ms(a.ts_ms)
        action["sendType"], action["sendTypeId"] = a.send
        if a.team is not None:
            action["team"] = self._ref(a.team)
        if a.player is not None:
            action["player"] = self._ref(a.player)
        if a.metadata is not None:
            action["metadata"] = a.metadata
        action["relatedFixtureActionIds"] = a.related
        if a.delayed:
            action["delayStatus"] = "Delayed"
        summary: dict[str, Any] = {
            "isTied": a.home == a.away,
            "awayTeamScore": a.away,
            "homeTeamScore": a.home,
            "currentPeriod": a.period,
            "currentStatus": a.status,
            "collectionStatus": a.collection,
            "currentClockTime": a.clock,
        }
        if a.clock_state is not None:
            summary["currentClockState"] = a.clock_state
        if a.reason is not None:
            summary["reason"], summary["reasonId"] = a.reason
        if a.possession is not None:
            summary["isHomeTeamInPossesion"] = a.possession
        summary["finished"] = a.finished
        summary["periods"] = self._periods_raw
        return encode(
            {
                "traceId": trace_id(a.action_id, a.seq),
                "version": a.version,
                "finished": a.finished,
                "fixtureAction": action,
                "fixtureSummary": summary,
            }
        )


def squad_player(p: Player) -> dict[str, Any]:
    """A squad player; ``lastName`` is left out for one-name players."""
    out: dict[str, Any] = {"id": p.id, "fullName": p.full_name, "firstName": p.first_name}
    if p.last_name is not None:
        out["lastName"] = p.last_name
    out["shirtNumber"] = p.shirt
    out["location"] = location(p.location)
    out["verified"] = p.verified
    return out
