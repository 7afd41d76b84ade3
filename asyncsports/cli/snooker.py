"""Commands of the snooker proxy (``asyncsports snooker ...``), one per endpoint.

Command names are the method names of ``client.snooker`` and option names their keyword
names, ``_`` written ``-``.
"""

# No `from __future__ import annotations` here: typer reads the annotations at runtime.

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .app import Query, command, snooker_app
from .exits import OutputFileError
from .messages import say
from .options import Limit

if TYPE_CHECKING:  # imported when a command runs: --help imports none of them
    from asyncsports.client import Client
    from asyncsports.models import PlayerImage
    from asyncsports.paging import AsyncList
    from asyncsports.resources.snooker import SnookerResource as Snooker
else:

    class _Snooker:
        """``Snooker.matches(resource, ...)``: the resource's method, looked up when a
        command runs; mypy checks the names against the resource itself."""

        def __getattr__(self, name: str) -> Callable[..., Any]:
            return lambda resource, *args, **kw: getattr(resource, name)(*args, **kw)

    Snooker = _Snooker()


def write_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path``; OutputFileError naming the path if the system refuses."""
    try:
        path.write_bytes(data)
    except OSError as exc:
        raise OutputFileError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _id(value: str) -> int | str:
    """A snooker id: a number means the numeric path, anything else the external one."""
    return int(value) if value.isdigit() else value


TournamentId = Annotated[str, typer.Argument(help="Tournament id: a number, or an external UUID.")]
Sort = Annotated[
    list[str] | None,
    typer.Option(
        "--sort", metavar="FIELD[,DIR]", help="A wire field, then asc or desc; repeatable."
    ),
]
ForSeason = Annotated[bool, typer.Option("--for-season", help="The tournament's whole season.")]


def _listing(
    method: "Callable[..., AsyncList[Any]]", *args: Any, what: str, limit: int | None, **kw: Any
) -> Query:
    """A query of a snooker listing: ``method(client.snooker, *args, **kw)``."""
    return Query(lambda client: method(client.snooker, *args, **kw), what, limit)


@command(snooker_app, example="--emulator snooker tournaments --season-id 2025")
def tournaments(
    season_id: Annotated[int | None, typer.Option(help="Season id.")] = None,
    start: Annotated[str | None, typer.Option(help="From this date.")] = None,
    end: Annotated[str | None, typer.Option(help="To this date.")] = None,
    sort: Sort = None,
    limit: Limit = None,
) -> Query:
    """Tournaments, of a season or between two dates."""
    return _listing(
        Snooker.tournaments,
        season_id=season_id,
        start=start,
        end=end,
        sort=sort,
        what="tournaments",
        limit=limit,
    )


@command(snooker_app, example="--emulator snooker matches 1000 --round-number 1")
def matches(
    tournament: TournamentId,
    round_number: Annotated[int | None, typer.Option(help="Only this round.")] = None,
    sort: Sort = None,
    limit: Limit = None,
) -> Query:
    """Matches of a tournament."""
    return _listing(
        Snooker.matches,
        _id(tournament),
        round_number=round_number,
        sort=sort,
        what="matches",
        limit=limit,
    )


@command(snooker_app, example="--emulator snooker ast 1000")
def ast(
    tournament: TournamentId,
    for_season: ForSeason = False,
    sort: Sort = None,
    limit: Limit = None,
) -> Query:
    """Players' average shot times in a tournament."""
    return _listing(
        Snooker.ast,
        _id(tournament),
        for_season=for_season or None,
        sort=sort,
        what="players",
        limit=limit,
    )


@command(snooker_app, example="--emulator snooker tournament-players 1000")
def tournament_players(tournament: TournamentId, sort: Sort = None, limit: Limit = None) -> Query:
    """Players entered in a tournament."""
    return _listing(
        Snooker.tournament_players, _id(tournament), sort=sort, what="players", limit=limit
    )


@command(snooker_app, example="--emulator snooker tour-players --limit 10")
def tour_players(sort: Sort = None, limit: Limit = None) -> Query:
    """Players of the tour."""
    return _listing(Snooker.tour_players, sort=sort, what="players", limit=limit)


@command(snooker_app, example="--emulator snooker centuries 1000 --for-season")
def centuries(
    tournament: TournamentId,
    for_season: ForSeason = False,
    sort: Sort = None,
    limit: Limit = None,
) -> Query:
    """Century breaks of a tournament."""
    return _listing(
        Snooker.centuries,
        _id(tournament),
        for_season=for_season or None,
        sort=sort,
        what="centuries",
        limit=limit,
    )


@command(snooker_app, example="--emulator snooker current-tournament-winner 1000")
def current_tournament_winner(tournament: TournamentId) -> Query:
    """The current winner of a tournament."""
    return Query(lambda client: client.snooker.current_tournament_winner(_id(tournament)))


@command(snooker_app, example="--emulator snooker previous-tournament-winners 1000")
def previous_tournament_winners(
    tournament: TournamentId, sort: Sort = None, limit: Limit = None
) -> Query:
    """Earlier winners of a tournament."""
    return _listing(
        Snooker.previous_tournament_winners, _id(tournament), sort=sort, what="winners", limit=limit
    )


@command(snooker_app, example="--emulator snooker player-info 163 1000 --save player.png")
def player_info(
    player: Annotated[str, typer.Argument(help="Player id: a number, or an external UUID.")],
    tournament: TournamentId,
    save: Annotated[
        Path | None, typer.Option(help="Write the image to this file.", dir_okay=False)
    ] = None,
) -> Query:
    """A player's image (its name, type and size; --save writes it to a file)."""

    async def ask(client: "Client") -> "PlayerImage":
        image = await client.snooker.player_info(_id(player), _id(tournament))
        if save is not None:
            write_file(save, image.file_content)
            # The record shows the service's name for the image; say which file it went to.
            say(f"saved {save} ({len(image.file_content):,} bytes)")
        return image

    return Query(ask)
