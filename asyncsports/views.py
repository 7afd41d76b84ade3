"""``client.with_json``: the client's methods, each record with its JSON as sent.

The view has the client's namespaces and methods, with the same arguments and the same
documentation; each record comes as a :class:`~asyncsports.raw.RawRecord` ``(value,
json)``: ``value`` the typed record the plain method gives, ``json`` its bytes exactly as
the service sent them, fields the models do not know included::

    async for action, json in client.with_json.actions.list("soccer", fixture_id):
        store(action.fixture_action.action_id, json)

    packet, json = await client.with_json.statistics.get("soccer", fixture_id)

A listing yields pairs (its resume tokens are the plain listing's), a get returns one
(``standings.get`` a list of them), ``actions.follow`` and ``events.watch`` yield changes
carrying them, and the live feeds (``with_json.live.actions``) hand them out with the
bytes of the message that carried each record. What the pairing costs: :mod:`asyncsports.raw`.

One wrapper, :func:`with_json`, makes each method of the view from the plain one, as
openai-python's ``with_raw_response`` does: a method is written (and documented) once.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Coroutine
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, overload

from asyncsports._iter.watch import Change
from asyncsports.live import Feed, LiveResource
from asyncsports.paging import AsyncList
from asyncsports.raw import RawRecord
from asyncsports.resources import (
    ActionsResource,
    EventsResource,
    FixturesResource,
    SnookerResource,
    SquadsResource,
    StandingsResource,
    StatisticsResource,
)

if TYPE_CHECKING:
    from asyncsports.resources.namespaces import Namespaces

__all__ = [
    "ActionsWithJSON",
    "ClientWithJSON",
    "EventsWithJSON",
    "FixturesWithJSON",
    "LiveWithJSON",
    "SnookerWithJSON",
    "SquadsWithJSON",
    "StandingsWithJSON",
    "StatisticsWithJSON",
    "with_json",
]

P = ParamSpec("P")
T = TypeVar("T")


# The overloads map what a method gives to its paired form, once for every method of the
# view: listings, gets, a get of a list (first: a list is also a T), changes, live feeds.
@overload
def with_json(method: Callable[P, AsyncList[T]]) -> Callable[P, AsyncList[RawRecord[T]]]: ...
@overload
def with_json(  # type: ignore[overload-overlap]
    method: Callable[P, Coroutine[Any, Any, list[T]]],
) -> Callable[P, Coroutine[Any, Any, list[RawRecord[T]]]]: ...
@overload
def with_json(
    method: Callable[P, Coroutine[Any, Any, T]],
) -> Callable[P, Coroutine[Any, Any, RawRecord[T]]]: ...
@overload
def with_json(
    method: Callable[P, AsyncGenerator[Change[T], None]],
) -> Callable[P, AsyncGenerator[Change[RawRecord[T]], None]]: ...
@overload
def with_json(method: Callable[P, Feed[T]]) -> Callable[P, Feed[RawRecord[T]]]: ...
def with_json(method: Callable[P, Any]) -> Callable[P, Any]:
    """``method`` (bound to a resource) giving each record with its JSON as sent.

    The same method, bound to a twin of its resource whose records come paired (the
    resources' ``_raw``): a call costs what the plain one does, and the plain resource is
    untouched.
    """
    twin = getattr(method, "__self__").paired()  # noqa: B009 - not every callable has it
    paired: Callable[P, Any] = getattr(twin, getattr(method, "__name__"))  # noqa: B009
    return paired


class FixturesWithJSON:
    """``client.with_json.fixtures``: :class:`~asyncsports.resources.FixturesResource` paired."""

    def __init__(self, fixtures: FixturesResource) -> None:
        self.list = with_json(fixtures.list)
        self.get = with_json(fixtures.get)


class SquadsWithJSON:
    """``client.with_json.squads``: :class:`~asyncsports.resources.SquadsResource` paired."""

    def __init__(self, squads: SquadsResource) -> None:
        self.list = with_json(squads.list)


class ActionsWithJSON:
    """``client.with_json.actions``: :class:`~asyncsports.resources.ActionsResource` paired."""

    def __init__(self, actions: ActionsResource) -> None:
        self.list = with_json(actions.list)
        self.follow = with_json(actions.follow)


class StandingsWithJSON:
    """``client.with_json.standings``: :class:`~asyncsports.resources.StandingsResource`
    paired (``get`` gives a list of pairs, one per packet)."""

    def __init__(self, standings: StandingsResource) -> None:
        self.get = with_json(standings.get)


class StatisticsWithJSON:
    """``client.with_json.statistics``: :class:`~asyncsports.resources.StatisticsResource`
    paired."""

    def __init__(self, statistics: StatisticsResource) -> None:
        self.get = with_json(statistics.get)


class SnookerWithJSON:
    """``client.with_json.snooker``: :class:`~asyncsports.resources.SnookerResource` paired
    (a record's JSON is that of the record in ``data``)."""

    def __init__(self, snooker: SnookerResource) -> None:
        self.tournaments = with_json(snooker.tournaments)
        self.matches = with_json(snooker.matches)
        self.ast = with_json(snooker.ast)
        self.centuries = with_json(snooker.centuries)
        self.tournament_players = with_json(snooker.tournament_players)
        self.tour_players = with_json(snooker.tour_players)
        self.current_tournament_winner = with_json(snooker.current_tournament_winner)
        self.previous_tournament_winners = with_json(snooker.previous_tournament_winners)
        self.player_info = with_json(snooker.player_info)


class EventsWithJSON:
    """``client.with_json.events``: :class:`~asyncsports.resources.EventsResource` paired."""

    def __init__(self, events: EventsResource) -> None:
        self.list = with_json(events.list)
        self.watch = with_json(events.watch)
        self.playback = with_json(events.playback)


class LiveWithJSON:
    """``client.with_json.live``: :class:`~asyncsports.live.LiveResource` paired (each
    record's JSON is the message that carried it; feeds merge as plain ones do)."""

    def __init__(self, live: LiveResource) -> None:
        self.actions = with_json(live.actions)
        self.statistics = with_json(live.statistics)


class ClientWithJSON:
    """``client.with_json``: every namespace of the client, each record with its JSON."""

    def __init__(self, client: Namespaces) -> None:
        self.fixtures = FixturesWithJSON(client.fixtures)
        self.squads = SquadsWithJSON(client.squads)
        self.actions = ActionsWithJSON(client.actions)
        self.standings = StandingsWithJSON(client.standings)
        self.statistics = StatisticsWithJSON(client.statistics)
        self.snooker = SnookerWithJSON(client.snooker)
        self.events = EventsWithJSON(client.events)
        self.live = LiveWithJSON(client.live)
