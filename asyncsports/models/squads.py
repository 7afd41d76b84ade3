"""Squads (api-spec 2.2): the players registered to a team in a season."""

from __future__ import annotations

import uuid

from msgspec import Struct

from asyncsports.models._types import Location, Ref

__all__ = ["Squad", "SquadPlayer"]


class SquadPlayer(Struct, gc=False, kw_only=True, rename="camel"):
    """A registered player.

    ``last_name`` may be absent (``first_name`` then holds the whole name); ``shirt_number`` is
    text (``"_10"`` occurs); ``location`` is the nationality and may hold empty objects.
    """

    id: uuid.UUID
    full_name: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    shirt_number: str | None = None
    location: Location | None = None
    verified: bool | None = None


class Squad(Struct, gc=False, kw_only=True):
    """A squad record: a team's players in a season."""

    id: uuid.UUID
    season: Ref | None = None
    team: Ref | None = None
    players: list[SquadPlayer] = []
