"""The snooker proxy's world: seasons from 1973/1974 to now, tournaments, players, matches.

A fixed pool of players with careers spread over the years; each season holds the
tournaments that existed then, each a knockout draw of 8 to 32 active players. Matches
are simulated round by round from a seeded generator per tournament, frame by frame, so
breaks, centuries, winners and season figures all agree. A match scheduled after the
clock's time is listed unplayed (no frames yet). Records are built in their wire shape
(api-spec 2.6); the proxy is a thin service whose data model is its wire format.
"""

from __future__ import annotations

import base64
import calendar
import datetime as dt
import struct
import zlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from asyncsports.emulator._ids import key, rng, uuid_from
from asyncsports.emulator._names import CITIES, COUNTRIES, FIRST_NAMES, LAST_NAMES, Country
from asyncsports.emulator._wire import iso_ms, iso_z

__all__ = ["FIRST_SEASON", "Match", "SnookerPlayer", "SnookerWorld", "Tournament"]

FIRST_SEASON = 1973
ZERO_UUID = "00000000-0000-0000-0000-000000000000"
_DAY = 86400

# name, first season, month, field size, best-of per round (first round first)
_SLOTS: tuple[tuple[str, int, int, int, tuple[int, ...]], ...] = (
    ("World Championship", 1973, 4, 32, (19, 25, 25, 33, 35)),
    ("Masters", 1974, 1, 16, (11, 11, 11, 19)),
    ("UK Championship", 1977, 11, 32, (11, 11, 11, 17, 19)),
    ("Grand Prix", 1984, 10, 32, (9, 9, 9, 11, 17)),
    ("Welsh Open", 1991, 2, 32, (7, 7, 7, 11, 17)),
    ("China Open", 1998, 3, 32, (9, 9, 9, 11, 19)),
    ("Shanghai Masters", 2007, 9, 16, (11, 11, 11, 19)),
    ("German Masters", 2010, 2, 32, (9, 9, 9, 11, 19)),
    ("Champion of Champions", 2012, 11, 16, (7, 11, 11, 19)),
    ("English Open", 2015, 10, 32, (7, 7, 7, 11, 17)),
    ("Scottish Open", 2015, 12, 32, (7, 7, 7, 11, 17)),
    ("Tour Championship", 2018, 3, 8, (17, 19, 19)),
)
_ROUND_NAMES = {32: "Last 32", 16: "Last 16", 8: "Quarter-finals", 4: "Semi-finals", 2: "Final"}


@dataclass(frozen=True, slots=True, eq=False)
class SnookerPlayer:
    """A professional with an integer id, external ids and a career span."""

    id: int
    person_id: str
    club_id: str
    team_id: str
    first: str
    last: str
    country: Country
    born: int
    place_of_birth: str
    lives: str
    twitter: str | None
    debut: int
    retired: int
    strength: float


@dataclass(frozen=True, slots=True, eq=False)
class Tournament:
    """One edition of a tournament in a season, with its draw."""

    id: int
    slot: int
    name: str
    season: int
    start: int
    end: int
    competition_id: str
    season_uuid: str
    stage_uuid: str
    draw: tuple[int, ...]
    best_of: tuple[int, ...]


@dataclass(frozen=True, slots=True, eq=False)
class Match:
    """A played (or scheduled) match: frames, points, breaks per frame."""

    number: int
    round: int
    players: tuple[int, int]
    when: int
    walkover: bool
    frames: tuple[int, int]
    points: tuple[int, int]
    breaks: tuple[tuple[int, int, int], ...]
    """(frame, side, points) of every break of 50 or more."""
    shots: tuple[int, int]
    winner: int


def _epoch(y: int, m: int, d: int) -> int:
    return calendar.timegm((y, m, d, 0, 0, 0))


