"""Client: owns one Session and hangs the resource namespaces on itself."""

from __future__ import annotations

import sys
import warnings
from types import TracebackType
from typing import Self

from asyncsports._retry import RetryPolicy
from asyncsports._session import Hook, Session, Timeout
from asyncsports.auth import StreamingCredentials, Token
from asyncsports.resources import (
    ActionsResource,
    EventsResource,
    FixturesResource,
    SnookerResource,
    SquadsResource,
    StandingsResource,
    StatisticsResource,
)

__all__ = ["Client"]


class Client:
    """An asyncio client of the sports data service, the snooker proxy and the events listing.

    Use it as an async context manager; one client (one connection pool) serves any
    number of concurrent calls::

        async with Client("https://dde-api.data.imgarena.com", token="...") as client:
            async for fixture in client.fixtures.list("basketball", status="live"):
                print(fixture.name)

    ``token`` is a string or a sync or async callable returning one; a callable is
    asked at first use and once more after a 401. ``timeout`` is a :class:`Timeout` or
    a number of seconds for reads. ``rate_limit`` caps requests per second across every
    call of the client. ``dns_ttl`` is short by default because the streaming host's
    addresses change without notice.
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: Token | None = None,
        vendor: str = "imggaming",
        snooker_feed: str = "tvfeed",
        streaming_url: str | None = None,
        streaming_credentials: StreamingCredentials | None = None,
        timeout: Timeout | float | None = None,
        max_retries: int = 3,
        retry: RetryPolicy | None = None,
        rate_limit: float | None = None,
        max_connections: int = 100,
        dns_ttl: int = 10,
        max_body_size: int | None = 512 * 1024 * 1024,
        on_request: Hook | None = None,
        on_response: Hook | None = None,
        verify_ssl: bool = True,
    ) -> None:
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url: expected an http(s) URL, got {base_url!r}")
        if streaming_url is not None and not streaming_url.startswith(("http://", "https://")):
            raise ValueError(f"streaming_url: expected an http(s) URL, got {streaming_url!r}")
        if not vendor or not vendor.replace("-", "").isalnum():
            raise ValueError(f"vendor: expected a short name like 'imggaming', got {vendor!r}")
        if max_connections < 1:
            raise ValueError(f"max_connections: must be >= 1, got {max_connections}")
        if rate_limit is not None and rate_limit <= 0:
            raise ValueError(f"rate_limit: must be > 0 requests per second, got {rate_limit}")
        if isinstance(timeout, int | float):
            timeout = Timeout(read=float(timeout))
        self.base_url = base_url.rstrip("/")
        self.streaming_url = streaming_url.rstrip("/") if streaming_url else None
        self._session = Session(
            base_url=self.base_url,
            token=token,
            vendor=vendor,
            streaming_url=self.streaming_url,
            streaming_credentials=streaming_credentials,
            timeout=timeout or Timeout(),
            retry=retry or RetryPolicy(max_retries=max_retries),
            max_connections=max_connections,
            rate_limit=rate_limit,
            dns_ttl=dns_ttl,
            max_body_size=max_body_size,
            on_request=on_request,
            on_response=on_response,
            verify_ssl=verify_ssl,
        )
        self.fixtures = FixturesResource(self._session)
        """Competition fixtures."""
        self.squads = SquadsResource(self._session)
        """Squads per season or team."""
        self.actions = ActionsResource(self._session)
        """Fixture action timelines."""
        self.standings = StandingsResource(self._session)
        """Team standings."""
        self.statistics = StatisticsResource(self._session)
        """Fixture statistics packets."""
        self.snooker = SnookerResource(self._session, snooker_feed)
        """The snooker proxy."""
        self.events = EventsResource(self._session)
        """Live stream events."""
        frame = sys._getframe(1)
        self._created_at = f"{frame.f_code.co_filename}:{frame.f_lineno}"

    @property
    def is_open(self) -> bool:
        """Whether the client can send requests."""
        return self._session.is_open

    @property
    def requests_sent(self) -> int:
        """Responses received so far, retries included."""
        return self._session.requests

    @property
    def retries(self) -> int:
        """Retries made so far."""
        return self._session.retries

    async def open(self) -> Self:
        """Open the connection pool (``async with`` does this for you)."""
        await self._session.open()
        return self

    async def aclose(self) -> None:
        """Close the connection pool. Safe to call twice."""
        await self._session.close()

    async def __aenter__(self) -> Self:
        return await self.open()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __del__(self) -> None:
        session = getattr(self, "_session", None)
        if session is not None and session.is_open:
            warnings.warn(
                f"unclosed asyncsports.Client created at {self._created_at}: "
                "use 'async with Client(...)' or await client.aclose()",
                ResourceWarning,
                stacklevel=1,
                source=self,
            )

    def __repr__(self) -> str:
        state = "open" if self.is_open else "closed"
        return f"<asyncsports.Client {self.base_url} {state}>"
