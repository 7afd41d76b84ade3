"""The transport seam: how a client reaches the network, for ``Client(transport=...)``.

A client sends its requests and opens its websockets through one :class:`Transport`;
retries, rate limits, hooks, body bounds and errors stay above it, in the client. The
default is :class:`AiohttpTransport`. Another is a class with the few methods of
:class:`Transport`, made by the client from its validated :class:`Settings`::

    Client(url, token=..., transport=MyTransport)            # MyTransport(settings)
    Client(url, token=..., transport=lambda s: Logged(AiohttpTransport(s)))

The guide "Writing a transport" walks through one.
"""

from asyncsports._http.config import Settings
from asyncsports._http.transports.aiohttp import AiohttpTransport
from asyncsports._http.transports.base import (
    Body,
    Handshake,
    Kind,
    Listener,
    Pushed,
    Reply,
    Transport,
)

__all__ = [
    "AiohttpTransport",
    "Body",
    "Handshake",
    "Kind",
    "Listener",
    "Pushed",
    "Reply",
    "Settings",
    "Transport",
]
