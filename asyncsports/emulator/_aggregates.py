"""Standings and statistics packets, computed from results and timelines.

Standings count the completed, official, not deleted fixtures of a season in start order
(wins + draws + losses = gamesPlayed, points from the sport's table, rank by points, then
score difference, then score, then name). Statistics count a finished fixture's timeline
(a Deleted record takes back the action it deletes). Both are small packets, so they are
built as wire-shaped dicts here rather than through a separate renderer.

Statistics carry the vendor's fields beyond api-spec: the team's ``homeTeam`` as text
(``"true"``, as the vendor's samples send it), each period aggregate's ``label`` and
``type`` (as in the summary's periods), per-player aggregates (``player {id, name}``, the
game and per period) and a timestamp of seven or nine fraction digits.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from asyncsports.emulator._ids import mix64
from asyncsports.emulator._records import Fixture, Season, Team
from asyncsports.emulator._sports import LINEUPS
from asyncsports.emulator._timeline import DELETED, Action
from asyncsports.emulator._wire import duration, iso_ms, iso_ns, iso_ticks, iso_z, ref
from asyncsports.emulator._world import World

__all__ = ["standings", "statistics"]


@dataclass(slots=True)
class _Side:
    games: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    score: int = 0
    against: int = 0
    streak: int = 0


@dataclass(slots=True)
class _Row:
    team: Team
    home: _Side = field(default_factory=_Side)
    away: _Side = field(default_factory=_Side)
    total: _Side = field(default_factory=_Side)
    results: list[str] = field(default_factory=list)
    longest: int = 0
    run: int = 0
    overtime_wins: int = 0


def _streak(current: int, letter: str) -> int:
    if letter == "W":
        return current + 1 if current > 0 else 1
    if letter == "L":
        return current - 1 if current < 0 else -1
    return 0


def _record(row: _Row, side: _Side, letter: str, score: int, against: int) -> None:
    for s in (side, row.total):
        s.games += 1
        s.score += score
        s.against += against
        s.wins += letter == "W"
        s.draws += letter == "D"
        s.losses += letter == "L"
        s.streak = _streak(s.streak, letter)
    row.results.append(letter)
    row.run = row.run + 1 if letter == "W" else 0
    row.longest = max(row.longest, row.run)


def _avg(value: int, count: int) -> float:
    return round(value / count, 2) if count else 0.0


def _int_or_decimal(value: int, count: int) -> int | float:
    if not count:
        return 0
    return value // count if value % count == 0 else round(value / count, 2)


def _table(
    rows: dict[Any, _Row], scoring: tuple[int, int, int], *, soccer: bool
) -> list[dict[str, Any]]:
    """The ranked rows of a standings table."""
    win, draw, loss = scoring

    def points(r: _Row) -> int:
        return r.total.wins * win + r.total.draws * draw + r.total.losses * loss

    ordered = sorted(
        rows.values(),
        key=lambda r: (-points(r), r.total.against - r.total.score, -r.total.score, r.team.name),
    )
    return [_row(rank, r, points(r), soccer) for rank, r in enumerate(ordered, 1)]


def _row(rank: int, r: _Row, points: int, soccer: bool) -> dict[str, Any]:
    """One team's row of a standings table."""
    t, h, a = r.total, r.home, r.away
    return {
        "teamId": r.team.id,
        "name": r.team.name,
        "totalWins": t.wins,
        "homeWins": h.wins,
        "awayWins": a.wins,
        "totalLosses": t.losses,
        "homeLosses": h.losses,
        "awayLosses": a.losses,
        "lossesByWalkover": 0,
        "totalDraws": t.draws,
        "homeDraws": h.draws,
        "awayDraws": a.draws,
        "points": points,
        "last10GamesWinLose": " ".join(r.results[-10:]),
        "overtimeGamesWinLose": "" if soccer else r.overtime_wins,
        "currentStreak": t.streak,
        "longestWinningStreak": r.longest,
        "homeStreak": h.streak,
        "awayStreak": a.streak,
        "score": t.score,
        "homeScore": h.score,
        "awayScore": a.score,
        "opponentsScore": t.against,
        "homeOpponentsScore": h.against,
        "awayOpponentsScore": a.against,
        "averageScore": _avg(t.score, t.games),
        "averageOpponentsScore": _avg(t.against, t.games),
        "averageHomeOpponentsScore": _avg(h.against, h.games),
        "averageAwayOpponentsScore": _avg(a.against, a.games),
        "averageHomeScore": _int_or_decimal(h.score, h.games),
        "averageAwayScore": _int_or_decimal(a.score, a.games),
        "gamesPlayed": t.games,
        "gamesWinPercentage": round(t.wins / t.games, 3) if t.games else 0.0,
        "rank": rank,
        "advancedTeamStatistics": "null",
    }


