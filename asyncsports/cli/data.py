"""Commands of the data service: fixtures, squads, actions, standings, statistics.

Option names are the keyword names of the client's methods, ``_`` written ``-``.
"""

# No `from __future__ import annotations` here: typer reads the annotations at runtime.

import contextlib
import datetime as dt
from typing import TYPE_CHECKING, Annotated, Any

import typer

from asyncsports.errors import AsyncSportsError, NotFoundError

from .app import Query, command
from .ids import FixtureId, FixtureRef
from .names import check
from .options import (
    Globals,
    Interval,
    Limit,
    Replay,
    Speed,
    Sport,
    Via,
    date_option,
    day,
)

if TYPE_CHECKING:  # imported where used: --help imports none of them
    from asyncsports.client import Client
    from asyncsports.models import Statistics


def _follow(what: str) -> Any:
    """``--follow``/``-f``: keep following; ``what`` says what is printed."""
    return typer.Option("--follow", "-f", help=f"Keep following; {what}")


def _one_of(**given: str | None) -> None:
    if sum(value is not None for value in given.values()) != 1:
        names = " and ".join(f"--{name.replace('_', '-')}" for name in given)
        raise typer.BadParameter(f"give exactly one of {names}")


def _check_filters(
    status: str | None, type: str | None, coverage_level: str | None, sort: list[str] | None
) -> None:
    """A slip of a known status, type, coverage level or sort field: a usage error."""
    from asyncsports.resources.fixtures import COVERAGE_LEVELS, SORT_FIELDS, STATUSES, TYPES

    for option, what, value, known in [
        ("'--status'", "status", status, STATUSES),
        ("'--type'", "type", type, TYPES),
        ("'--coverage-level'", "coverage level", coverage_level, COVERAGE_LEVELS),
    ]:
        if value is not None:
            check(option, what, value, known)
    for item in sort or ():
        check("'--sort'", "sort field", item.partition(",")[0], SORT_FIELDS, str)


@command(example="--emulator fixtures basketball --status live")
def fixtures(
    sport: Sport,
    season_id: Annotated[str | None, typer.Option(help="Only this season (id).")] = None,
    live: Annotated[bool, typer.Option("--live", help="Only fixtures live now.")] = False,
    status: Annotated[
        str | None,
        typer.Option(help="scheduled, live, completed, postponed, or any the service knows."),
    ] = None,
    date_from: Annotated[dt.datetime | None, date_option("Starting on or after.")] = None,
    date_to: Annotated[dt.datetime | None, date_option("Starting on or before.")] = None,
    type: Annotated[
        str | None, typer.Option(help="official, simulation, training, or any other.")
    ] = None,
    coverage_level: Annotated[
        str | None, typer.Option(help="noCoverage, inVenue, lowLatencyStream, ...")
    ] = None,
    sort: Annotated[
        list[str] | None,
        typer.Option(
            metavar="FIELD[,DIR]", help="name or startTime, then asc or desc; repeatable."
        ),
    ] = None,
    include_deleted: Annotated[
        bool | None,
        typer.Option(
            "--include-deleted/--exclude-deleted",
            show_default=False,
            help="Deleted fixtures too, or not. Default: as the service does (not).",
        ),
    ] = None,
    page_size: Annotated[
        int | None,
        typer.Option(min=1, max=1000, show_default=False, help="Records a page. Default: 20."),
    ] = None,
    limit: Limit = None,
) -> Query:
    """List fixtures of a sport (or of one of its seasons)."""
    _check_filters(status, type, coverage_level, sort)
    return Query(
        lambda client: client.fixtures.list(
            sport,
            season_id=season_id,
            live=live or None,
            status=status,
            date_from=day(date_from),
            date_to=day(date_to),
            type=type,
            coverage_level=coverage_level,
            sort=sort or None,
            page_size=page_size,
            include_deleted=include_deleted,
        ),
        "fixtures",
        limit,
    )


