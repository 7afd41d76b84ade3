"""Fixtures of the change feed's publisher tests: a bus server of each kind, per test.

``bus`` is parametrized over Redis Streams and NATS JetStream (every behaviour on both);
``reader`` reads back what the bus holds, as a consumer does (a Redis consumer group over
every table's stream, a JetStream durable pull consumer).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.servers import Bus, bus_server
from support.webhooks import SECRET

from asyncsports._wire.webhooks import SECRET_ENV


@pytest.fixture(params=["redis", "nats"])
def bus(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Bus]:
    """A bus server of its own for the test: Redis (AOF) or NATS (JetStream file store);
    a test of a behaviour webhooks share asks for the webhook receiver too
    (``@pytest.mark.parametrize("bus", KINDS, indirect=True)``, support/bus.py), the secret then set."""
    if request.param == "webhook":
        monkeypatch.setenv(SECRET_ENV, SECRET)
    server = bus_server(request.param)
    try:
        yield server
    finally:
        server.close()