def standings(world: World, season: Season, now: float) -> list[dict[str, Any]]:
    """The standings packets of a season (one stage, one group) at ``now``."""
    rules = season.rules
    rows = {t.id: _Row(t) for t in season.competition.teams}
    last_end = season.start
    upto = season.first_at_or_after(now - rules.duration + 1e-6)
    for i in range(upto):
        f = world.fixture(season, i)
        if f.deleted or f.type != "official" or f.status(now) != "completed":
            continue
        periods = f.periods()
        home_pts, away_pts = sum(h for h, _ in periods), sum(a for _, a in periods)
        winner = rules.winner(periods)
        letters = ("D", "D") if winner < 0 else ("W", "L") if winner == 0 else ("L", "W")
        home, away = rows[f.home.id], rows[f.away.id]
        _record(home, home.home, letters[0], home_pts, away_pts)
        _record(away, away.away, letters[1], away_pts, home_pts)
        if len(periods) > rules.regular_periods and not rules.by_periods and winner >= 0:
            (home, away)[winner].overtime_wins += 1
        last_end = max(last_end, f.end)

    table = _table(rows, rules.points, soccer=rules.name == "soccer")
    root = "teamStatistics" if rules.name == "basketball" else "teamsStatistics"
    return [
        {
            root: table,
            "timestamp": iso_z(last_end),
            "stage": {"id": season.stage_id, "name": season.stage_name},
            "group": {"id": season.group_id, "name": season.group_name},
        }
    ]


def _aggregates(counts: Counter[tuple[int, str, int, str]]) -> list[dict[str, Any]]:
    """Action aggregates from counts keyed by (type id, type, sub-type id, sub-type)."""
    by_type: dict[tuple[int, str], list[tuple[int, str, int]]] = {}
    for (tid, name, sid, sub), n in sorted(counts.items()):
        by_type.setdefault((tid, name), []).append((sid, sub, n))
    out = []
    for (tid, name), subs in by_type.items():
        total = sum(n for _, _, n in subs)
        if total <= 0:
            continue
        out.append(
            {
                "action": name,
                "actionId": tid,
                "actionAggregate": total,
                "subActionAggregates": [
                    {"subAction": sub, "subActionId": sid, "subActionAggregate": n}
                    for sid, sub, n in subs
                    if sid and n > 0
                ],
            }
        )
    return out


