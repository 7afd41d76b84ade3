"""Commands of the live stream events service: the events listing and playback addresses."""

# No `from __future__ import annotations` here: typer reads the annotations at runtime.

from enum import StrEnum
from typing import Annotated

import typer

from .app import Query, command
from .options import Interval, Limit


class Restriction(StrEnum):
    """Restriction list kinds of the events listing."""

    whitelist = "whitelist"
    blacklist = "blacklist"


@command(example="--emulator events --live")
def events(
    live: Annotated[bool, typer.Option("--live", help="Only events live now.")] = False,
    vendor_data_id: Annotated[
        bool, typer.Option("--vendor-data-id", help="Add each event's data service id.")
    ] = False,
    restrictions: Annotated[
        Restriction | None, typer.Option(help="Add country lists per event.")
    ] = None,
    sub_restrictions: Annotated[
        Restriction | None, typer.Option(help="Add country and US state lists per event.")
    ] = None,
    page_size: Annotated[int | None, typer.Option(min=1, max=500, help="Page size.")] = None,
    watch: Annotated[
        bool,
        typer.Option("--watch", "-w", help="Keep polling; print events going live and ending."),
    ] = False,
    interval: Interval = 30.0,
    limit: Limit = None,
) -> Query:
    """List live stream events (booked and live ones); with --watch, follow the live ones."""
    if watch:
        return Query(
            lambda client: client.events.watch(interval=interval),
            limit=limit,
            streaming=True,
            watch=True,
            until_stopped=True,
        )
    return Query(
        lambda client: client.events.list(
            live=live or None,
            vendor_data_id=vendor_data_id or None,
            restrictions=restrictions.value if restrictions else None,
            sub_restrictions=sub_restrictions.value if sub_restrictions else None,
            page_size=page_size,
        ),
        "events",
        limit,
        streaming=True,
    )


@command(example="--emulator playback EVENT_ID")
def playback(event_id: Annotated[int, typer.Argument(help="Event id.")]) -> Query:
    """The playback (HLS) address of a live event."""
    return Query(lambda client: client.events.playback(event_id), streaming=True)
