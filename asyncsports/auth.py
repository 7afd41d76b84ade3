"""Bearer-token providers and the live stream credentials.

Pure apart from calling the user's token callable: nothing here touches the network.
"""

from __future__ import annotations

import hashlib
import hmac
import inspect
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio

__all__ = ["StreamingCredentials", "Token", "TokenProvider", "stream_token"]

Token = str | Callable[[], str] | Callable[[], Awaitable[str]]
"""A bearer token, or a sync or async callable that returns one."""


class TokenProvider:
    """Holds the current bearer token and asks the source again when told it is stale.

    A plain string never changes; a callable is asked at first use and after
    :meth:`invalidate` (the session calls it once after a 401). :attr:`current` is the
    token in hand (None until a callable has been asked), for a caller that wants to
    skip awaiting :meth:`get` when there is one.
    """

    def __init__(self, source: Token | None) -> None:
        if source is not None and not isinstance(source, str) and not callable(source):
            raise TypeError(f"token must be a str or a callable, not {type(source).__name__}")
        self._source = source
        self.current: str | None = source if isinstance(source, str) else None
        self._lock: anyio.Lock | None = None

    @property
    def refreshable(self) -> bool:
        """Whether asking again can give a different token."""
        return callable(self._source)

    async def get(self) -> str | None:
        """The token, asking the callable if there is none yet.

        Concurrent first calls share one answer: the callable is asked once.
        """
        if self.current is not None or not callable(self._source):
            return self.current
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            if self.current is None:
                value = self._source()
                if inspect.isawaitable(value):
                    value = await value
                if not isinstance(value, str) or not value:
                    raise TypeError(
                        f"the token callable returned {type(value).__name__}, "
                        "expected a non-empty str"
                    )
                self.current = value
        return self.current

    def invalidate(self, stale: str | None = None) -> None:
        """Forget a callable's token so that the next :meth:`get` asks again.

        With ``stale``, only if the current token is still that one: many requests
        refused with the same old token cause one refresh, not one each.
        """
        if callable(self._source) and (stale is None or self.current == stale):
            self.current = None


def stream_token(secret: str, ip: str, timestamp_ms: int) -> str:
    """The live stream token: lowercase hex HMAC-MD5 of ``secret:ip:timestamp`` keyed by secret."""
    message = f"{secret}:{ip}:{timestamp_ms}".encode()
    return hmac.new(secret.encode(), message, hashlib.md5).hexdigest()


@dataclass(frozen=True)
class StreamingCredentials:
    """Credentials of the live stream events listing: ``operatorId``, ``auth`` and ``timestamp``.

    Built directly they are fixed values sent as they are. Built with :meth:`from_secret`
    they make a fresh token and millisecond timestamp for every request, since a token
    is valid for 30 seconds only.
    """

    operator_id: int
    auth: str = field(default="", repr=False)
    timestamp: int = 0
    secret: str | None = field(default=None, repr=False)
    ip: str | None = None
    clock: Callable[[], float] = field(default=time.time, repr=False, compare=False)

    @classmethod
    def from_secret(
        cls,
        operator_id: int,
        secret: str,
        ip: str,
        *,
        clock: Callable[[], float] = time.time,
    ) -> StreamingCredentials:
        """Credentials that sign every request with ``secret`` for the caller's IPv4 ``ip``."""
        if not secret:
            raise ValueError("secret must not be empty")
        return cls(operator_id, secret=secret, ip=ip, clock=clock)

    def params(self) -> list[tuple[str, str]]:
        """The query parameters for one request (a fresh token when built from a secret)."""
        if self.secret is not None:
            ts = int(self.clock() * 1000)
            auth = stream_token(self.secret, self.ip or "", ts)
        else:
            ts, auth = self.timestamp, self.auth
        return [("operatorId", str(self.operator_id)), ("auth", auth), ("timestamp", str(ts))]