def png(rgb: tuple[int, int, int], size: int = 16) -> bytes:
    """A valid PNG image of one colour."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(rgb) * size
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * size))
        + chunk(b"IEND", b"")
    )


class SnookerWorld:
    """Everything the snooker proxy serves, for one seed, built on first use."""

    def __init__(self, seed: int, now: dt.datetime) -> None:
        self.seed = seed
        self.current = now.year if now.month >= 7 else now.year - 1
        self.players = self._make_players()
        self._by_player = {p.id: p for p in self.players}
        self._by_person = {p.person_id: p for p in self.players if p.person_id != ZERO_UUID}
        self.tournaments = self._make_tournaments()
        self._by_id = {t.id: t for t in self.tournaments}
        self._by_external: dict[str, Tournament] = {}
        for t in self.tournaments:  # later editions win the competition id
            self._by_external[t.competition_id] = t
            self._by_external[t.season_uuid] = t
            self._by_external[t.stage_uuid] = t
        self._matches: OrderedDict[int, tuple[Match, ...]] = OrderedDict()

    # ------------------------------------------------------------------ lookups

    def tournament(self, ident: int | str) -> Tournament | None:
        """A tournament by numeric id, or by any of its external UUIDs."""
        if isinstance(ident, int):
            return self._by_id.get(ident)
        return self._by_external.get(ident.lower())

    def player(self, ident: int | str) -> SnookerPlayer | None:
        """A player by numeric id or by personId (never the all-zero one)."""
        if isinstance(ident, int):
            return self._by_player.get(ident)
        return self._by_person.get(ident.lower())

    def member(self, pid: int) -> SnookerPlayer:
        """A player of the pool by id (ids taken from draws and matches always exist)."""
        return self._by_player[pid]

    def season_tournaments(self, season: int) -> list[Tournament]:
        """The tournaments of a season, by start date."""
        return [t for t in self.tournaments if t.season == season]

    def active(self, season: int) -> list[SnookerPlayer]:
        """Players on the tour in a season."""
        return [p for p in self.players if p.debut <= season <= p.retired]

    def matches(self, t: Tournament) -> tuple[Match, ...]:
        """The matches of a tournament's draw, round by round (simulated once, cached)."""
        cached = self._matches.get(t.id)
        if cached is None:
            cached = self._matches[t.id] = self._simulate(t)
            if len(self._matches) > 256:
                self._matches.popitem(last=False)
        return cached

    def winner(self, t: Tournament) -> SnookerPlayer:
        """The winner of the final."""
        final = self.matches(t)[-1]
        return self._by_player[final.players[final.winner]]

    # ------------------------------------------------------------------ records

    def external(self, p: SnookerPlayer) -> dict[str, str]:
        """playerExternalId."""
        return {"personId": p.person_id, "clubId": p.club_id, "teamId": p.team_id}

    @staticmethod
    def tournament_external(t: Tournament) -> dict[str, str]:
        """externalTournamentId."""
        return {
            "competitionId": t.competition_id,
            "seasonId": t.season_uuid,
            "stageId": t.stage_uuid,
        }

    def tournament_record(self, t: Tournament) -> dict[str, Any]:
        """Tournament."""
        return {
            "tournamentId": t.id,
            "externalTournamentId": self.tournament_external(t),
            "tournamentName": t.name,
            "startDate": iso_z(t.start),
            "endDate": iso_z(t.end),
            "seasonId": t.season,
            "seasonStartYear": t.season,
            "seasonEndYear": t.season + 1,
            "seasonName": f"{t.season}/{t.season + 1}",
        }

    def match_record(self, t: Tournament, m: Match, now: float) -> dict[str, Any]:
        """Match; frames, points and breaks stay zero until the match has been played."""
        rounds = len(t.best_of)
        played = m.when <= now
        p1, p2 = (self._by_player[i] for i in m.players)
        rec: dict[str, Any] = {
            "matchId": t.id * 100 + m.number,
            "matchExternalId": uuid_from(key(self.seed, "match", t.id, m.number)),
            "tournamentMatchNumber": m.number,
            "player1Id": p1.id,
            "player2Id": p2.id,
            "player1FirstName": p1.first,
            "player1LastName": p1.last,
            "player2FirstName": p2.first,
            "player2LastName": p2.last,
            "roundNumber": m.round,
            "roundName": _ROUND_NAMES[2 ** (rounds - m.round + 1)],
            "isWalkover": m.walkover and played,
        }
        for side, n in ((0, "1"), (1, "2")):
            breaks = [b for _, s, b in m.breaks if s == side] if played else []
            rec[f"player{n}Break"] = max(breaks, default=0)
            rec[f"player{n}Points"] = m.points[side] if played else 0
            rec[f"player{n}Frames"] = m.frames[side] if played else 0
            rec[f"player{n}FrameBreaks"] = ", ".join(map(str, breaks))
            rec[f"player{n}Shots"] = m.shots[side] if played else 0
        rec["bestOutOfFrames"] = t.best_of[m.round - 1]
        return rec

    def tournament_player(self, p: SnookerPlayer) -> dict[str, Any]:
        """Tournament player."""
        return {
            "playerId": p.id,
            "playerExternalId": self.external(p),
            "playerFirstName": p.first,
            "playerSecondName": p.last,
            "country": p.country.name,
            "dateOfBirth": iso_z(p.born),
        }

    def ast(self, p: SnookerPlayer, t: Tournament) -> float:
        """Average shot time of a player in a tournament, in seconds."""
        r = rng(self.seed, "ast", p.id, t.id)
        return round(26.0 - 6.0 * p.strength + r.uniform(-2.5, 2.5), 2)

    def season_ast(self, p: SnookerPlayer, season: int) -> float:
        """Average of the player's tournament ASTs over a season."""
        values = [self.ast(p, t) for t in self.season_tournaments(season) if p.id in t.draw]
        return round(sum(values) / len(values), 2) if values else 0.0

    def ast_record(self, p: SnookerPlayer, t: Tournament, for_season: bool) -> dict[str, Any]:
        """Player AST."""
        return {
            "playerId": p.id,
            "playerExternalId": self.external(p),
            "playerFirstName": p.first,
            "playerLastName": p.last,
            "playerAst": self.season_ast(p, t.season) if for_season else self.ast(p, t),
            "tournamentId": t.id,
            "tournamentExternalId": self.tournament_external(t),
        }

    def centuries(self, t: Tournament, now: float) -> list[dict[str, Any]]:
        """Break records of 100 or more made in the tournament's played matches."""
        rounds = len(t.best_of)
        out = []
        for m in self.matches(t):
            if m.when > now:
                continue
            for frame, side, points in m.breaks:
                if points < 100:
                    continue
                me, them = (self._by_player[i] for i in (m.players[side], m.players[1 - side]))
                out.append(
                    {
                        "tournamentId": t.id,
                        "tournamentExternalId": self.tournament_external(t),
                        "break": points,
                        "playerId": me.id,
                        "playerExternalId": self.external(me),
                        "playerFirstName": me.first,
                        "playerLastName": me.last,
                        "opponentId": them.id,
                        "opponentExternalId": self.external(them),
                        "opponentFirstName": them.first,
                        "opponentLastName": them.last,
                        "roundId": m.round,
                        "roundName": _ROUND_NAMES[2 ** (rounds - m.round + 1)],
                        "frame": frame,
                        "date": iso_ms(m.when * 1000 + frame * 1_712_345),
                    }
                )
        return out

    def profile(self, p: SnookerPlayer, season: int) -> dict[str, Any]:
        """Player profile with the season's figures."""
        played = won = best = 0
        for t in self.season_tournaments(season):
            for m in self.matches(t):
                if p.id in m.players:
                    side = m.players.index(p.id)
                    played += 1
                    won += m.winner == side
                    best = max([best] + [b for _, s, b in m.breaks if s == side])
        rec: dict[str, Any] = {
            "playerId": p.id,
            "playerExternalId": self.external(p),
            "playerFirstName": p.first,
            "playerLastName": p.last,
            "dateOfBirth": iso_z(p.born),
            "placeOfBirth": p.place_of_birth,
            "nationality": p.country.iso3,
            "lives": p.lives,
        }
        if p.twitter is not None:
            rec["twitter"] = p.twitter
        rec.update(
            seasonRanking=self.ranking(season).index(p.id) + 1,
            seasonAst=self.season_ast(p, season),
            matchesPlayed=played,
            matchesWon=won,
            matchesLost=played - won,
            highestBreak=best,
        )
        return rec

    def ranking(self, season: int) -> list[int]:
        """Player ids of a season by strength (the ranking list)."""
        ranked = sorted(self.active(season), key=lambda p: (-p.strength, p.id))
        return [p.id for p in ranked]

    def previous_winners(self, t: Tournament) -> list[dict[str, Any]]:
        """Previous winner records of earlier editions, most recent first."""
        out = []
        for e in self.tournaments:
            if e.slot == t.slot and e.season < t.season:
                w = self.winner(e)
                out.append(
                    {
                        "playerId": w.id,
                        "playerExternalId": self.external(w),
                        "playerFirstName": w.first,
                        "playerLastName": w.last,
                        "tournamentId": e.id,
                        "year": dt.datetime.fromtimestamp(e.end, dt.UTC).year,
                    }
                )
        return out[::-1]

    def image(self, p: SnookerPlayer) -> dict[str, Any]:
        """Player image: a small PNG, base64."""
        r = rng(self.seed, "image", p.id)
        data = png((r.randrange(256), r.randrange(256), r.randrange(256)))
        return {
            "fileName": f"player_{p.id}.png",
            "fileContent": base64.b64encode(data).decode(),
            "fileType": "image/png",
        }

    # ------------------------------------------------------------------ making

    def _make_players(self) -> tuple[SnookerPlayer, ...]:
        r = rng(self.seed, "snooker-players")
        count = 256
        span = self.current - 1955
        names = r.sample([(f, la) for f in FIRST_NAMES for la in LAST_NAMES], count)
        out = []
        for k in range(count):
            debut = 1955 + span * k // count
            country = r.choice(COUNTRIES[:8] if r.random() < 0.6 else COUNTRIES)
            first, last = names[k]
            born = _epoch(debut - r.randint(16, 21), r.randint(1, 12), r.randint(1, 28))
            ext = key(self.seed, "snooker-player", k)
            out.append(
                SnookerPlayer(
                    id=100 + k,
                    person_id=ZERO_UUID if r.random() < 0.06 else uuid_from(ext),
                    club_id=uuid_from(ext + 1),
                    team_id=uuid_from(ext + 2),
                    first=first,
                    last=last,
                    country=country,
                    born=born,
                    place_of_birth=f"{r.choice(CITIES)}, {country.name}",
                    lives=f"{r.choice(CITIES)}, {r.choice(COUNTRIES[:8]).name}",
                    twitter=f"@{first.lower()}{last.lower()}" if r.random() < 0.6 else None,
                    debut=debut,
                    retired=debut + r.randint(20, 30),
                    strength=r.random(),
                )
            )
        return tuple(out)

    def _make_tournaments(self) -> tuple[Tournament, ...]:
        out = []
        for season in range(FIRST_SEASON, self.current + 1):
            active = self.active(season)
            for slot, (name, first, month, field, best_of) in enumerate(_SLOTS):
                if season < first:
                    continue
                r = rng(self.seed, "tournament", season, slot)
                year = season if month >= 7 else season + 1
                start = _epoch(year, month, r.randint(1, 18))
                days = {32: 10, 16: 7, 8: 5}[field]
                by_strength = sorted(active, key=lambda p: -p.strength - r.random())
                draw = tuple(p.id for p in by_strength[:field])
                base = key(self.seed, "tournament-ext", slot)
                out.append(
                    Tournament(
                        id=1000 + (season - FIRST_SEASON) * 20 + slot,
                        slot=slot,
                        name=name,
                        season=season,
                        start=start,
                        end=start + (days - 1) * _DAY + 22 * 3600,
                        competition_id=uuid_from(base),
                        season_uuid=uuid_from(key(self.seed, "t-season", season, slot)),
                        stage_uuid=uuid_from(key(self.seed, "t-stage", season, slot)),
                        draw=draw,
                        best_of=best_of,
                    )
                )
        out.sort(key=lambda t: (t.start, t.id))
        return tuple(out)

    def _simulate(self, t: Tournament) -> tuple[Match, ...]:
        r = rng(self.seed, "draw", t.id)
        field = len(t.draw)
        # Seeds meet the weakest first: 1 v 32, 2 v 31...
        alive = [
            t.draw[k]
            for pair in zip(range(field // 2), range(field - 1, field // 2 - 1, -1), strict=True)
            for k in pair
        ]
        rounds = len(t.best_of)
        day_step = (t.end - t.start) // rounds
        out: list[Match] = []
        for rnd in range(1, rounds + 1):
            nxt = []
            best_of = t.best_of[rnd - 1]
            for k in range(0, len(alive), 2):
                pair = (alive[k], alive[k + 1])
                number = len(out) + 1
                when = t.start + (rnd - 1) * day_step + 36000 + (k // 2 % 4) * 10800
                out.append(self._match(r, pair, number, rnd, when, best_of))
                nxt.append(pair[out[-1].winner])
            alive = nxt
        return tuple(out)

    def _match(
        self,
        r: Any,
        pair: tuple[int, int],
        number: int,
        rnd: int,
        when: int,
        best_of: int,
    ) -> Match:
        need = best_of // 2 + 1
        s1, s2 = (self._by_player[i].strength for i in pair)
        p1_chance = 0.5 + (s1 - s2) * 0.35
        if r.random() < 0.02:
            winner = 0 if r.random() < p1_chance else 1
            frames = (need, 0) if winner == 0 else (0, need)
            return Match(number, rnd, pair, when, True, frames, (0, 0), (), (0, 0), winner)
        won = [0, 0]
        points = [0, 0]
        shots = [0, 0]
        breaks: list[tuple[int, int, int]] = []
        frame = 0
        while max(won) < need:
            frame += 1
            side = 0 if r.random() < p1_chance else 1
            high = min(147, int(r.triangular(20, 147, 70)))
            win_pts = max(high, r.randint(60, 125))
            lose_pts = r.randint(0, 55)
            if high >= 50:
                breaks.append((frame, side, high))
            if lose_pts >= 50:
                breaks.append((frame, 1 - side, lose_pts))
            won[side] += 1
            points[side] += win_pts
            points[1 - side] += lose_pts
            shots[side] += r.randint(12, 30)
            shots[1 - side] += r.randint(8, 25)
        winner = 0 if won[0] > won[1] else 1
        return Match(
            number,
            rnd,
            pair,
            when,
            False,
            (won[0], won[1]),
            (points[0], points[1]),
            tuple(breaks),
            (shots[0], shots[1]),
            winner,
        )
