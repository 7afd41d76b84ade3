"""Scriptable faults, a seeded fault storm and the server-side rate limit.

A :class:`Fault` is a rule: which requests it matches (a route name, a route family such
as ``snooker``, ``*``, or a path glob starting with ``/``), what it does to them and how
many times. Rules are tried in the order they were added; the first active one that
matches applies. Everything injected is counted in :attr:`Faults.injected` by kind:
``"429"``/``"500"``/... for statuses, ``latency``, ``reset``, ``truncate``,
``malformed``, ``repeat_page``, and ``rate_limit`` for the server-side limit.

The live feeds (websockets) have rules of their own, :meth:`Faults.live`, picked once per
connection and counted as ``live.<kind>`` (``live.drop``, ``live.stall``...).
"""

from __future__ import annotations

import collections
import datetime as dt
import fnmatch
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from email.utils import format_datetime
from typing import TypeVar

from asyncsports.emulator._clock import Clock

__all__ = [
    "LIVE_KINDS",
    "STORM_KINDS",
    "Fault",
    "Faults",
    "LiveFault",
    "LiveStorm",
    "RateLimiter",
    "Storm",
]

STORM_KINDS = ("429", "500", "502", "503", "reset", "truncate", "malformed", "latency")
"""Every kind a storm can inject."""

LIVE_KINDS = (
    "drop",
    "stall",
    "duplicate",
    "reorder",
    "malformed",
    "bad_auth",
    "close",
    "close_clean",
    "status",
    "delay",
    "lag",
    "coverage",
)
"""Every kind of live feed fault (see :meth:`Faults.live`)."""
PACKET_KINDS = ("drop", "stall", "duplicate", "reorder", "malformed", "close_clean")
"""The kinds a per-packet storm draws from (those that act on one packet)."""


def _matches(pattern: str, route: str, path: str) -> bool:
    """A route name, a family of names (``snooker``), ``*``, or a path glob (``/v2/*``)."""
    if pattern.startswith("/"):
        return fnmatch.fnmatchcase(path, pattern)
    return pattern in ("*", route) or route.startswith(pattern + ".")


@dataclass
class Fault:
    """One fault rule. See :meth:`Faults.add` for the meaning of each field."""

    route: str = "*"
    status: int | None = None
    retry_after: float | str | dt.datetime | None = None
    latency: float = 0.0
    reset: int | None = None
    truncate: int | None = None
    malformed: bool = False
    repeat_page: bool = False
    times: int | None = None
    skip: int = 0
    seen: int = field(default=0, compare=False)
    """Matching requests seen so far."""
    hits: int = field(default=0, compare=False)
    """Requests it was applied to so far."""

    @property
    def active(self) -> bool:
        """Whether it still applies to new requests."""
        return self.times is None or self.hits < self.times

    @property
    def kinds(self) -> list[str]:
        """The kinds of fault it injects (for the counters)."""
        out = [str(self.status)] if self.status is not None else []
        for name, on in (
            ("latency", self.latency > 0),
            ("reset", self.reset is not None),
            ("truncate", self.truncate is not None),
            ("malformed", self.malformed),
            ("repeat_page", self.repeat_page),
        ):
            if on:
                out.append(name)
        return out

    def matches(self, route: str, path: str) -> bool:
        """Whether a request to ``route`` (its name) at ``path`` is one of this rule's."""
        return _matches(self.route, route, path)

    def retry_after_header(self) -> str | None:
        """The Retry-After value: seconds, or an HTTP date for a datetime."""
        value = self.retry_after
        if value is None:
            return None
        if isinstance(value, dt.datetime):
            return format_datetime(value.astimezone(dt.UTC), usegmt=True)
        if isinstance(value, str):
            return value
        return f"{value:g}"


@dataclass
class LiveFault:
    """One live feed fault rule. See :meth:`Faults.live`."""

    kind: str
    feed: str = "*"
    after: int = 0
    times: int | None = 1
    skip: int = 0
    seconds: float = 0.0
    """How long a ``delay`` is silent, how far a ``lag`` stamps its records behind."""
    count: int = 1
    """The records a ``lag`` or a ``coverage`` fault covers."""
    seen: int = field(default=0, compare=False)
    """Matching connections seen so far."""
    hits: int = field(default=0, compare=False)
    """Connections it was applied to so far."""
    draw: Callable[[], str | None] | None = field(default=None, compare=False, repr=False)
    """A per-packet storm (kind ``storm``): the fault of each packet, or None for none."""

    @property
    def active(self) -> bool:
        """Whether it still applies to new connections."""
        return self.times is None or self.hits < self.times

    def matches(self, feed: str, path: str) -> bool:
        """Whether a connection to ``feed`` (``actions``/``statistics``) at ``path`` is one of its."""
        return _matches(self.feed, feed, path)


