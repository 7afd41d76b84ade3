"""Resource namespaces: each builds requests and picks decoders; the session does the I/O.

Every class here is named ``<Namespace>Resource`` (``client.fixtures`` is a
:class:`FixturesResource`), so that none shares a name with a model
(``asyncsports.models.Standings`` is a standings packet).
"""

from asyncsports.resources.actions import ActionsResource
from asyncsports.resources.events import EventsResource
from asyncsports.resources.fixtures import FixturesResource
from asyncsports.resources.snooker import SnookerResource
from asyncsports.resources.squads import SquadsResource
from asyncsports.resources.standings import StandingsResource
from asyncsports.resources.statistics import StatisticsResource

__all__ = [
    "ActionsResource",
    "EventsResource",
    "FixturesResource",
    "SnookerResource",
    "SquadsResource",
    "StandingsResource",
    "StatisticsResource",
]