@command(example="--emulator fixture soccer FIXTURE_ID")
def fixture(sport: Sport, fixture_id: FixtureId) -> Query:
    """Show one fixture."""
    ref = FixtureRef(sport, fixture_id)
    return Query(lambda client: client.fixtures.get(sport, ref.id), resolve=ref.resolve)


@command(example="--emulator squads soccer --season-id SEASON_ID")
def squads(
    sport: Sport,
    season_id: Annotated[str | None, typer.Option(help="Squads of this season (id).")] = None,
    team_id: Annotated[str | None, typer.Option(help="Squads of this team (id).")] = None,
    limit: Limit = None,
) -> Query:
    """List the squads of a season or of a team (give one of --season-id, --team-id)."""
    _one_of(season_id=season_id, team_id=team_id)
    return Query(
        lambda client: client.squads.list(sport, season_id=season_id, team_id=team_id),
        "squads",
        limit,
    )


@command(example="--emulator actions basketball FIXTURE_ID --follow")
def actions(
    cfg: Globals,
    sport: Sport,
    fixture_id: FixtureId,
    follow: Annotated[bool, _follow("print new and updated actions.")] = False,
    via: Via = None,
    interval: Interval = 5.0,
    replay: Replay = Speed.fast,
    limit: Limit = None,
) -> Query:
    """List the actions of a fixture; with --follow, until it finishes (see --via)."""
    ref = FixtureRef(sport, fixture_id)
    if follow:
        from . import follow as following

        how = following.How(via, interval, replay)
        return Query(
            lambda client: following.actions(cfg, how, client, sport, ref.id),
            limit=limit,
            watch=True,
            resolve=ref.resolve,
        )
    return Query(
        lambda client: client.actions.list(sport, ref.id), "actions", limit, resolve=ref.resolve
    )


@command(example="--emulator standings soccer --season-id SEASON_ID")
def standings(
    sport: Sport,
    season_id: Annotated[str | None, typer.Option(help="Standings of this season (id).")] = None,
    stage_id: Annotated[str | None, typer.Option(help="Standings of this stage (id).")] = None,
) -> Query:
    """Show the standings of a season or of a stage (give one of --season-id, --stage-id)."""
    _one_of(season_id=season_id, stage_id=stage_id)
    return Query(lambda client: client.standings.get(sport, season_id=season_id, stage_id=stage_id))


@command(example="--emulator statistics ice-hockey FIXTURE_ID")
def statistics(
    cfg: Globals,
    sport: Sport,
    fixture_id: FixtureId,
    follow: Annotated[bool, _follow("print each packet as it changes.")] = False,
    via: Via = None,
    interval: Interval = 5.0,
    replay: Replay = Speed.fast,
) -> Query:
    """Show the statistics packet of a fixture (there is one once it has ended); with
    --follow, each packet as the fixture is played, until it finishes (see --via)."""
    ref = FixtureRef(sport, fixture_id)
    if follow:
        from . import follow as following

        how = following.How(via, interval, replay)
        return Query(
            lambda client: following.statistics(cfg, how, client, sport, ref.id),
            watch=True,
            resolve=ref.resolve,
        )
    return Query(lambda client: _statistics(client, sport, ref.id), resolve=ref.resolve)


async def _statistics(client: "Client", sport: str, fixture_id: str) -> "Statistics":
    from asyncsports.models import FixtureStatus

    try:
        return await client.statistics.get(sport, fixture_id)
    except NotFoundError as exc:
        # A fixture's packet comes once it has ended: for one that has not, the 404 means
        # "none yet", which one more request can tell from a wrong sport or id.
        with contextlib.suppress(AsyncSportsError):
            fixture = await client.fixtures.get(sport, fixture_id)
            if fixture.status != FixtureStatus.COMPLETED:
                status = fixture.status or "no status"
                exc.add_note(f"the fixture has not ended ({status}): no statistics until it has")
        raise
