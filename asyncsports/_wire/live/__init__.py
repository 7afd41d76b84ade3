"""The live feeds' protocol, sans I/O: classify messages, order records, decide reconnects.

Nothing here touches a socket or a clock; the websocket loop (:mod:`asyncsports._http.live`)
feeds it what arrived and does what it answers, in the style of h11.

- :func:`classify`: one websocket message of a feed -> :class:`Packet` (a decoded record
  and its ``fixtureSeqNum``), :class:`Heartbeat`, :class:`Ack`, :class:`AuthFailed`,
  :class:`Warned`, :class:`Status` (the vendor's status messages), :class:`Unknown`, or
  :class:`Malformed` (looks like a packet, does not decode). Decimal fields arrive quoted
  or not (``"fixtureSeqNum": "12"``): the live decoders are lax.
- :class:`FeedState`: one feed across its connections. ``position`` counts the records
  delivered, and is the ``startPosition`` of the next connection. Each packet gets a
  :class:`Step`: deliver (in order, perhaps with held ones), drop (already delivered),
  hold (ahead of a missing one) or gap (reconnect at ``position``).
- :func:`reconnect`: after a connection ended, what next, through ``asyncsports._wire.retry.decide``:
  a connection that delivered a record resets the budget; a bad token raises at once.
- :class:`~asyncsports._wire.live.health.HealthMachine` (in ``health``): a feed's health
  events (connected, lost, reconnecting, resumed, delayed, recovered, the vendor's status
  messages, coverage changes, ended) from what the driver tells it.
- :class:`MergeBook`: the bookkeeping of many feeds merged into one iterator: bounded
  buffers, which feed must pause reading, and resume points counted by what the consumer
  took, not by what arrived.

The rules, and why, are in docs/wire.md ("Live feeds").
"""

from asyncsports._wire.live.merge import MergeBook
from asyncsports._wire.live.messages import (
    Ack,
    AuthFailed,
    FeedKind,
    Heartbeat,
    Malformed,
    Message,
    Packet,
    Record,
    Status,
    Unknown,
    Warned,
    classify,
    live_decoder,
)
from asyncsports._wire.live.order import FeedState, Step
from asyncsports._wire.live.reconnect import ConnectionEnd, reconnect

__all__ = [
    "Ack",
    "AuthFailed",
    "ConnectionEnd",
    "FeedKind",
    "FeedState",
    "Heartbeat",
    "Malformed",
    "MergeBook",
    "Message",
    "Packet",
    "Record",
    "Status",
    "Step",
    "Unknown",
    "Warned",
    "classify",
    "live_decoder",
    "reconnect",
]