@dataclass
class LiveStorm:
    """Random live faults: each matching connection gets one with ``probability``."""

    probability: float
    seed: int = 0
    feed: str = "*"
    kinds: tuple[str, ...] = ("drop", "stall", "duplicate", "reorder")
    max_after: int = 20
    per_packet: bool = False
    rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not 0 <= self.probability <= 1:
            raise ValueError("probability must be within 0..1")
        if self.per_packet and set(self.kinds) - set(PACKET_KINDS):
            raise ValueError(f"a per-packet storm's kinds must be some of {PACKET_KINDS}")
        unknown = set(self.kinds) - set(LIVE_KINDS)
        if unknown or not self.kinds:
            raise ValueError(f"live storm kinds must be some of {LIVE_KINDS}, got {self.kinds}")
        timed = [k for k in self.kinds if k in ("delay", "lag")]
        if timed:  # a storm draws where and what, never how long: it would be no fault
            raise ValueError(f"{timed[0]!r} needs seconds: give it with Faults.live, not a storm")
        if self.max_after < 0:
            raise ValueError("max_after must not be negative")
        self.rng = random.Random(self.seed)

    def draw(self, feed: str, path: str) -> LiveFault | None:
        """A one-off fault for this connection, or None (per packet: the storm itself)."""
        if not _matches(self.feed, feed, path):
            return None
        if self.per_packet:
            return LiveFault("storm", self.feed, times=None, draw=self.packet)
        if self.rng.random() >= self.probability:
            return None
        kind = self.rng.choice(self.kinds)
        return LiveFault(kind, self.feed, self.rng.randint(0, self.max_after))

    def packet(self) -> str | None:
        """The fault of one packet of a per-packet storm, or None."""
        if self.rng.random() >= self.probability:
            return None
        return self.rng.choice(self.kinds)


@dataclass
class Storm:
    """Random faults: each matching request fails with ``probability``, kinds drawn evenly."""

    probability: float
    seed: int = 0
    route: str = "*"
    kinds: tuple[str, ...] = ("429", "500", "502", "503", "reset")
    retry_after: float = 0
    latency: float = 0.05
    rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not 0 <= self.probability <= 1:
            raise ValueError("probability must be within 0..1")
        unknown = set(self.kinds) - set(STORM_KINDS)
        if unknown or not self.kinds:
            raise ValueError(f"storm kinds must be some of {STORM_KINDS}, got {self.kinds}")
        self.rng = random.Random(self.seed)

    def draw(self, route: str, path: str) -> Fault | None:
        """A one-off fault for this request, or None."""
        if not _matches(self.route, route, path) or self.rng.random() >= self.probability:
            return None
        kind = self.rng.choice(self.kinds)
        if kind.isdigit():
            retry = self.retry_after if kind in ("429", "503") else None
            return Fault(status=int(kind), retry_after=retry)
        if kind == "latency":
            return Fault(latency=self.latency)
        # Cut bodies somewhere in their first kilobyte, where every body has bytes.
        at = self.rng.randrange(1, 1024)
        return Fault(
            reset=at if kind == "reset" else None,
            truncate=at if kind == "truncate" else None,
            malformed=kind == "malformed",
        )


_R = TypeVar("_R", Fault, LiveFault)


def _choose(matching: Iterable[_R], storm: Callable[[], _R | None] | None) -> _R | None:
    """The first of the ``matching`` rules past its ``skip`` and still active (each rule
    tried counts one more seen), else the storm's draw; what is chosen counts a hit."""
    chosen = None
    for rule in matching:
        rule.seen += 1
        if rule.seen > rule.skip and rule.active:
            chosen = rule
            break
    if chosen is None and storm is not None:
        chosen = storm()
    if chosen is not None:
        chosen.hits += 1
    return chosen


