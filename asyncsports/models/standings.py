"""Standings packets (api-spec 2.4)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from msgspec import Struct, field

from asyncsports.models._types import Ref, utc

__all__ = ["Standings", "TeamStatistics"]


class TeamStatistics(Struct, gc=False, kw_only=True, rename="camel"):
    """One team's line in the standings.

    ``overtime_games_win_lose`` is an int or None (the wire may send ``""``);
    ``advanced_team_statistics`` is None when the wire sends null or the text ``"null"``.
    Both are properties over the wire value.
    """

    team_id: uuid.UUID
    name: str | None = None
    rank: int | None = None
    points: int | None = None
    games_played: int | None = None
    games_win_percentage: float | None = None
    total_wins: int | None = None
    home_wins: int | None = None
    away_wins: int | None = None
    total_losses: int | None = None
    home_losses: int | None = None
    away_losses: int | None = None
    losses_by_walkover: int | None = None
    total_draws: int | None = None
    home_draws: int | None = None
    away_draws: int | None = None
    last10_games_win_lose: str | None = None
    _overtime_games_win_lose: int | str | None = field(name="overtimeGamesWinLose", default=None)
    current_streak: int | None = None
    longest_winning_streak: int | None = None
    home_streak: int | None = None
    away_streak: int | None = None
    score: int | None = None
    home_score: int | None = None
    away_score: int | None = None
    opponents_score: int | None = None
    home_opponents_score: int | None = None
    away_opponents_score: int | None = None
    average_score: float | None = None
    average_home_score: float | None = None
    average_away_score: float | None = None
    average_opponents_score: float | None = None
    average_home_opponents_score: float | None = None
    average_away_opponents_score: float | None = None
    _advanced_team_statistics: str | dict[str, Any] | None = field(
        name="advancedTeamStatistics", default=None
    )

    @property
    def overtime_games_win_lose(self) -> int | None:
        """Overtime games as an int; None for ``""``, null, absent or other non-numeric text."""
        v = self._overtime_games_win_lose
        if v is None or isinstance(v, int):
            return v
        try:
            return int(v)
        except ValueError:
            return None

    @property
    def advanced_team_statistics(self) -> str | dict[str, Any] | None:
        """The advanced statistics as sent; None for null and for the text ``"null"``."""
        v = self._advanced_team_statistics
        return None if v == "null" else v


class Standings(Struct, gc=False, kw_only=True, rename="camel", omit_defaults=True):
    """A standings packet. ``timestamp`` is aware UTC.

    The team list arrives as ``teamsStatistics`` (soccer) or ``teamStatistics`` (basketball);
    both land in ``teams_statistics``.
    """

    teams_statistics: list[TeamStatistics] = []
    _team_statistics: list[TeamStatistics] | None = field(name="teamStatistics", default=None)
    _timestamp: datetime | None = field(name="timestamp", default=None)
    stage: Ref | None = None
    group: Ref | None = None

    timestamp = utc("_timestamp")

    def __post_init__(self) -> None:
        if self._team_statistics is not None:
            if not self.teams_statistics:
                self.teams_statistics = self._team_statistics
            self._team_statistics = None
