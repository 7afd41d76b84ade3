"""Defaults shared by more than one module, each in one place, in a module that imports
nothing: the client's (read by :class:`~asyncsports.Client`'s signature, its ``Settings``
and the emulator), and those of the engines that the command line shows in its --help
(a default, an epilog): ``asyncsports --help`` reads them without importing the store,
the backfill or the mirror, which use them from here."""

VENDOR = "imggaming"
"""The vendor of the service's media types (``application/vnd.imggaming.dde.api+json``)."""

SNOOKER_FEED = "tvfeed"
"""The snooker proxy's feed, the path segment after ``/snooker/``."""

RATE_LIMIT_KEY = "asyncsports"
"""The name in Redis of the rate limit budget clients share (``rate_limit_url``)."""

MAX_CONNECTIONS = 100
"""Pooled connections a client holds at most."""

DNS_TTL = 10
"""Seconds a client keeps a resolved address: short, as the streaming host's change."""

MAX_BODY_SIZE = 64 * 1024 * 1024
"""Bytes of a whole response body at most, after content decoding."""

MAX_ELEMENT_SIZE = 16 * 1024 * 1024
"""Bytes of one element of a streamed list at most."""

CONNECT_TIMEOUT = 10.0
"""Seconds to connect to a PostgreSQL database (TCP, TLS, logging in) before giving up."""

PATIENCE = 120.0
"""Seconds a PostgreSQL database once reached is waited for while it is unreachable."""

LEASE = 30.0
"""Seconds a claim lasts unless renewed: how long a dead worker's units wait."""

DEFAULT_EVERY: dict[str, float] = {
    "live": 5.0,  # actions of a live fixture, polled over REST (no live websocket)
    "fixtures": 30.0,  # the near window (yesterday to tomorrow): a status lands within a minute
    "window": 600.0,  # the whole window (days back to days ahead)
    "events": 30.0,  # live stream events with live=true: the service's advice
    "squads": 86400.0,  # the service's advice: once per 24 hours
    "snooker": 86400.0,  # snooker tournaments: daily
    "retry": 60.0,  # a fixture's final read when its statistics are not there yet
}
"""Seconds between two runs of each kind of work (``--every kind=seconds``)."""
