"""The client's namespaces, declared once: :class:`~asyncsports.Client` is a
:class:`Namespaces`, and what works on a client's namespaces (``client.with_json``,
:func:`asyncsports.telemetry.instrument`) takes one, below the client."""

from __future__ import annotations

from typing import TYPE_CHECKING

from asyncsports.resources.actions import ActionsResource
from asyncsports.resources.events import EventsResource
from asyncsports.resources.fixtures import FixturesResource
from asyncsports.resources.live import LiveResource
from asyncsports.resources.snooker import SnookerResource
from asyncsports.resources.squads import SquadsResource
from asyncsports.resources.standings import StandingsResource
from asyncsports.resources.statistics import StatisticsResource

if TYPE_CHECKING:
    from asyncsports._http.session import Session

__all__ = ["Namespaces"]


class Namespaces:
    """Every namespace of the service, each a resource over one session."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self.fixtures: FixturesResource = FixturesResource(session)
        """Competition fixtures."""
        self.squads: SquadsResource = SquadsResource(session)
        """Squads per season or team."""
        self.actions: ActionsResource = ActionsResource(session)
        """Fixture action timelines."""
        self.standings: StandingsResource = StandingsResource(session)
        """Team standings."""
        self.statistics: StatisticsResource = StatisticsResource(session)
        """Fixture statistics packets."""
        self.snooker: SnookerResource = SnookerResource(session, session.settings.snooker_feed)
        """The snooker proxy."""
        self.events: EventsResource = EventsResource(session)
        """Live stream events."""
        self.live: LiveResource = LiveResource(session)
        """The live feeds (websockets of the streams host, ``live_url``)."""

    @property
    def session(self) -> Session:
        """The session every namespace sends through (what
        :func:`~asyncsports.telemetry.instrument` observes)."""
        return self._session
