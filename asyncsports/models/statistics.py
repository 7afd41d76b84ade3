"""Statistics packets (api-spec 2.5): a fixture's aggregated statistics, sent at its end."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

import msgspec
from msgspec import Struct, field

from asyncsports.models._types import Duration, Ref, TeamRef, dec_hook, register_hooks, utc

__all__ = [
    "ActionAggregate",
    "AdvancedSportStatistics",
    "AverageShotTimeStatistics",
    "BallCounts",
    "BreaksStatistics",
    "CueBreak",
    "PeriodAggregates",
    "PlayerAggregate",
    "PlayerShotTimes",
    "RemainingBallsStatistics",
    "ShotTime",
    "Statistics",
    "SubActionAggregate",
    "TeamAggregate",
]


class SubActionAggregate(Struct, gc=False, kw_only=True, rename="camel"):
    """The count of one sub-action."""

    sub_action: str | None = None
    sub_action_id: int | None = None
    sub_action_aggregate: int | None = None


class ActionAggregate(Struct, gc=False, kw_only=True, rename="camel"):
    """The count of one action, with its sub-actions."""

    action: str | None = None
    action_id: int | None = None
    action_aggregate: int | None = None
    sub_action_aggregates: list[SubActionAggregate] = []


class PeriodAggregates(Struct, gc=False, kw_only=True):
    """The action aggregates of one period; ``label`` (``"1st half"``) and ``type``
    (``"Regular"``, ``"Overtime"``...) are the service's text, as in the summary's periods."""

    period: int | None = None
    label: str | None = None
    type: str | None = None
    aggregates: list[ActionAggregate] = []


class PlayerAggregate(Struct, gc=False, kw_only=True, rename="camel"):
    """One player's aggregates: ``player`` ``{id, name}``, the whole game and per period."""

    player: Ref | None = None
    game_action_aggregates: list[ActionAggregate] = []
    period_action_aggregates: list[PeriodAggregates] = []


class TeamAggregate(Struct, gc=False, kw_only=True, rename="camel"):
    """One team's aggregates: the whole game, per period, and per player.

    ``team.home_team`` is a bool (the service sends it as text, ``"true"``).
    """

    team: TeamRef | None = None
    game_action_aggregates: list[ActionAggregate] = []
    period_action_aggregates: list[PeriodAggregates] = []
    player_action_aggregates: list[PlayerAggregate] = []


# --------------------------------------------------------------------------- cue sports


class BallCounts(Struct, gc=False, kw_only=True, rename="camel"):
    """Counts of the seven ball colours (potted in a break, or remaining on the table)."""

    red_balls: int | None = None
    yellow_balls: int | None = None
    green_balls: int | None = None
    brown_balls: int | None = None
    blue_balls: int | None = None
    pink_balls: int | None = None
    black_balls: int | None = None


class CueBreak(Struct, gc=False, kw_only=True, rename="camel"):
    """One break. ``start_timestamp``/``end_timestamp`` are aware UTC; ``player_id`` is text."""

    score: int | None = None
    break_seq: int | None = None
    player_id: str | None = None
    player_name: str | None = None
    potted_balls: BallCounts | None = None
    _start_timestamp: datetime | None = field(name="startTimestamp", default=None)
    _end_timestamp: datetime | None = field(name="endTimestamp", default=None)
    period_number: int | None = None

    start_timestamp = utc("_start_timestamp")
    end_timestamp = utc("_end_timestamp")


class BreaksStatistics(Struct, gc=False, kw_only=True):
    """The breaks of a cue-sport fixture."""

    breaks: list[CueBreak] = []


class RemainingBallsStatistics(Struct, gc=False, kw_only=True, rename="camel"):
    """What is left on the table."""

    possible_points: int | None = None
    remaining_balls: BallCounts | None = None
    next_expected_ball: str | None = None


class ShotTime(Struct, gc=False, kw_only=True, rename="camel"):
    """One shot: start and end (aware UTC) and its duration."""

    _shot_start: datetime | None = field(name="shotStart", default=None)
    _shot_end: datetime | None = field(name="shotEnd", default=None)
    duration: Duration | None = None

    shot_start = utc("_shot_start")
    shot_end = utc("_shot_end")


class PlayerShotTimes(Struct, gc=False, kw_only=True, rename="camel"):
    """One player's shots."""

    player_id: str | None = None
    shot_times: list[ShotTime] = []


class AverageShotTimeStatistics(Struct, gc=False, kw_only=True, rename="camel"):
    """Shot times, keyed by player id (text, as on the wire)."""

    average_shot_times: dict[str, Duration] = {}
    players_shot_times: dict[str, PlayerShotTimes] = {}


class _CueStatistics(Struct, gc=False, kw_only=True, rename="camel"):
    starting_striker: str | int | None = None
    breaks_statistics: BreaksStatistics | None = None
    remaining_balls_statistics: RemainingBallsStatistics | None = None
    average_shot_time_statistics: AverageShotTimeStatistics | None = None


class AdvancedSportStatistics:
    """The sport-specific part of a statistics packet.

    ``raw`` is the whole object as decoded JSON (every key, known or not). The cue-sport parts
    of api-spec 2.5 are also typed: ``starting_striker``, ``breaks_statistics``,
    ``remaining_balls_statistics``, ``average_shot_time_statistics``; for other sports they are
    None. A cue-sport part that is present but malformed fails the decode.
    """

    __slots__ = (
        "average_shot_time_statistics",
        "breaks_statistics",
        "raw",
        "remaining_balls_statistics",
        "starting_striker",
    )

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw
        cue = msgspec.convert(raw, _CueStatistics, dec_hook=dec_hook)
        self.starting_striker: str | int | None = cue.starting_striker
        self.breaks_statistics: BreaksStatistics | None = cue.breaks_statistics
        self.remaining_balls_statistics: RemainingBallsStatistics | None = (
            cue.remaining_balls_statistics
        )
        self.average_shot_time_statistics: AverageShotTimeStatistics | None = (
            cue.average_shot_time_statistics
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AdvancedSportStatistics):
            return NotImplemented
        return self.raw == other.raw

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"AdvancedSportStatistics(raw={self.raw!r})"


def _decode_advanced(obj: Any) -> AdvancedSportStatistics:
    if not isinstance(obj, dict):
        raise ValueError(f"Expected `object`, got `{type(obj).__name__}`")
    try:
        return AdvancedSportStatistics(obj)
    except msgspec.ValidationError as exc:  # keep the inner path; msgspec appends the outer one
        raise ValueError(str(exc)) from exc


register_hooks(AdvancedSportStatistics, _decode_advanced, lambda a: a.raw)


class Statistics(Struct, gc=False, kw_only=True, rename="camel"):
    """A statistics packet. ``timestamp`` is aware UTC, rounded to the microsecond (the wire
    writes seven or nine fraction digits)."""

    fixture_id: uuid.UUID
    seq_num: int | None = None
    trace_id: str | None = None
    version: int | None = None
    finished: bool | None = None
    _timestamp: datetime | None = field(name="timestamp", default=None)
    team_action_aggregates: list[TeamAggregate] = []
    advanced_sport_statistics: AdvancedSportStatistics | None = None

    timestamp = utc("_timestamp")