class Faults:
    """The fault rules of an emulator, its storm and the counts of what was injected."""

    def __init__(self) -> None:
        self.rules: list[Fault] = []
        self.live_rules: list[LiveFault] = []
        self._live_storm: LiveStorm | None = None
        self.injected: collections.Counter[str] = collections.Counter()
        self._storm: Storm | None = None

    def add(
        self,
        route: str = "*",
        *,
        status: int | None = None,
        retry_after: float | str | dt.datetime | None = None,
        latency: float = 0.0,
        reset: int | None = None,
        truncate: int | None = None,
        malformed: bool = False,
        repeat_page: bool = False,
        times: int | None = None,
        skip: int = 0,
    ) -> Fault:
        """Add a rule and return it (its ``hits`` count how often it applied).

        ``route``: a route name (``fixtures``, ``actions``, ``snooker.matches``,
        ``events``...), a family (``snooker``), ``*``, or a path glob (``/v2/*``).
        ``status`` answers with that error status (``retry_after`` adds Retry-After:
        seconds, an HTTP date for a datetime, or a string as it is). ``latency`` delays
        the response by that many real seconds. ``reset`` resets the connection after that
        many body bytes; ``truncate`` ends the response after that many body bytes
        without finishing it; ``malformed`` inserts a NUL byte in the middle of the first
        chunk, so the JSON no longer parses. ``repeat_page`` makes a paged list answer the
        previous page again. ``times`` bounds how often it applies (None: always);
        ``skip`` lets that many matching requests through first.
        """
        if status is not None and not 400 <= status <= 599:
            raise ValueError("status must be an error status (400-599)")
        body = [reset is not None, truncate is not None, malformed, repeat_page]
        if sum(body) > 1 or (status is not None and any(body)):
            raise ValueError("choose one of status, reset, truncate, malformed, repeat_page")
        if status is None and not any(body) and latency <= 0:
            raise ValueError("a fault needs an effect: status, latency, reset, truncate...")
        if any(v is not None and v < 0 for v in (reset, truncate)) or latency < 0:
            raise ValueError("byte counts and latency must not be negative")
        if (times is not None and times < 0) or skip < 0:
            raise ValueError("times and skip must not be negative")
        rule = Fault(
            route,
            status,
            retry_after,
            latency,
            reset,
            truncate,
            malformed,
            repeat_page,
            times,
            skip,
        )
        self.rules.append(rule)
        return rule

    def storm(
        self,
        probability: float,
        *,
        seed: int = 0,
        route: str = "*",
        kinds: Sequence[str] = ("429", "500", "502", "503", "reset"),
        retry_after: float = 0,
        latency: float = 0.05,
    ) -> Storm:
        """Fail each matching request with ``probability`` (a seeded, repeatable sequence).

        ``kinds`` are drawn evenly from ``STORM_KINDS``; rules added with :meth:`add`
        take precedence. ``probability=0`` (or :meth:`clear`) ends the storm.
        """
        self._storm = Storm(probability, seed, route, tuple(kinds), retry_after, latency)
        return self._storm

    def live(
        self,
        kind: str,
        *,
        feed: str = "*",
        after: int = 0,
        times: int | None = 1,
        skip: int = 0,
        seconds: float = 0.0,
        count: int = 1,
    ) -> LiveFault:
        """Add a fault rule for live feed connections and return it.

        ``kind``: ``drop`` (abort the TCP connection, no close frame, after ``after`` data
        packets), ``stall`` (after ``after`` packets send nothing more, not even
        heartbeats, and keep the socket open), ``duplicate`` (packet ``after + 1`` is
        sent twice, same ``fixtureSeqNum``), ``reorder`` (packets ``after + 1`` and
        ``after + 2`` are swapped), ``malformed`` (packet ``after + 1`` is cut in half, not
        JSON), ``bad_auth`` (refuse even the right token), ``close`` (close with 1011 right
        after accepting, before reading the token), ``close_clean`` (a normal close, 1000,
        as a fixture's end would have it: with ``after`` 0 right after accepting, before
        reading the token, else after ``after`` packets; a proxy or a server restart does
        the same mid-fixture), ``status`` (a status message before packet ``after + 1``:
        golf's ``Alarm``, else the vendor's ``INFO`` notice; a feed's ``VendorStatus``
        health event), ``delay`` (before packet ``after + 1`` send nothing, not even
        heartbeats, for ``seconds`` real seconds, then go on on the same connection: a
        feed's ``Delayed`` then ``Recovered`` when its ``delayed_after`` is shorter),
        ``lag`` (every record of the connection stamped with the emulator's clock as it
        is sent, as a live record is, and the ``count`` records from packet ``after + 1``
        stamped ``seconds`` behind it: ``Delayed`` lagging, then ``Recovered``, with
        ``lag_after`` below ``seconds`` and the clock at the real time), ``coverage``
        (actions records only: packet ``after + 1``'s fixture summary says
        ``collectionStatus`` ``CollectionSuspended``, the next ``count - 1``
        ``CollectionDropped``, each with the reason ``no signal``; then the timeline's own
        status again: ``Coverage`` events). ``feed``: ``actions``,
        ``statistics``, ``*`` or a path glob (``/media/*``). ``times`` bounds how many
        connections it takes (default one; None: all), ``skip`` lets that many matching
        connections through first. Counted as ``live.<kind>`` in :attr:`injected`.
        """
        if kind not in LIVE_KINDS:
            raise ValueError(f"kind must be one of {LIVE_KINDS}, got {kind!r}")
        if after < 0 or skip < 0 or (times is not None and times < 0):
            raise ValueError("after, times and skip must not be negative")
        if kind in ("delay", "lag") and not seconds > 0:
            raise ValueError(f"a {kind} fault needs seconds > 0")
        if count < 1:
            raise ValueError("count must be at least 1")
        rule = LiveFault(kind, feed, after, times, skip, seconds, count)
        self.live_rules.append(rule)
        return rule

    def live_storm(
        self,
        probability: float,
        *,
        seed: int = 0,
        feed: str = "*",
        kinds: Sequence[str] = ("drop", "stall", "duplicate", "reorder"),
        max_after: int = 20,
        per_packet: bool = False,
    ) -> LiveStorm:
        """Give each matching live connection a fault with ``probability`` (seeded).

        The kind is drawn evenly from ``kinds`` (some of ``LIVE_KINDS``), ``after`` from
        0..``max_after``; rules added with :meth:`live` take precedence.
        ``per_packet``: each data packet of every matching connection gets a fault with
        ``probability`` instead (kinds from ``PACKET_KINDS``), so one connection may carry
        duplicates and reorders and then a drop or a stall; each counted as it happens.
        ``probability=0`` (or :meth:`clear`) ends it.
        """
        self._live_storm = LiveStorm(probability, seed, feed, tuple(kinds), max_after, per_packet)
        return self._live_storm

    def pick_live(self, feed: str, path: str) -> LiveFault | None:
        """The live fault for one new connection, counted, or None."""
        storm = self._live_storm
        matching = (r for r in self.live_rules if r.matches(feed, path))
        chosen = _choose(matching, None if storm is None else lambda: storm.draw(feed, path))
        if chosen is not None and chosen.draw is None:
            self.injected["live." + chosen.kind] += 1
        return chosen

    def clear(self) -> None:
        """Remove every rule and the storm (the counters stay)."""
        self.rules.clear()
        self.live_rules.clear()
        self._live_storm = None
        self._storm = None

    def pick(self, route: str, path: str, page: int = 0) -> Fault | None:
        """The fault for one request, counted, or None.

        ``page`` is the page the request asks for: a ``repeat_page`` rule only takes
        requests for a page after the first (the first has no previous page to repeat).
        """
        storm = self._storm
        matching = (
            r for r in self.rules if r.matches(route, path) and not (r.repeat_page and page < 1)
        )
        chosen = _choose(matching, None if storm is None else lambda: storm.draw(route, path))
        if chosen is not None:
            self.injected.update(chosen.kinds)
        return chosen


class RateLimiter:
    """At most ``per_second`` requests in any one second by ``clock``.

    ``clock`` is the limiter's own, never the emulator's data clock: moving the world's
    time on by hours must not open the window, and a frozen data clock must not keep it
    shut. The emulator gives it a running :class:`Clock` (real time) unless told
    otherwise; a test passes a frozen one and advances it instead of sleeping.
    """

    def __init__(self, per_second: int, clock: Clock) -> None:
        if per_second < 1:
            raise ValueError("rate_limit must be at least 1 request per second")
        self.per_second = per_second
        self.clock = clock
        self._times: collections.deque[float] = collections.deque()

    def check(self) -> float | None:
        """None when the request may pass (it is counted), else the seconds until one could."""
        now = self.clock.time()
        window = self._times
        while window and now - window[0] >= 1.0:
            window.popleft()
        if len(window) >= self.per_second:
            return 1.0 - (now - window[0])
        window.append(now)
        return None
