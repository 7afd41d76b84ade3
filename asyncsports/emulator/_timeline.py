"""The action timeline of a fixture, as api-spec 3 describes it.

A timeline is a pure function of the fixture: the result is drawn first
(:meth:`Fixture.periods`), then one seeded generator walks through the match writing
actions that reach it. It is generated lazily, action by action, so a million-action
timeline costs no memory, and what is served at a moment is the prefix whose timestamps
are not after the clock.

Shape: pre-match records (Match Conditions, Team Colours, Device Location, both Lineups:
Scheduled -> LineUps), Start Fixture, then per period Start Period (-> Live, the period
opens with ``end`` null), Start Clock, scoring and other in-play actions in a random
interleaving, End Period; then End Fixture and Post Match Check Complete (-> Completed,
``finished`` true). Scores in the summary are cumulative and end at the drawn result.

The summary also carries the vendor's fields beyond api-spec: ``collectionStatus``
(CollectionScheduled, CollectingLive, CollectionCompleted after End Fixture,
PostMatchChecked on the closing record), ``currentClockState`` (running between Start Clock
and End Period, else stopped; sports without a clock have none) and ``finished``.

Quirks, per fixture: version-1 Team Colours with capitalised keys, a first
``timelineSequence`` of ``1.0E-16``, lineups with null first names, and (``suspended``)
collection suspended between the first two periods: a Status Updated record with
CollectionSuspended and a ``reason``/``reasonId``, one resuming collection, and the next
few records flagged ``delayStatus`` Delayed. Per action: sendType Pending or Updated now
and then; rarely a second record that deletes the action just sent (sendType ``Deleted``,
an id beyond the three api-spec lists); now and then a review of a score (the sport's
review action) whose ``relatedFixtureActionIds`` names the scoring action.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from asyncsports.emulator._ids import mix64, uuid_from
from asyncsports.emulator._records import Fixture, Player, Team
from asyncsports.emulator._sports import (
    DEVICE_LOCATION,
    END_FIXTURE,
    END_PERIOD,
    LINEUPS,
    MATCH_CONDITIONS,
    POST_MATCH,
    START_CLOCK,
    START_FIXTURE,
    START_PERIOD,
    STATUS_UPDATED,
    TEAM_COLOURS,
    ActionType,
)

__all__ = ["CONFIRMED", "DELETED", "Action", "Period", "timeline"]

CONFIRMED = ("Confirmed", 5)
PENDING = ("Pending", 1)
UPDATED = ("Updated", 2)
DELETED = ("Deleted", 3)

_PRE_MATCH = 3600_000
"""Match Conditions is sent an hour before the start."""
_POST_MATCH = 600_000
"""Post Match Check Complete follows End Fixture by ten minutes."""
_BREAK_SHARE = 0.15
"""Share of the in-play time spent in breaks between periods."""
_ZONES = ("Left Corner", "Right Corner", "Left Wing", "Right Wing", "Top Of Key", "Paint")
_SUSPENSION = ("No signal from the venue", 1)
"""``reason`` and ``reasonId`` of a suspended collection."""
_DELAYED = 3
"""Records flagged Delayed after collection resumes."""


class Period(NamedTuple):
    """A period in the summary; scores ``home``/``away`` are cumulative up to its end."""

    id: int
    overtime: bool
    label: str
    start_ms: int
    end_ms: int | None
    home: int
    away: int
    home_period: int
    away_period: int


@dataclass(slots=True)
class Action:
    """One action record with the fixture summary at that moment."""

    version: int
    finished: bool
    seq: int
    action_id: str
    type: ActionType
    subtype: tuple[str, int] | None
    period: int
    clock: str
    ts_ms: int
    send: tuple[str, int]
    team: Team | None
    player: Player | None
    metadata: dict[str, Any] | None
    tiny_sequence: bool
    points: int
    home: int
    away: int
    status: str
    periods: tuple[Period, ...]
    possession: bool | None
    related: tuple[str, ...] = ()
    collection: str = "CollectionScheduled"
    clock_state: str | None = None
    reason: tuple[str, int] | None = None
    delayed: bool = False


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 60:02d}:{s % 60:02d}"


def _lineup_entry(p: Player, null_first: bool) -> dict[str, Any]:
    return {
        "id": p.id,
        "fullName": p.full_name,
        "lastName": p.last_name if p.last_name is not None else p.full_name,
        "firstName": None if null_first or p.last_name is None else p.first_name,
        "shirtNumber": p.shirt,
    }


def _potted(points: int) -> dict[str, int]:
    """Balls that make a break of ``points``: a red and a colour per visit, then colours."""
    names = ("yellowBalls", "greenBalls", "brownBalls", "blueBalls", "pinkBalls", "blackBalls")
    balls = dict.fromkeys(("redBalls", *names), 0)
    rest = points
    while rest >= 8 and balls["redBalls"] < 15:
        balls["redBalls"] += 1
        balls["blackBalls"] += 1
        rest -= 8
    while rest > 0:
        if rest >= 2:
            value = min(rest, 7)
            balls[names[value - 2]] += 1
            rest -= value
        else:
            balls["redBalls"] += 1
            rest -= 1
    return balls


class _Writer:
    """Holds the running state of one timeline while it is written."""

    def __init__(self, fixture: Fixture, squads: tuple[tuple[Player, ...], ...]) -> None:
        self.f = fixture
        self.rules = fixture.season.rules
        self.key = mix64(fixture.season.key ^ fixture.index ^ 0x7F4A7C159E3779B9)
        self.r = random.Random(self.key)
        self.teams = (fixture.home, fixture.away)
        self.squads = squads
        self.starters = tuple(
            tuple(self.r.sample(s, min(len(s), self.rules.lineup_size))) for s in squads
        )
        self.seq = 0
        self.home = 0
        self.away = 0
        self.status = "Scheduled"
        self.periods: tuple[Period, ...] = ()
        self.period = 0
        self.clock = "00:00"
        self.tiny = fixture.flag("tiny_sequence")
        self.possession = self.rules.name in ("american-football", "basketball")
        self.in_possession: bool | None = None
        self.collection = "CollectionScheduled"
        self.clock_state: str | None = "stopped" if self.rules.clock_minutes else None
        self.reason: tuple[str, int] | None = None
        self.delayed = 0
        self.last_score: Action | None = None

    def emit(
        self,
        kind: ActionType,
        ts_ms: int,
        *,
        side: int | None = None,
        player: Player | None = None,
        metadata: dict[str, Any] | None = None,
        points: int = 0,
        send: tuple[str, int] = CONFIRMED,
        version: int = 2,
        finished: bool = False,
        action_id: str | None = None,
        related: tuple[str, ...] = (),
        draw: bool = True,
    ) -> Action:
        """The next record. ``draw=False``: no random draws (records added to a timeline
        after its draws were fixed keep the possession of the record before)."""
        self.seq += 1
        self.last_score = None  # a review follows its score directly (_score sets it again)
        subtype = None
        if kind.subtypes and draw:
            k = self.r.randrange(len(kind.subtypes))
            subtype = (kind.subtypes[k], kind.id * 10 + k + 1)
        if self.possession and draw:
            self.in_possession = self.r.random() < 0.5
        delayed = self.delayed > 0
        self.delayed -= delayed
        return Action(
            version=version,
            finished=finished,
            seq=self.seq,
            action_id=action_id or uuid_from(self.key + self.seq),
            type=kind,
            subtype=subtype,
            period=self.period,
            clock=self.clock,
            ts_ms=ts_ms,
            send=send,
            team=None if side is None else self.teams[side],
            player=player,
            metadata=metadata,
            tiny_sequence=self.tiny and self.seq == 1,
            points=points,
            home=self.home,
            away=self.away,
            status=self.status,
            periods=self.periods,
            possession=self.in_possession,
            related=related,
            collection=self.collection,
            clock_state=self.clock_state,
            reason=self.reason,
            delayed=delayed,
        )

    def pre_match(self, start_ms: int) -> Iterator[Action]:
        r, f = self.r, self.f
        yield self.emit(
            MATCH_CONDITIONS,
            start_ms - _PRE_MATCH,
            metadata={
                "pitchConditions": {"quality": r.randint(1, 5), "surface": r.randint(1, 4)},
                "weatherConditions": {
                    "rain": r.randint(0, 3),
                    "wind": r.randint(0, 40),
                    "temperature": r.randint(-5, 32),
                },
            },
        )
        colours = [", ".join(map(str, t.colour)) for t in self.teams]
        v1 = f.flag("v1_colours")
        names = ("HomeTeamColour", "AwayTeamColour") if v1 else ("homeTeamColour", "awayTeamColour")
        yield self.emit(
            TEAM_COLOURS,
            start_ms - _PRE_MATCH + 600_000,
            metadata={names[1]: colours[1], names[0]: colours[0]},
            version=1 if v1 else 2,
        )
        venue = f.home.venue
        yield self.emit(
            DEVICE_LOCATION,
            start_ms - _PRE_MATCH + 900_000,
            metadata={"latitude": venue.lat, "longitude": venue.lon},
        )
        null_first = f.flag("null_first_names")
        for side in (0, 1):
            self.status = "LineUps"
            starters = self.starters[side]
            subs = [p for p in self.squads[side] if p not in starters]
            yield self.emit(
                LINEUPS,
                start_ms - 1800_000 + side * 10_000,
                side=side,
                metadata={
                    "teamId": self.teams[side].id,
                    "startingLineup": [_lineup_entry(p, null_first) for p in starters],
                    "substitutes": [_lineup_entry(p, null_first) for p in subs],
                },
            )
        yield self.emit(START_FIXTURE, start_ms)

    def body(
        self, start_ms: int, end_ms: int, scoring: list[list[tuple[ActionType, int]]], fillers: int
    ) -> Iterator[Action]:
        """The in-play actions of the current period: scoring ones and ``fillers`` others."""
        r, rules = self.r, self.rules
        home, away = scoring
        total = len(home) + len(away) + fillers
        minutes = rules.clock_minutes if self.period <= rules.regular_periods else 5
        span = end_ms - start_ms
        hi = ai = 0
        last: Action | None = None  # the filler just sent, which the next slot may delete
        for k in range(total):
            ts = start_ms + (k + 1) * span // (total + 1)
            self.clock = _clock(minutes * 60 * (k + 1) / (total + 1))
            left_scoring = len(home) - hi + len(away) - ai
            if r.random() * (total - k) < left_scoring:
                if r.random() * left_scoring < len(home) - hi:
                    side, (kind, points) = 0, home[hi]
                    hi += 1
                else:
                    side, (kind, points) = 1, away[ai]
                    ai += 1
                last = None
                yield self._score(kind, points, side, ts)
            elif last is not None and r.random() < 0.01:
                yield self.emit(
                    last.type,
                    ts,
                    side=self.teams.index(last.team) if last.team else None,
                    player=last.player,
                    send=DELETED,
                    action_id=last.action_id,
                )
                last = None
            else:
                last = self._filler(r.randint(0, 1), ts)
                yield last

    def _score(self, kind: ActionType, points: int, side: int, ts: int) -> Action:
        if side == 0:
            self.home += points
        else:
            self.away += points
        current = self.periods[-1]
        self.periods = (
            *self.periods[:-1],
            current._replace(
                home=self.home,
                away=self.away,
                home_period=current.home_period + (points if side == 0 else 0),
                away_period=current.away_period + (points if side == 1 else 0),
            ),
        )
        metadata: dict[str, Any] | None = None
        if kind.id in (231, 233):
            metadata = {
                "courtPosition": {
                    "x": round(self.r.uniform(0, 28), 2),
                    "y": round(self.r.uniform(0, 15), 2),
                    "zone": self.r.choice(_ZONES),
                }
            }
        elif self.rules.name == "snooker":
            metadata = {"breakPoints": points, "pottedBalls": _potted(points)}
        player = self.r.choice(self.starters[side])
        score = self.emit(kind, ts, side=side, player=player, metadata=metadata, points=points)
        self.last_score = score
        return score

    def _filler(self, side: int, ts: int) -> Action:
        """An in-play action; right after a score, now and then the review of that score."""
        r = self.r
        x = r.random()
        send = CONFIRMED if x < 0.85 else PENDING if x < 0.95 else UPDATED
        kind = r.choice(self.rules.fillers)
        player = r.choice(self.starters[side])
        score, review = self.last_score, self.rules.review
        # The same draws are made either way (a review has no sub-types, as fillers have
        # none), so a review changes no other record of the timeline.
        if score is not None and review is not None and mix64(self.key ^ self.seq) % 4 == 0:
            assert score.team is not None
            side = self.teams.index(score.team)
            return self.emit(review, ts, side=side, related=(score.action_id,))
        return self.emit(kind, ts, side=side, player=player, send=send)

    def suspension(self, start_ms: int, end_ms: int) -> Iterator[Action]:
        """Collection suspended (with its reason) at ``start_ms``, resumed at ``end_ms``."""
        self.collection = "CollectionSuspended"
        self.reason = _SUSPENSION
        yield self.emit(STATUS_UPDATED, start_ms, draw=False)
        self.collection = "CollectingLive"
        self.reason = None
        yield self.emit(STATUS_UPDATED, end_ms, draw=False)
        self.delayed = _DELAYED

    def open_period(self, number: int, ts: int) -> Action:
        self.period = number
        self.clock = "00:00"
        self.status = "Live"
        self.collection = "CollectingLive"
        rules = self.rules
        overtime = number > rules.regular_periods and not rules.by_periods
        label = rules.overtime_label if overtime else rules.period_label.format(number)
        self.periods = (
            *self.periods,
            Period(number, overtime, label, ts, None, self.home, self.away, 0, 0),
        )
        return self.emit(START_PERIOD, ts)

    def close_period(self, ts: int) -> Action:
        minutes = self.rules.clock_minutes if self.period <= self.rules.regular_periods else 5
        self.clock = _clock(minutes * 60)
        self.periods = (*self.periods[:-1], self.periods[-1]._replace(end_ms=ts))
        if self.clock_state is not None:
            self.clock_state = "stopped"
        return self.emit(END_PERIOD, ts)

    def start_clock(self, ts: int) -> Action:
        if self.clock_state is not None:
            self.clock_state = "running"
        return self.emit(START_CLOCK, ts)


def timeline(
    fixture: Fixture, squads: tuple[tuple[Player, ...], ...], target: int
) -> Iterator[Action]:
    """Every action of ``fixture`` in order (about ``target`` of them, at least what the
    result needs); none for a postponed fixture."""
    if fixture.postponed:
        return
    w = _Writer(fixture, squads)
    rules = fixture.season.rules
    result = fixture.periods()
    scoring = [[rules.split(h, w.r), rules.split(a, w.r)] for h, a in result]
    count = len(result)
    fixed = 8 + 3 * count
    fillers = max(0, target - fixed - sum(len(h) + len(a) for h, a in scoring))
    start_ms, end_ms = fixture.start * 1000, fixture.end * 1000
    play_end = end_ms - _POST_MATCH
    window = play_end - start_ms
    pause = int(window * _BREAK_SHARE / (count - 1)) if count > 1 else 0
    length = (window - pause * (count - 1)) // count

    yield from w.pre_match(start_ms)
    for p in range(count):
        p_start = start_ms + p * (length + pause)
        share = fillers // count + (1 if p < fillers % count else 0)
        yield w.open_period(p + 1, p_start)
        yield w.start_clock(p_start + 1000)
        yield from w.body(p_start + 1000, p_start + length, scoring[p], share)
        yield w.close_period(p_start + length)
        if p == 0 and count > 1 and fixture.flag("suspended"):
            gap_start = p_start + length
            yield from w.suspension(gap_start + pause // 3, gap_start + 2 * pause // 3)
    w.collection = "CollectionCompleted"
    yield w.emit(END_FIXTURE, play_end)
    w.status = "Completed"
    w.collection = "PostMatchChecked"
    yield w.emit(POST_MATCH, end_ms, finished=True)
