"""Resource namespaces: each builds requests and picks decoders; the session does the I/O."""

from asyncsports.resources.actions import Actions
from asyncsports.resources.events import Events
from asyncsports.resources.fixtures import Fixtures
from asyncsports.resources.snooker import Snooker
from asyncsports.resources.squads import Squads
from asyncsports.resources.standings import Standings
from asyncsports.resources.statistics import Statistics

__all__ = ["Actions", "Events", "Fixtures", "Snooker", "Squads", "Standings", "Statistics"]
