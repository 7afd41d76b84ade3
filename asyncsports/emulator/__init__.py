"""An embedded emulator of the sports data service, the snooker proxy and the live stream
events listing, for offline runs, tests and benchmarks.

    async with Emulator(seed=0) as emu:
        async with emu.client() as client:
            ...

It serves all three services on a loopback port with aiohttp, from data that is a pure
function of the seed (the same on every machine), in the wire format written from
api-spec (never through ``asyncsports.models``) with the choices of docs/wire.md.

Constructor (everything keyword-only after ``seed``):

- ``seed``: the data. ``now``: where the clock starts and the data is centred (aware;
  default 2026-06-01 12:00 UTC).
- Access: ``token`` (bearer), ``vendor`` (Accept ``application/vnd.<vendor>.dde.api+json;
  version=1``), ``snooker_feed``, ``operator_id``, ``stream_secret`` (signs live stream
  tokens: HMAC-MD5 of ``secret:ip:timestamp``, valid 30 s by the emulator's clock or
  by the real time), ``static_stream_auth`` (an ``(auth, timestamp)`` pair always accepted, or None).
- Where: ``host`` (default 127.0.0.1), ``port`` (0: a free one).
- Scale: ``competitions`` per sport, ``seasons`` per competition (the last is current),
  ``teams`` per competition, ``fixtures_per_season``, ``actions_per_fixture`` (a full
  timeline; at least what the result needs). For benchmarks ``big_fixture_list=N`` adds
  a finished basketball season of N fixtures (``emu.big_season_id``) and
  ``big_timeline=N`` an american-football fixture with an N-action timeline
  (``emu.big_fixture_id``). Fixtures and actions are made by index on demand and large
  bodies are streamed in 64 KiB chunks, so a million of either costs no memory.
- Behaviour: ``latency`` (seconds added to every response), ``rate_limit`` (requests per
  second, 429 with Retry-After beyond), ``rate_clock`` (the :class:`Clock` the rate
  limit counts on; see below), ``running_clock`` (the clock also follows the wall clock;
  the standalone server uses it), ``speed`` (the clock runs X times faster than the wall
  clock; 0 freezes it).
- Live feeds (websockets, docs/wire.md "Live feeds"): ``live_port`` (0: a free one),
  ``live_heartbeat`` (real seconds of silence before a heartbeat, default 20),
  ``live_seq`` (``"connection"``: ``fixtureSeqNum`` from 1 per connection; ``"fixture"``:
  from ``startPosition + 1``), ``live_ack`` (send ``{"type":"authorised"}``),
  ``live_dialect`` (``"emulator"``, the default; ``"vendor"`` or ``"golf"``: the vendor's
  documented acknowledgement, heartbeats, WARN for an unknown fixture on an open socket and
  ERROR for a bad token; golf adds an ``Alarm`` status message).
- Replay: ``replay`` (a file written by ``Client(record=...)`` or ``asyncsports --record``)
  serves that recording instead of the generated data: REST answers as recorded, a request
  not in it a 404 naming the nearest recorded one, live feeds with their recorded gaps at
  the clock's speed (which then runs at 1 unless ``speed`` is given). A file that is not
  a recording, or is malformed, cut short or over a limit, raises
  :class:`~asyncsports.errors.RecordingError` here, before anything is served. See
  docs/guides/recording.md.

Attributes: ``base_url``, ``streaming_url`` (``{base_url}/streaming``), ``live_url``
(``ws://host:live_port``, the live feeds; ``live_heartbeat`` is assignable), ``token``
(assignable, to test token refresh), ``vendor``, ``snooker_feed``, ``operator_id``,
``stream_secret``, ``streaming_credentials`` (signed per request by the emulator's
clock), ``static_streaming_credentials``, ``client(**kw)``, ``clock``, ``faults``,
``requests`` (a Counter per route name), ``log`` (recent requests), ``latency`` and
``rate_limit`` (assignable), ``rate_clock``.

Route names (for counters and faults): ``fixtures``, ``fixture``, ``actions``,
``statistics``, ``squads``, ``standings``, ``snooker.tournaments``, ``snooker.matches``,
``snooker.ast``, ``snooker.tournament-players``, ``snooker.tour-players``,
``snooker.centuries``, ``snooker.current-tournament-winner``,
``snooker.previous-tournament-winner``, ``snooker.player-info``, ``events``,
``playback``, ``unknown``.

The clock (frozen unless ``running_clock`` or ``speed``): ``emu.clock.advance(seconds)``,
``emu.clock.set(datetime)``, ``emu.clock.speed`` (assignable, no jump), ``emu.clock.now()``
(aware), ``emu.clock.time()`` (epoch). Another process steers it over HTTP:
``GET {base_url}/_emulator/clock`` answers ``{"now": ISO, "time": epoch, "speed": X}``;
``POST`` a JSON object with ``now`` (ISO or epoch), ``advance`` (seconds) and/or ``speed``
(0 freezes). That route is not counted, rate limited nor faulted. The live feeds follow
the clock at its speed.
Each competition's current season has a fixture every hour around ``now`` (the middle
one starts 15 minutes after it): as the clock moves, scheduled fixtures go live, their
timelines grow action by action (what is served is the prefix up to the clock), they
complete and their statistics appear (404 before); standings count completed fixtures;
stream events go live and end.

Two clocks. ``emu.clock`` is the data clock, the world's time, and moves only as the
caller says; it never throttles anything. The server-side rate limit (at most
``rate_limit`` requests in any one second) counts on ``emu.rate_clock``, a clock of its
own: by default a running :class:`Clock` (real time, monotonic), so moving the world on
by hours neither opens nor shuts the window. To test throttling without sleeping, pass a
frozen one and advance it::

    emu = Emulator(rate_limit=5, rate_clock=Clock(DEFAULT_NOW))
    ...  # the sixth request in a second gets a 429 with Retry-After: 1
    emu.rate_clock.advance(1)  # the window has passed; requests go through again

Faults (``emu.faults``):

- ``add(route="*", *, status=None, retry_after=None, latency=0.0, reset=None,
  truncate=None, malformed=False, repeat_page=False, times=None, skip=0) -> Fault``:
  ``route`` is a route name, a family (``snooker``), ``*`` or a path glob
  (``/v2/volleyball/*``). ``status`` answers 429/500/502/503/... (``retry_after``:
  seconds, a datetime for an HTTP date, or a string); ``latency`` adds real seconds;
  ``reset=N`` resets the connection after N body bytes; ``truncate=N`` ends the response
  after N body bytes without finishing it; ``malformed`` corrupts the JSON;
  ``repeat_page`` answers a request for page p > 0 with page p - 1 again. ``times``
  bounds how often it applies, ``skip`` lets that many matching requests through first.
  The returned rule counts ``seen`` and ``hits``.
- ``storm(probability, *, seed=0, route="*", kinds=("429", "500", "502", "503",
  "reset"), retry_after=0, latency=0.05)``: seeded random faults (kinds from
  ``STORM_KINDS``, which adds ``truncate``, ``malformed`` and ``latency``).
- ``live(kind, *, feed="*", after=0, times=1, skip=0, seconds=0, count=1)``: a fault of
  the live feeds, one
  of ``LIVE_KINDS``: ``drop``, ``stall``, ``duplicate``, ``reorder``, ``malformed`` (after
  ``after`` packets), ``bad_auth``, ``close`` (right after accepting), ``close_clean``
  (a normal close, 1000: right after accepting with ``after=0``, else after ``after``
  packets), ``status`` (a status message before packet ``after + 1``: golf's ``Alarm``,
  else the vendor's ``INFO`` notice), ``delay`` (``seconds`` of silence, heartbeats too,
  before packet ``after + 1``, then on), ``lag`` (the connection's records stamped with
  the clock as sent, the ``count`` from packet ``after + 1`` ``seconds`` behind it),
  ``coverage`` (packet ``after + 1``'s summary ``CollectionSuspended``, the next
  ``count - 1`` ``CollectionDropped``, reason ``no signal``; then the timeline's own).
  ``live_storm(probability, *, seed=0, feed="*", kinds=(...), max_after=20,
  per_packet=False)``: seeded random live faults, one per connection (``per_packet``:
  one per packet with ``probability``, so many on one connection). Route names
  ``live.actions``, ``live.statistics`` count connections in ``requests``;
  ``emu.live_packets_sent`` counts the data packets sent.
- ``clear()``; ``injected``: a Counter by kind (``"429"``, ``"503"``, ``latency``,
  ``reset``, ``truncate``, ``malformed``, ``repeat_page``, ``rate_limit``).

Errors: a missing Accept is a 400 with a plain-text body, and so is another vendor's;
a missing token is a 401 with a JSON body; a wrong one a 401 with ``WWW-Authenticate``
and the body ``{The supplied authentication is invalid}``; unknown ids and paths 404;
other errors JSON ``{"error": ..., "status": ...}``. The snooker proxy takes the data
service's headers. The events listing takes ``operatorId``, ``auth`` and ``timestamp``
(static, or signed for the caller's IP at most 30 s ago), else 401.

Behaviour where api-spec leaves room: actions before the first pre-match record are
``[]`` (pre-match records start an hour before the start); fixture lists sorted by
given keys fall back to start time, then name, then season and position; snooker
``tournaments`` ``start``/``end`` select tournaments overlapping that span; on
``tournament-players/external`` ``sortOptions=true`` sorts by name; events
``format=xml`` gives a plain ``<events><event>...`` rendering of the same fields.
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from asyncsports.emulator._clock import Clock
    from asyncsports.emulator._emulator import Emulator
    from asyncsports.emulator._faults import STORM_KINDS, Fault, Faults, Storm
    from asyncsports.emulator._options import DEFAULT_NOW

__all__ = ["DEFAULT_NOW", "STORM_KINDS", "Clock", "Emulator", "Fault", "Faults", "Storm"]

_HOMES = {"DEFAULT_NOW": "_options", "Clock": "_clock", "Emulator": "_emulator"} | {
    name: "_faults" for name in ("STORM_KINDS", "Fault", "Faults", "Storm")
}
"""Where each public name is defined. Imported when first used: the command line reads
the options of ``asyncsports emulator`` (``_options``) without serving anything."""

# Hidden from type checkers, which read the imports above: to them a typo stays an error.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})
