"""Defaults of the engines that the command line shows in its --help (a default, an
epilog), kept in a module that imports nothing: ``asyncsports --help`` reads them
without importing the store, the backfill or the mirror, which use them from here."""

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
