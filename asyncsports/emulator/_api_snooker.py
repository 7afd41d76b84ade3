"""Handlers of the snooker proxy (api-spec 4.7), every answer wrapped in ``data``.

Tournaments are found by numeric id, or on the ``external/`` paths by any of their
external UUIDs (stageId or seasonId; a competitionId means its latest edition). Players
on the ``external/`` player-info path are found by personId.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any, TypeVar

from aiohttp import web

from asyncsports.emulator._clock import Clock
from asyncsports.emulator._faults import Fault
from asyncsports.emulator._http import HttpError, Reply, boolean, integer, json_reply
from asyncsports.emulator._snooker import SnookerPlayer, SnookerWorld, Tournament

__all__ = ["SnookerApi"]


def _sort(records: list[dict[str, Any]], options: list[str]) -> list[dict[str, Any]]:
    """Sort by ``field`` or ``field,asc|desc`` options, in order; unknown fields are a 400."""
    keys: list[tuple[str, bool]] = []
    for option in options:
        name, _, direction = option.partition(",")
        direction = direction.lower() or "asc"
        if direction not in ("asc", "desc"):
            raise HttpError(400, f"sortOptions: bad direction in {option!r}")
        if records and (name not in records[0] or isinstance(records[0][name], dict)):
            raise HttpError(400, f"sortOptions: cannot sort on {name!r}")
        keys.append((name, direction == "desc"))
    for name, desc in reversed(keys):  # stable sorts, last key first
        records.sort(key=lambda r: (r.get(name) is None, r.get(name)), reverse=desc)
    return records


def _when(value: str | None, name: str) -> float | None:
    if value is None:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise HttpError(400, f"{name}: expected a date or datetime, got {value!r}") from None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)).timestamp()


R = TypeVar("R")


class SnookerApi:
    """Tournaments, matches, players, centuries, winners and images."""

    def __init__(self, seed: int, start: dt.datetime, clock: Clock) -> None:
        self._seed = seed
        self._start = start
        self._clock = clock
        self._world: SnookerWorld | None = None

    @property
    def world(self) -> SnookerWorld:
        """The snooker world, built at the first request (it takes a few milliseconds)."""
        if self._world is None:
            self._world = SnookerWorld(self._seed, self._start)
        return self._world

    def _tournament(self, request: web.Request) -> Tournament:
        return _find(request, self.world.tournament, "external_id", "tournament_id", "Tournament")

    def _player(self, request: web.Request) -> SnookerPlayer:
        return _find(request, self.world.player, "external_player", "player_id", "Player")

    @staticmethod
    def _data(value: object) -> Reply:
        return json_reply({"data": value})

    def _list(self, request: web.Request, records: list[dict[str, Any]]) -> Reply:
        return self._data(_sort(records, request.query.getall("sortOptions", [])))

    # ------------------------------------------------------------------ handlers

    def tournaments(self, request: web.Request, fault: Fault | None) -> Reply:
        """Tournaments, optionally of one season and overlapping ``start``..``end``."""
        q = request.query
        season = integer(q, "seasonId")
        start, end = _when(q.get("start"), "start"), _when(q.get("end"), "end")
        found = [
            t
            for t in self.world.tournaments
            if (season is None or t.season == season)
            and (start is None or t.end >= start)
            and (end is None or t.start <= end)
        ]
        return self._list(request, [self.world.tournament_record(t) for t in found])

    def matches(self, request: web.Request, fault: Fault | None) -> Reply:
        """Matches of a tournament, optionally of one round."""
        t = self._tournament(request)
        rnd = integer(request.query, "roundNumber")
        now = self._clock.time()
        records = [
            self.world.match_record(t, m, now)
            for m in self.world.matches(t)
            if rnd is None or m.round == rnd
        ]
        return self._list(request, records)

    def ast(self, request: web.Request, fault: Fault | None) -> Reply:
        """Average shot times of the tournament's players (or over its season)."""
        t = self._tournament(request)
        for_season = bool(boolean(request.query, "forSeason"))
        w = self.world
        records = [w.ast_record(w.member(pid), t, for_season) for pid in t.draw]
        records.sort(key=lambda r: float(r["playerAst"]))
        return self._list(request, records)

    def tournament_players(self, request: web.Request, fault: Fault | None) -> Reply:
        """The tournament's draw as Tournament player records."""
        t = self._tournament(request)
        w = self.world
        records = [w.tournament_player(w.member(pid)) for pid in t.draw]
        if "external_id" in request.match_info:
            # On this endpoint sortOptions is a boolean: true sorts by name.
            flag = boolean(request.query, "sortOptions")
            if flag:
                records.sort(key=lambda r: (r["playerSecondName"], r["playerFirstName"]))
            return self._data(records)
        return self._list(request, records)

    def tour_players(self, request: web.Request, fault: Fault | None) -> Reply:
        """Players on the tour this season."""
        w = self.world
        return self._list(request, [w.tournament_player(p) for p in w.active(w.current)])

    def centuries(self, request: web.Request, fault: Fault | None) -> Reply:
        """Century breaks of the tournament (or of its whole season)."""
        t = self._tournament(request)
        now = self._clock.time()
        events = [t]
        if boolean(request.query, "forSeason"):
            events = self.world.season_tournaments(t.season)
        return self._list(request, [b for e in events for b in self.world.centuries(e, now)])

    def current_winner(self, request: web.Request, fault: Fault | None) -> Reply:
        """The winner's Player profile (one object); 404 before the final is played."""
        t = self._tournament(request)
        final = self.world.matches(t)[-1]
        if final.when > self._clock.time():
            raise HttpError(404, f"Tournament {t.id} has no winner yet")
        return self._data(self.world.profile(self.world.winner(t), t.season))

    def previous_winners(self, request: web.Request, fault: Fault | None) -> Reply:
        """Winners of earlier editions, most recent first."""
        return self._list(request, self.world.previous_winners(self._tournament(request)))

    def player_info(self, request: web.Request, fault: Fault | None) -> Reply:
        """One Player image object."""
        self._tournament(request)
        return self._data(self.world.image(self._player(request)))


def _find(
    request: web.Request,
    lookup: Callable[[int | str], R | None],
    external: str,
    key: str,
    what: str,
) -> R:
    """The record the path names: by its external id as given, else by its integer id
    (400 when it is not an integer); 404 when there is none."""
    info = request.match_info
    ident: int | str
    if external in info:
        ident = info[external]
    else:
        try:
            ident = int(info[key])
        except ValueError:
            wire = what[0].lower() + what[1:] + "Id"  # tournamentId, playerId
            raise HttpError(400, f"{wire}: not an integer: {info[key]}") from None
    found = lookup(ident)
    if found is None:
        raise HttpError(404, f"{what} not found: {ident}")
    return found
