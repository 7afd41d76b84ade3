"""The names of the mirror's work, typed: task keys, marks and live feeds (pure).

A task key names one task of the plan; a mark, kept as text in the database's ``marks``,
says when a piece of once-in-a-while work was last done (or that it is owed); a live
feed's name is that of its position in ``positions``. Each is a small frozen class whose
``str()`` is the text the database and the log know, written here only; a mark read back
from the database is parsed here too (:meth:`Owed.parse`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

__all__ = [
    "Events",
    "FeedKey",
    "Final",
    "Fixtures",
    "Key",
    "Live",
    "Mark",
    "NoStandings",
    "Owed",
    "Snooker",
    "Squads",
    "Standings",
    "Stats",
    "Window",
]


@dataclass(frozen=True, slots=True)
class Fixtures:
    """The task of a sport's near fixtures (yesterday to tomorrow)."""

    sport: str

    def __str__(self) -> str:
        return f"fixtures:{self.sport}"


@dataclass(frozen=True, slots=True)
class Window:
    """The task of a sport's fixtures in the whole window."""

    sport: str

    def __str__(self) -> str:
        return f"window:{self.sport}"


@dataclass(frozen=True, slots=True)
class Events:
    """The task of the live stream events."""

    def __str__(self) -> str:
        return "events"


@dataclass(frozen=True, slots=True)
class Snooker:
    """The task of the snooker tournaments, and its mark (when they were last read)."""

    def __str__(self) -> str:
        return "snooker"


@dataclass(frozen=True, slots=True)
class Live:
    """A live fixture: its task, and the name of its actions feed (its position)."""

    fixture: str
    resource: ClassVar[str] = "live.actions"
    """The feed's resource, as the metrics count its connections."""

    def __str__(self) -> str:
        return f"live:{self.fixture}"


@dataclass(frozen=True, slots=True)
class Stats:
    """The name of a live fixture's statistics feed (its position)."""

    fixture: str
    resource: ClassVar[str] = "live.statistics"
    """The feed's resource, as the metrics count its connections."""

    def __str__(self) -> str:
        return f"stats:{self.fixture}"


@dataclass(frozen=True, slots=True)
class Final:
    """An ended fixture's final read: its task, and its mark once read in full."""

    fixture: str

    def __str__(self) -> str:
        return f"final:{self.fixture}"


@dataclass(frozen=True, slots=True)
class Standings:
    """The task of a season's standings (one for the fixtures ending about together)."""

    season: str

    def __str__(self) -> str:
        return f"standings:{self.season}"


@dataclass(frozen=True, slots=True)
class Owed:
    """The mark of a season's standings owed: committed with the fixture's end, removed
    by the read, so that a restart still reads them."""

    sport: str
    season: str

    def __str__(self) -> str:
        return f"standings:{self.sport}:{self.season}"

    @classmethod
    def parse(cls, text: str) -> Owed | None:
        """The mark ``text`` as :func:`str` wrote it (None: another kind of mark)."""
        kind, _, rest = text.partition(":")
        sport, colon, season = rest.partition(":")
        return cls(sport, season) if kind == "standings" and colon else None


@dataclass(frozen=True, slots=True)
class NoStandings:
    """The mark of a season without standings (the service has none for it)."""

    season: str

    def __str__(self) -> str:
        return f"nostandings:{self.season}"


@dataclass(frozen=True, slots=True)
class Squads:
    """A season's squads: their task, and their mark (when last read)."""

    sport: str
    season: str

    def __str__(self) -> str:
        return f"squads:{self.sport}:{self.season}"


Key = Fixtures | Window | Events | Snooker | Live | Final | Standings | Squads
"""What names a task of the mirror's plan."""

Mark = Final | Owed | NoStandings | Squads | Snooker
"""What is kept in the database's ``marks`` (as its text)."""

FeedKey = Live | Stats
"""What names a live feed (its position, as its text)."""
