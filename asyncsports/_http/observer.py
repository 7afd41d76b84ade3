"""What the session tells an observer (tracing): the protocol only, nothing imported.

The session holds one :class:`Observer` or None (the default); with None, the request
path reads one attribute per call and does nothing else. :mod:`asyncsports.telemetry`
implements it with OpenTelemetry.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from asyncsports._http.request import Request
    from asyncsports._wire.live import ConnectionEnd
    from asyncsports._wire.retry import Call

__all__ = ["Connection", "Observer", "Send"]

T = TypeVar("T")

Send = Callable[[Any, str, "Request", "Call", Any], Awaitable[T]]
"""The session's attempt of a request: ``(transport, base URL, request, call, consume)``."""


class Connection(Protocol):
    """One live connection, from its opening to its end."""

    def end(self, delivered: int, end: ConnectionEnd | None) -> None:
        """It ended having delivered ``delivered`` records; ``end`` says why (None: the feed ended)."""


class Observer(Protocol):
    """Sees each call of a public method, each attempt of it, each wait for the client's
    turn, each live connection."""

    def attempt(self, send: Send[T]) -> Send[T]:
        """``send`` (the session's attempt) observed: called once per call."""

    def waited(self, seconds: float) -> None:
        """The current attempt (or live connection) waited ``seconds`` for its turn."""

    def connection(self, req: Request, attempt: int) -> Connection:
        """A live connection of ``req`` opened (its ``attempt``-th, counting refusals)."""

    def call(self, result: T, name: str) -> T:
        """What a call of a client's public method returned (a coroutine, a listing, a
        generator, a live feed), observed as the call ``name``: the resources' ``traced``."""
