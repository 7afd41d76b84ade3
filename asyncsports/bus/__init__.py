"""``asyncsports.bus``: a mirror database's change feed published to a bus.

::

    publisher = Publisher("sports.sqlite", "redis://localhost:6379/0")
    await publisher.once()  # every change committed so far, each once, in commit order

:class:`Publisher` puts the change log of a mirror database (:mod:`asyncsports.sync`
writes it) on Redis Streams or NATS JetStream (:class:`Bus`, opened by :func:`connect`),
exactly once, in commit order, or POSTs it to a webhook endpoint (at least once, in
order, signed per Standard Webhooks); :func:`serve_publisher_metrics` serves its ``/metrics``
and ``/healthz``. It needs only the database (:mod:`asyncsports.store`) and the bus's
wire format (:mod:`asyncsports._wire.bus`): never the mirror, nor a client.
"""

from asyncsports.bus._bus import Bus, classify, connect
from asyncsports.bus._metrics import serve_publisher_metrics
from asyncsports.bus._publisher import BACKOFF, BATCH, IDLE, Publisher

__all__ = [
    "BACKOFF",
    "BATCH",
    "IDLE",
    "Bus",
    "Publisher",
    "classify",
    "connect",
    "serve_publisher_metrics",
]
