"""Live feeds over the service's websockets: ``client.live``.

::

    async with Client(base_url, token=..., live_url="wss://dde-streams.data.srarena.io") as c:
        async with c.live.actions("basketball", fixture_id) as feed:
            async for action in feed:          # the same Action records as actions.list
                ...
        # feed.position: records delivered; start_position=feed.position carries on
        async for action, json in c.with_json.live.actions("basketball", fixture_id):
            ...                                # json: the message's bytes, as sent

A :class:`Feed` reconnects by itself (backoff with jitter, through the client's retry
policy) and resumes at ``startPosition`` = records delivered, so each record comes once and
in order whatever the server does; it ends after the fixture's finishing record (or when
the service says the fixture is over with every record delivered), else it raises. Many
feeds merge into one iterator of ``(fixture_id, record)`` with :func:`merge`. A feed's
health (connected, lost, reconnecting, resumed, delayed, recovered, the vendor's status
messages, coverage changes, ended) is data beside its records: ``feed.health()`` and
``merged.health()`` iterate :data:`HealthEvent` values, ``feed.health_state`` is the
latest. The wire rules the vendor leaves open are in docs/wire.md ("Live feeds", "Feed
health").

The names live in :mod:`asyncsports._iter.feed` (:class:`Feed`), :mod:`asyncsports._iter.merge`
and :mod:`asyncsports.resources.live`; this module is their public address.
"""

from asyncsports._http.health import HealthEvents
from asyncsports._iter.feed import Feed
from asyncsports._iter.merge import Merged, merge
from asyncsports._wire.live.health import (
    Connected,
    Coverage,
    Delayed,
    Ended,
    HealthEvent,
    HealthState,
    Lost,
    Reconnecting,
    Recovered,
    Resumed,
    VendorStatus,
)
from asyncsports.resources.live import DEFAULT_IDLE_TIMEOUT, LiveResource
from asyncsports.resources.live import feed_request as feed_request
from asyncsports.resources.live import over as over

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "Connected",
    "Coverage",
    "Delayed",
    "Ended",
    "Feed",
    "HealthEvent",
    "HealthEvents",
    "HealthState",
    "LiveResource",
    "Lost",
    "Merged",
    "Reconnecting",
    "Recovered",
    "Resumed",
    "VendorStatus",
    "merge",
]