@dataclass(slots=True)
class _Snooker:
    """Breaks and shot times of a cue-sport fixture, collected from its Break actions."""

    fixture: Fixture
    breaks: list[dict[str, Any]] = field(default_factory=list)
    shots: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    ticks: dict[str, list[int]] = field(default_factory=dict)
    striker: str | None = None
    last_frame: Counter[str] = field(default_factory=Counter)
    last_period: int = 0

    def add(self, a: Action) -> None:
        if a.metadata is None or a.player is None or a.team is None:
            return
        potted: dict[str, int] = a.metadata["pottedBalls"]
        balls = sum(potted.values())
        start_ms = a.ts_ms - balls * 18_000
        self.striker = self.striker or a.team.id
        self.breaks.append(
            {
                "score": a.points,
                "breakSeq": len(self.breaks) + 1,
                "playerId": a.player.id,
                "playerName": a.player.full_name,
                "pottedBalls": potted,
                "startTimestamp": iso_ms(start_ms),
                "endTimestamp": iso_ms(a.ts_ms),
                "periodNumber": a.period,
            }
        )
        if a.period != self.last_period:
            self.last_period, self.last_frame = a.period, Counter()
        self.last_frame.update(potted)
        shots = self.shots.setdefault(a.player.id, [])
        ticks = self.ticks.setdefault(a.player.id, [])
        t = start_ms
        for k in range(min(balls, 40 - len(shots))):
            length = 10_000 + (mix64(a.seq * 64 + k) % 20_000)
            # A match suspended overnight: the resumed shot spans a day ("1.00:00:12...").
            if k == 0 and len(shots) == 0 and self.fixture.flag("overnight"):
                length += 86_400_000
            shots.append(
                {
                    "shotStart": iso_ms(t),
                    "shotEnd": iso_ms(t + length),
                    "duration": duration(length * 10_000),
                }
            )
            ticks.append(length * 10_000)
            t += length // 4

    def render(self) -> dict[str, Any]:
        reds = max(0, 15 - self.last_frame.get("redBalls", 0))
        colours = 1 if reds else 0
        remaining = {
            "redBalls": reds,
            "yellowBalls": colours,
            "greenBalls": colours,
            "brownBalls": colours,
            "blueBalls": colours,
            "pinkBalls": colours,
            "blackBalls": colours,
        }
        return {
            "startingStriker": self.striker or self.fixture.home.id,
            "breaksStatistics": {"breaks": self.breaks},
            "remainingBallsStatistics": {
                "possiblePoints": reds * 8 + 27 if reds else 0,
                "remainingBalls": remaining,
                "nextExpectedBall": "red" if reds else "none",
            },
            "averageShotTimeStatistics": {
                "averageShotTimes": {
                    pid: duration(sum(t) // len(t)) for pid, t in self.ticks.items() if t
                },
                "playersShotTimes": {
                    pid: {"playerId": pid, "shotTimes": shots} for pid, shots in self.shots.items()
                },
            },
        }


Counts = Counter[tuple[int, str, int, str]]


def _periods(counts: dict[int, Counts], labels: dict[int, tuple[str, str]] | None) -> list[Any]:
    """Per-period aggregates; with ``labels``, each with its ``label`` and ``type``."""
    out = []
    for p, c in sorted(counts.items()):
        entry: dict[str, Any] = {"period": p}
        if labels is not None and p in labels:
            entry["label"], entry["type"] = labels[p]
        entry["aggregates"] = _aggregates(c)
        out.append(entry)
    return out


def statistics(fixture: Fixture, actions: Iterable[Action]) -> dict[str, Any]:
    """The statistics packet of a finished fixture from its whole timeline."""
    teams = (fixture.home, fixture.away)
    game: dict[str, Counts] = {t.id: Counter() for t in teams}
    periods: dict[str, dict[int, Counts]] = {t.id: {} for t in teams}
    players: dict[str, dict[str, Any]] = {t.id: {} for t in teams}  # team -> player -> parts
    labels: dict[int, tuple[str, str]] = {}
    seen_periods: tuple[Any, ...] = ()
    snooker = _Snooker(fixture) if fixture.season.rules.name == "snooker" else None
    last_seq = 0
    for a in actions:
        last_seq = a.seq
        if a.team is None or a.type is LINEUPS:
            continue
        sub = a.subtype or ("", 0)
        counter_key = (a.type.id, a.type.name, sub[1], sub[0])
        step = -1 if a.send == DELETED else 1
        game[a.team.id][counter_key] += step
        periods[a.team.id].setdefault(a.period, Counter())[counter_key] += step
        if a.player is not None:
            mine = players[a.team.id].setdefault(
                a.player.id, {"player": a.player, "game": Counter(), "periods": {}}
            )
            mine["game"][counter_key] += step
            mine["periods"].setdefault(a.period, Counter())[counter_key] += step
        if snooker is not None and a.points:
            snooker.add(a)
        if a.periods is not seen_periods:
            seen_periods = a.periods
            labels = {p.id: (p.label, "Overtime" if p.overtime else "Regular") for p in a.periods}
    trace = mix64(fixture.season.key ^ fixture.index ^ 0x51ED270B)
    nanos = fixture.end * 1_000_000_000 + (trace % 1_000_000_000)
    return {
        "seqNum": last_seq,
        "traceId": f"{trace:016x}{mix64(trace):016x}",
        "version": 2,
        "finished": True,
        "fixtureId": fixture.id,
        "timestamp": iso_ticks(nanos) if trace & 1 else iso_ns(nanos),
        "teamActionAggregates": [
            {
                "team": {**ref(t), "homeTeam": "true" if t is fixture.home else "false"},
                "gameActionAggregates": _aggregates(game[t.id]),
                "periodActionAggregates": _periods(periods[t.id], labels),
                "playerActionAggregates": [
                    {
                        "player": ref(mine["player"]),
                        "gameActionAggregates": _aggregates(mine["game"]),
                        "periodActionAggregates": _periods(mine["periods"], None),
                    }
                    for _, mine in sorted(players[t.id].items())
                    if any(n > 0 for n in mine["game"].values())
                ],
            }
            for t in teams
        ],
        "advancedSportStatistics": snooker.render() if snooker is not None else {},
    }
