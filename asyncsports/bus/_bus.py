"""The buses a change feed is published to, behind one interface: :class:`Bus`.

:func:`connect` opens the one a :class:`~asyncsports._wire.bus.Target` names: Redis
Streams (:mod:`~asyncsports.bus._redis`, redis-py), NATS JetStream
(:mod:`~asyncsports.bus._nats`, nats-py) or a webhook endpoint
(:mod:`~asyncsports.bus._webhook`, aiohttp). Each says where the feed stands on it
(:meth:`Bus.position`: read from the bus itself, every entry there checked to be this
database's; an endpoint, which cannot say, keeps it in the database it is given) and
publishes a batch, in order, every message stored once it returns, the bus claimed for
one database with the first (:meth:`Bus.publish`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from asyncsports._wire.bus import Message, Target, Trouble

if TYPE_CHECKING:
    from asyncsports.store import ChangeLog

__all__ = ["Bus", "Trouble", "classify", "connect", "pause"]


class Bus(Protocol):
    """An open connection to a bus: every method but :meth:`abort` is a coroutine."""

    target: Target

    async def position(self, origin: str | None) -> int:
        """The seq of the last change on the bus (0: none), after checking that what our
        streams hold was published by the database ``origin`` (None: a database with no
        change yet, so any entry of ours is foreign): a BusError naming the stream and the
        entry otherwise (a foreign id, no origin claim, another origin)."""
        ...

    async def publish(self, batch: Sequence[Message], origin: str, after: int) -> int:
        """Publish ``batch`` in order right after change ``after`` (the position last
        read or acked), claiming the bus for ``origin`` atomically with the first batch;
        each message stored on return; the number the bus already held from this same
        database. A refusal is a BusError naming the change, the stream and the limit."""
        ...

    async def ping(self) -> None:
        """A round trip to the bus (its error if it is gone)."""

    async def close(self) -> None:
        """Close the connection."""

    def abort(self) -> None:
        """Drop the connection without waiting."""


async def connect(target: Target, connect_timeout: float, store: ChangeLog | None = None) -> Bus:
    """An open :class:`Bus` to ``target``, within ``connect_timeout`` seconds (the
    library's errors as raised: the caller tells a bus away from a bus refusing). A
    webhook endpoint keeps where the feed stands in ``store``, the database whose feed
    it takes (the others ignore it)."""
    if target.kind == "redis":
        from ._redis import RedisBus

        return await RedisBus.open(target, connect_timeout)
    if target.kind == "webhook":
        from ._webhook import WebhookBus

        return await WebhookBus.open(target, connect_timeout, store)
    from ._nats import NatsBus

    return await NatsBus.open(target, connect_timeout)


def classify(exc: BaseException) -> Trouble | None:
    """What ``exc``, raised talking to a bus, says of it; None: not the bus's (a bug, or
    asyncsports' own error), to be raised as it is."""
    module = type(exc).__module__
    if module.startswith("redis"):
        from ._redis import classify as redis

        return redis(exc)
    if module.startswith("nats"):
        from ._nats import classify as nats

        return nats(exc)
    if module.startswith("aiohttp"):
        from ._webhook import classify as webhook

        return webhook(exc)
    return "away" if isinstance(exc, OSError) else None


def pause(exc: BaseException) -> float:
    """Seconds the bus asked, as it failed with ``exc``, to be left alone before the
    next try (an endpoint's ``Retry-After``); 0: it asked nothing."""
    wait = getattr(exc, "retry_after", None)
    return float(wait) if isinstance(wait, int | float) else 0.0
