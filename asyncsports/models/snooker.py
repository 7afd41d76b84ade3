"""Snooker proxy records (api-spec 2.6), and the ``{"data": ...}`` envelope of every response."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Generic, TypeVar

from msgspec import Struct, field

from asyncsports.models._types import ZERO_UUID, utc

__all__ = [
    "Break",
    "Data",
    "Match",
    "PlayerAst",
    "PlayerExternalId",
    "PlayerImage",
    "PlayerProfile",
    "PreviousWinner",
    "Tournament",
    "TournamentExternalId",
    "TournamentPlayer",
]

T = TypeVar("T")


class Data(Struct, Generic[T], gc=False, kw_only=True):
    """The envelope of every snooker response: ``{"data": ...}``.

    ``Data[list[Match] | Match]`` accepts an array or a single object.
    """

    data: T


class PlayerExternalId(Struct, gc=False, kw_only=True, rename="camel"):
    """A player's ids in the data service. An all-zero ``personId`` (unknown) becomes None."""

    person_id: uuid.UUID | None = None
    club_id: uuid.UUID | None = None
    team_id: uuid.UUID | None = None

    def __post_init__(self) -> None:
        if self.person_id == ZERO_UUID:
            self.person_id = None


class TournamentExternalId(Struct, gc=False, kw_only=True, rename="camel"):
    """A tournament's ids in the data service."""

    competition_id: uuid.UUID | None = None
    season_id: uuid.UUID | None = None
    stage_id: uuid.UUID | None = None


class Tournament(Struct, gc=False, kw_only=True, rename="camel"):
    """A tournament. ``start_date``/``end_date`` are aware UTC; ``season_name`` is ``YYYY/YYYY``."""

    tournament_id: int
    external_tournament_id: TournamentExternalId | None = None
    tournament_name: str | None = None
    _start_date: datetime | None = field(name="startDate", default=None)
    _end_date: datetime | None = field(name="endDate", default=None)
    season_id: int | None = None
    season_start_year: int | None = None
    season_end_year: int | None = None
    season_name: str | None = None

    start_date = utc("_start_date")
    end_date = utc("_end_date")


class Match(Struct, gc=False, kw_only=True, rename="camel"):
    """A match between two players, with breaks, points, frames and shots of each."""

    match_id: int
    match_external_id: uuid.UUID | None = None
    tournament_match_number: int | None = None
    player1_id: int | None = None
    player2_id: int | None = None
    player1_first_name: str | None = None
    player1_last_name: str | None = None
    player2_first_name: str | None = None
    player2_last_name: str | None = None
    round_number: int | None = None
    round_name: str | None = None
    is_walkover: bool | None = None
    player1_break: int | None = None
    player1_points: int | None = None
    player1_frames: int | None = None
    player2_break: int | None = None
    player2_points: int | None = None
    player2_frames: int | None = None
    player1_frame_breaks: str | None = None
    player2_frame_breaks: str | None = None
    player1_shots: int | None = None
    player2_shots: int | None = None
    best_out_of_frames: int | None = None


class PlayerAst(Struct, gc=False, kw_only=True, rename="camel"):
    """A player's average shot time (``player_ast``, seconds) in a tournament."""

    player_id: int
    player_external_id: PlayerExternalId | None = None
    player_first_name: str | None = None
    player_last_name: str | None = None
    player_ast: float | None = None
    tournament_id: int | None = None
    tournament_external_id: TournamentExternalId | None = None


class TournamentPlayer(Struct, gc=False, kw_only=True, rename="camel"):
    """A player entered in a tournament (or on the tour). ``date_of_birth`` is aware UTC."""

    player_id: int
    player_external_id: PlayerExternalId | None = None
    player_first_name: str | None = None
    player_second_name: str | None = None
    country: str | None = None
    _date_of_birth: datetime | None = field(name="dateOfBirth", default=None)

    date_of_birth = utc("_date_of_birth")


class Break(Struct, gc=False, kw_only=True, rename="camel"):
    """A (century) break. ``break_`` is the wire's ``break`` (points); ``date`` is aware UTC."""

    tournament_id: int | None = None
    tournament_external_id: TournamentExternalId | None = None
    break_: int | None = field(name="break", default=None)
    player_id: int | None = None
    player_external_id: PlayerExternalId | None = None
    player_first_name: str | None = None
    player_last_name: str | None = None
    opponent_id: int | None = None
    opponent_external_id: PlayerExternalId | None = None
    opponent_first_name: str | None = None
    opponent_last_name: str | None = None
    round_id: int | None = None
    round_name: str | None = None
    frame: int | None = None
    _date: datetime | None = field(name="date", default=None)

    date = utc("_date")


class PlayerProfile(Struct, gc=False, kw_only=True, rename="camel"):
    """A player's profile. ``nationality`` is a three-letter code; ``date_of_birth`` aware UTC."""

    player_id: int
    player_external_id: PlayerExternalId | None = None
    player_first_name: str | None = None
    player_last_name: str | None = None
    _date_of_birth: datetime | None = field(name="dateOfBirth", default=None)
    place_of_birth: str | None = None
    nationality: str | None = None
    lives: str | None = None
    twitter: str | None = None
    season_ranking: int | None = None
    season_ast: float | None = None
    matches_played: int | None = None
    matches_won: int | None = None
    matches_lost: int | None = None
    highest_break: int | None = None

    date_of_birth = utc("_date_of_birth")


class PreviousWinner(Struct, gc=False, kw_only=True, rename="camel"):
    """A past winner of a tournament, with the year."""

    player_id: int
    player_external_id: PlayerExternalId | None = None
    player_first_name: str | None = None
    player_last_name: str | None = None
    tournament_id: int | None = None
    year: int | None = None


class PlayerImage(Struct, gc=False, kw_only=True, rename="camel"):
    """A player's image: ``file_content`` is the decoded bytes (base64 on the wire)."""

    file_name: str | None = None
    file_content: bytes = b""
    file_type: str | None = None
