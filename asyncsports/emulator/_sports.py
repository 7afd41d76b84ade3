"""What differs between sports: periods, durations, scoring, action vocabulary, points.

The action types named in api-spec 2.3 are shared by every sport; each sport adds its
scoring and in-play actions, and (all but snooker) a review action that the timeline links
to the score it reviews (``relatedFixtureActionIds``). Results are drawn first
(:meth:`SportRules.period_scores`) and the timeline is written to reach them, so that
standings never need a timeline.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "DEVICE_LOCATION",
    "END_FIXTURE",
    "END_PERIOD",
    "LINEUPS",
    "MATCH_CONDITIONS",
    "POST_MATCH",
    "SPORTS",
    "START_CLOCK",
    "START_FIXTURE",
    "START_PERIOD",
    "STATUS_UPDATED",
    "TEAM_COLOURS",
    "ActionType",
    "SportRules",
]


@dataclass(frozen=True, slots=True)
class ActionType:
    """An action type: wire id and name, points when it scores, sub-types it may carry."""

    id: int
    name: str
    points: int = 0
    subtypes: tuple[str, ...] = ()
    weight: float = 1.0


MATCH_CONDITIONS = ActionType(1, "Match Conditions")
TEAM_COLOURS = ActionType(2, "Team Colours")
LINEUPS = ActionType(3, "Lineups")
START_FIXTURE = ActionType(4, "Start Fixture")
END_FIXTURE = ActionType(5, "End Fixture")
START_PERIOD = ActionType(6, "Start Period")
END_PERIOD = ActionType(7, "End Period")
START_CLOCK = ActionType(8, "Start Clock")
DEVICE_LOCATION = ActionType(19, "Device Location")
POST_MATCH = ActionType(21, "Post Match Check Complete")
STATUS_UPDATED = ActionType(22, "Status Updated")

Score = tuple[int, int]
Scoring = list[tuple[ActionType, int]]


@dataclass(frozen=True, slots=True)
class SportRules:
    """One sport of the data service."""

    name: str
    code: int
    period_label: str
    overtime_label: str
    clock_minutes: int
    duration: int
    split_season: bool
    by_periods: bool
    points: tuple[int, int, int]
    squad_size: int
    lineup_size: int
    individual: bool
    competition_names: tuple[str, ...]
    scoring: tuple[ActionType, ...]
    fillers: tuple[ActionType, ...]
    periods_fn: Callable[[random.Random], list[Score]]
    regular_periods: int
    review: ActionType | None = None
    """The action that reviews a score (video check, challenge...), linked to it."""

    def period_scores(self, r: random.Random) -> list[Score]:
        """Home and away points of each period, overtime included."""
        return self.periods_fn(r)

    def winner(self, periods: list[Score]) -> int:
        """0 when home wins, 1 when away wins, -1 for a draw."""
        if self.by_periods:
            home = sum(h > a for h, a in periods)
            away = sum(a > h for h, a in periods)
        else:
            home = sum(h for h, _ in periods)
            away = sum(a for _, a in periods)
        return 0 if home > away else 1 if away > home else -1

    def split(self, points: int, r: random.Random) -> Scoring:
        """Scoring actions (type and points) that add up to ``points``."""
        out: Scoring = []
        rest = points
        while rest > 0:
            kind, value = self._one(rest, r)
            out.append((kind, value))
            rest -= value
        return out

    def _one(self, rest: int, r: random.Random) -> tuple[ActionType, int]:
        if self.name == "snooker":
            value = rest if rest <= 20 or r.random() < 0.4 else r.randint(8, min(rest, 147))
            return self.scoring[0], value
        feasible = [a for a in self.scoring if a.points <= rest]
        action = r.choices(feasible, [a.weight for a in feasible])[0]
        return action, action.points


def _overtime(periods: list[Score], r: random.Random, low: int, high: int) -> list[Score]:
    if sum(h for h, _ in periods) == sum(a for _, a in periods):
        home, away = r.randint(low, high), r.randint(low, high)
        if home == away:
            home += 1
        periods.append((home, away))
    return periods


def _basketball(r: random.Random) -> list[Score]:
    periods = [(r.randint(14, 31), r.randint(14, 31)) for _ in range(4)]
    return _overtime(periods, r, 4, 14)


def _american_football(r: random.Random) -> list[Score]:
    quarter = (0, 0, 3, 6, 7, 7, 10, 13, 14)
    periods = [(r.choice(quarter), r.choice(quarter)) for _ in range(4)]
    return _overtime(periods, r, 0, 6)


def _ice_hockey(r: random.Random) -> list[Score]:
    goals = (0, 0, 0, 1, 1, 2, 3)
    periods = [(r.choice(goals), r.choice(goals)) for _ in range(3)]
    return _overtime(periods, r, 0, 1)


def _soccer(r: random.Random) -> list[Score]:
    goals = (0, 0, 0, 1, 1, 2)
    return [(r.choice(goals), r.choice(goals)) for _ in range(2)]


def _cricket(r: random.Random) -> list[Score]:
    return [(r.randint(110, 220), 0), (0, r.randint(100, 230))]


def _sets(r: random.Random, to_win: int, points: int, decider: int) -> list[Score]:
    won = [0, 0]
    out: list[Score] = []
    while max(won) < to_win:
        target = decider if won == [to_win - 1, to_win - 1] else points
        side = r.randint(0, 1)
        lose = r.randint(target // 2, target + 2)
        win = target if lose <= target - 2 else lose + 2
        out.append((win, lose) if side == 0 else (lose, win))
        won[side] += 1
    return out


def _volleyball(r: random.Random) -> list[Score]:
    return _sets(r, 3, 25, 15)


def _snooker(r: random.Random) -> list[Score]:
    won = [0, 0]
    out: list[Score] = []
    while max(won) < 5:
        side = r.randint(0, 1)
        win, lose = r.randint(60, 130), r.randint(0, 55)
        out.append((win, lose) if side == 0 else (lose, win))
        won[side] += 1
    return out


def _sport(
    name: str,
    code: int,
    *,
    label: str,
    clock: int,
    duration: int,
    fn: Callable[[random.Random], list[Score]],
    regular: int,
    scoring: tuple[ActionType, ...],
    fillers: tuple[str, ...],
    filler_base: int,
    competitions: tuple[str, ...],
    squad: tuple[int, int],
    overtime: str = "OT",
    split_season: bool = True,
    by_periods: bool = False,
    points: tuple[int, int, int] = (2, 1, 1),
    individual: bool = False,
    review: ActionType | None = None,
) -> SportRules:
    filler_types = tuple(ActionType(filler_base + k, n) for k, n in enumerate(fillers))
    return SportRules(
        name=name,
        code=code,
        period_label=label,
        overtime_label=overtime,
        clock_minutes=clock,
        duration=duration,
        split_season=split_season,
        by_periods=by_periods,
        points=points,
        squad_size=squad[0],
        lineup_size=squad[1],
        individual=individual,
        competition_names=competitions,
        scoring=scoring,
        fillers=filler_types,
        periods_fn=fn,
        regular_periods=regular,
        review=review,
    )


_A = ActionType

SPORTS: dict[str, SportRules] = {
    s.name: s
    for s in (
        _sport(
            "basketball",
            0,
            label="Q{}",
            clock=10,
            duration=7800,
            fn=_basketball,
            regular=4,
            scoring=(
                _A(233, "3PT Shot", 3, ("Jump Shot", "Step Back")),
                _A(231, "2PT Shot", 2, ("Jump Shot", "Layup", "Dunk"), 2.0),
                _A(232, "Free Throw", 1),
            ),
            fillers=("Rebound", "Foul", "Turnover", "Timeout", "Substitution", "Steal"),
            filler_base=240,
            review=_A(250, "Instant Replay"),
            competitions=(
                "Premier Basketball League",
                "Continental Basketball Cup",
                "National Basketball Championship",
                "Atlantic Basketball Conference",
            ),
            squad=(12, 5),
            points=(2, 1, 1),
        ),
        _sport(
            "ice-hockey",
            1,
            label="P{}",
            clock=20,
            duration=9000,
            fn=_ice_hockey,
            regular=3,
            scoring=(_A(501, "Goal", 1, ("Wrist Shot", "Slap Shot", "Deflection")),),
            fillers=("Shot", "Save", "Faceoff", "Penalty", "Hit"),
            filler_base=510,
            review=_A(520, "Video Review"),
            competitions=(
                "Elite Ice Hockey League",
                "Northern Hockey Cup",
                "Continental Hockey Series",
                "Metropolitan Hockey League",
            ),
            squad=(20, 6),
            points=(2, 1, 0),
        ),
        _sport(
            "volleyball",
            2,
            label="Set {}",
            clock=0,
            duration=6300,
            fn=_volleyball,
            regular=3,
            scoring=(_A(701, "Point", 1, ("Attack", "Block", "Ace", "Opponent Error")),),
            fillers=("Serve", "Timeout", "Substitution", "Challenge"),
            filler_base=710,
            review=_A(720, "Video Challenge"),
            competitions=(
                "Volleyball Nations Series",
                "SuperLiga Volley",
                "Champions Volley Cup",
                "National Volleyball League",
            ),
            squad=(12, 6),
            by_periods=True,
            points=(3, 0, 0),
        ),
        _sport(
            "cricket",
            3,
            label="Innings {}",
            clock=0,
            duration=12600,
            fn=_cricket,
            regular=2,
            scoring=(
                _A(803, "Six", 6, (), 0.3),
                _A(802, "Four", 4),
                _A(804, "Two Runs", 2),
                _A(801, "Single", 1, (), 4.0),
            ),
            fillers=("Dot Ball", "Wicket", "Appeal", "Over Complete"),
            filler_base=810,
            review=_A(820, "Umpire Review"),
            competitions=("T20 Blast", "Premier T20 League", "County T20 Cup", "Island T20 Series"),
            squad=(15, 11),
            split_season=False,
            points=(2, 1, 0),
        ),
        _sport(
            "american-football",
            4,
            label="Q{}",
            clock=15,
            duration=11700,
            fn=_american_football,
            regular=4,
            scoring=(
                _A(401, "Touchdown", 6, ("Pass", "Rush", "Return"), 3.0),
                _A(402, "Field Goal", 3, (), 2.0),
                _A(403, "Safety", 2, (), 0.2),
                _A(404, "Extra Point", 1, (), 0.5),
            ),
            fillers=("Pass", "Rush", "Punt", "Penalty", "Sack", "Kickoff"),
            filler_base=410,
            review=_A(420, "Replay Review"),
            competitions=(
                "Atlantic Football League",
                "Collegiate Bowl Series",
                "Pacific Football Conference",
                "National Gridiron League",
            ),
            squad=(30, 11),
            split_season=False,
            points=(2, 1, 0),
        ),
        _sport(
            "soccer",
            5,
            label="Half {}",
            clock=45,
            duration=6900,
            fn=_soccer,
            regular=2,
            scoring=(_A(601, "Goal", 1, ("Right Foot", "Left Foot", "Header")),),
            fillers=("Shot", "Foul", "Corner", "Offside", "Yellow Card", "Substitution"),
            filler_base=610,
            review=_A(620, "Video Check"),
            competitions=(
                "Premier Division",
                "Championship Division",
                "National Cup",
                "Super League",
            ),
            squad=(22, 11),
            points=(3, 1, 0),
        ),
        _sport(
            "snooker",
            6,
            label="Frame {}",
            clock=0,
            duration=10800,
            fn=_snooker,
            regular=5,
            scoring=(_A(901, "Break", 0),),
            fillers=("Safety", "Foul", "Miss", "Re-spotted Black"),
            filler_base=910,
            competitions=(
                "Championship League Snooker",
                "Snooker Shoot Out",
                "Snooker Classic",
                "Masters Invitational",
            ),
            squad=(1, 1),
            by_periods=True,
            points=(2, 0, 0),
            individual=True,
        ),
    )
}
"""The sports of the data service by wire name."""
