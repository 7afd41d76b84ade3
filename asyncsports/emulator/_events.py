"""Live stream events: a rolling schedule of booked events around the clock's time.

Event ``k`` starts about ``k`` half hours after an anchor two days before the emulator's
start time and lasts 90 to 180 minutes, so whatever the clock says there are events
live, about to start and far ahead; the listing holds those not yet ended that start
within three days. Events of a data-service sport point at a fixture of the current
season (``vendorDataID``) and take its name as title.
"""

from __future__ import annotations

from dataclasses import dataclass

from asyncsports.emulator._ids import rng
from asyncsports.emulator._world import World

__all__ = ["EventSchedule", "StreamEvent"]

_GAP = 1800
_HORIZON = 3 * 86400
_LONGEST = 180 * 60 + 600
_FIRST_ID = 100_000

_SPORTS = (
    # wire name or None, display name, property name
    ("basketball", "Basketball", "Hoops Pass"),
    ("ice-hockey", "Ice Hockey", "Ice Pass"),
    ("soccer", "Soccer", "Football Live"),
    ("american-football", "American Football", "Gridiron Live"),
    ("volleyball", "Volleyball", "Volley TV"),
    (None, "Tennis", "Tennis Channel Live"),
    (None, "Golf", "Golf Live"),
    (None, "Darts", "Darts Live"),
)
_COUNTRIES = ("GB", "IE", "US", "CA", "DE", "FR", "ES", "IT", "NL", "SE", "AU", "NZ", "BR", "JP")
_STATES = (
    "US-NY",
    "US-NJ",
    "US-PA",
    "US-CA",
    "US-NV",
    "US-CO",
    "US-IL",
    "US-MI",
    "US-TN",
    "US-VA",
    "US-AZ",
    "US-IN",
)


@dataclass(frozen=True, slots=True)
class StreamEvent:
    """A booked live video event."""

    id: int
    title: str
    start: int
    end: int
    updated: int
    tournament: tuple[int, str]
    property: tuple[int, str]
    sport: tuple[int, str]
    vendor_id: str | None
    allowed: tuple[str, ...]
    blocked: tuple[str, ...]
    allowed_states: tuple[str, ...]
    blocked_states: tuple[str, ...]

    def live(self, now: float) -> bool:
        """Whether the event is on air at ``now``."""
        return self.start <= now < self.end


class EventSchedule:
    """The stream events of one seed."""

    def __init__(self, world: World) -> None:
        self._world = world
        self._seed = world.seed
        self._anchor = int(world.now.timestamp()) // 3600 * 3600 - 2 * 86400

    def event(self, k: int) -> StreamEvent:
        """Event number ``k`` (id ``100000 + k``)."""
        r = rng(self._seed, "stream-event", k)
        start = self._anchor + k * _GAP + r.randrange(0, 600, 60)
        end = start + r.randrange(90, 181, 15) * 60
        s = r.randrange(len(_SPORTS))
        wire, display, prop = _SPORTS[s]
        t = r.randrange(2)
        tournament = (500 + s * 10 + t, f"{display} {('Premier', 'Open')[t]} Series")
        vendor_id = None
        if wire is not None:
            season = self._world.seasons(wire)[self._world.scale.seasons - 1]
            i = min(max(round((start - season.first) / season.gap), 0), max(season.n - 1, 0))
            if season.n:
                fixture = self._world.fixture(season, i)
                vendor_id, title = fixture.id, f"{fixture.home.name} v {fixture.away.name}"
            else:
                title = f"{display} Live"
        else:
            title = f"{tournament[1]} - Day {1 + k % 4}"
        countries = r.sample(_COUNTRIES, r.randint(3, 7))
        states = r.sample(_STATES, r.randint(0, 5))
        cut = len(countries) // 2
        return StreamEvent(
            id=_FIRST_ID + k,
            title=title,
            start=start,
            end=end,
            updated=start - r.randint(1, 30) * 86400 + r.randrange(86400),
            tournament=tournament,
            property=(50 + s, prop),
            sport=(s + 1, display),
            vendor_id=vendor_id,
            allowed=tuple(sorted(countries[:cut] or countries)),
            blocked=tuple(sorted(countries[cut:])),
            allowed_states=tuple(sorted(states[: len(states) // 2 + 1])),
            blocked_states=tuple(sorted(states[len(states) // 2 + 1 :])),
        )

    def by_id(self, event_id: int) -> StreamEvent | None:
        """The event with this id, or None."""
        k = event_id - _FIRST_ID
        return self.event(k) if k >= 0 else None

    def listing(self, now: float, live_only: bool) -> list[StreamEvent]:
        """Events not yet ended that start within the horizon (or only the live ones)."""
        low = max(0, int((now - _LONGEST - 600 - self._anchor) // _GAP))
        high = int((now + _HORIZON - self._anchor) // _GAP) + 1
        out = []
        for k in range(low, max(low, high)):
            e = self.event(k)
            if e.end <= now or e.start > now + _HORIZON:
                continue
            if live_only and not e.live(now):
                continue
            out.append(e)
        return out
