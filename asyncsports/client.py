"""Client: owns one Session and hangs the resource namespaces on itself."""

from __future__ import annotations

import datetime as dt
import functools
import os
import warnings
from collections.abc import Callable, Mapping
from typing import Self

from asyncsports._http.config import Hook, Settings, Timeout
from asyncsports._http.request import QueryValue
from asyncsports._http.session import Session
from asyncsports._http.sharedlimit import SharedPacer
from asyncsports._http.transports.base import Transport
from asyncsports._wire.defaults import (
    DNS_TTL,
    MAX_BODY_SIZE,
    MAX_CONNECTIONS,
    MAX_ELEMENT_SIZE,
    RATE_LIMIT_KEY,
    SNOOKER_FEED,
    VENDOR,
)
from asyncsports._wire.retry import RetryPolicy
from asyncsports.auth import StreamingCredentials, Token
from asyncsports.resources.namespaces import Namespaces
from asyncsports.views import ClientWithJSON

__all__ = ["Client"]


def _timeout(timeout: Timeout | float | None) -> Timeout:
    if timeout is None:
        return Timeout()
    return timeout if isinstance(timeout, Timeout) else Timeout(timeout)


def _retry(retry: RetryPolicy | None, max_retries: int | None) -> RetryPolicy:
    if retry is not None and max_retries is not None:
        raise ValueError("max_retries, retry: pass one (retry=RetryPolicy(max_retries=...))")
    if max_retries is not None:
        return RetryPolicy(max_retries=max_retries)
    return retry or RetryPolicy()


class Client(Namespaces):
    """An asyncio client of the sports data service, the snooker proxy and the events listing.

    Use it as an async context manager; one client (one connection pool) serves any
    number of concurrent calls::

        async with Client("https://dde-api.data.imgarena.com", token="...") as client:
            async for fixture in client.fixtures.list("basketball", status="live"):
                print(fixture.name)

    ``token`` is a string or a sync or async callable returning one; a callable is
    asked at first use and once more after a 401. ``timeout`` is a :class:`Timeout` or
    a number of seconds for every phase (connect and read), as in httpx.
    ``max_retries`` or a whole ``retry`` policy (not both) sets the retries.
    ``rate_limit`` caps requests per second across every call of the client; with
    ``rate_limit_url`` (a ``redis://`` URL; extra ``redis``) the cap is one budget shared by
    every client, in any process or machine, naming the same URL and ``rate_limit_key``,
    and a 429 seen by one pauses them all. Should Redis be unreachable, the client warns
    and keeps to ``rate_limit / rate_limit_sharers`` on its own.
    ``dns_ttl`` is short by default because the streaming host's addresses change
    without notice. ``max_body_size`` bounds a whole body after content decoding (64 MiB),
    ``max_element_size`` one element of a streamed list (16 MiB); a stream as a whole
    has no size bound, only a pace (``Timeout.min_rate``). ``live_url`` is the streams host
    of the live feeds (``client.live``, websockets). The settings are validated once and
    kept in :attr:`settings`.
    ``default_query`` and ``default_headers`` go with every request (as in openai-python):
    a method's own parameters and headers, and its ``extra_query`` and ``extra_headers``,
    take precedence; ``default_headers`` replace the client's own (``Accept``, say).
    ``record`` (a file name; gzip when it ends ``.gz``) records every request, answer and
    live message to it, secrets removed, for ``Emulator(replay=...)`` to serve. A file
    that holds anything already is refused when the client opens (FileExistsError),
    never replaced, unless ``record_overwrite=True``.
    ``transport`` makes the client's :class:`~asyncsports.transports.Transport` from its
    settings (a transport class fits as it is); the default is aiohttp's
    (:mod:`asyncsports.transports`). A recording (``record``) wraps it.
    ``tracing=True`` sends spans and metrics to the global OpenTelemetry providers (extra
    ``otel``; :func:`asyncsports.telemetry.instrument`).
    """

    def __init__(
        self,
        base_url: str,
        *,
        token: Token | None = None,
        vendor: str = VENDOR,
        snooker_feed: str = SNOOKER_FEED,
        streaming_url: str | None = None,
        streaming_credentials: StreamingCredentials | None = None,
        live_url: str | None = None,
        timeout: Timeout | float | None = None,
        max_retries: int | None = None,
        retry: RetryPolicy | None = None,
        rate_limit: float | None = None,
        rate_limit_url: str | None = None,
        rate_limit_key: str = RATE_LIMIT_KEY,
        rate_limit_sharers: int = 1,
        max_connections: int = MAX_CONNECTIONS,
        dns_ttl: int = DNS_TTL,
        max_body_size: int | None = MAX_BODY_SIZE,
        max_element_size: int | None = MAX_ELEMENT_SIZE,
        on_request: Hook | None = None,
        on_response: Hook | None = None,
        verify_ssl: bool = True,
        default_query: Mapping[str, QueryValue] | None = None,
        default_headers: Mapping[str, str | None] | None = None,
        record: str | os.PathLike[str] | None = None,
        record_overwrite: bool = False,
        tracing: bool = False,
        transport: Callable[[Settings], Transport] | None = None,
    ) -> None:
        # Settings' fields, by name and in its order (tests/client/test_settings_declared.py
        # checks this signature against them); timeout and retry take friendlier forms here.
        self.settings = Settings(
            base_url=base_url,
            token=token,
            vendor=vendor,
            snooker_feed=snooker_feed,
            streaming_url=streaming_url,
            streaming_credentials=streaming_credentials,
            live_url=live_url,
            timeout=_timeout(timeout),
            retry=_retry(retry, max_retries),
            rate_limit=rate_limit,
            rate_limit_url=rate_limit_url,
            rate_limit_key=rate_limit_key,
            rate_limit_sharers=rate_limit_sharers,
            max_connections=max_connections,
            dns_ttl=dns_ttl,
            max_body_size=max_body_size,
            max_element_size=max_element_size,
            on_request=on_request,
            on_response=on_response,
            verify_ssl=verify_ssl,
            default_query=default_query,
            default_headers=default_headers,
        )
        """The client's validated settings."""
        s = self.settings
        self._shared = _shared_pacer(s)
        net = _transport(s, transport, record, record_overwrite)
        Namespaces.__init__(self, Session(s, limiter=self._shared, transport=net))
        if tracing:
            from asyncsports.telemetry import instrument

            instrument(self)

    @functools.cached_property
    def with_json(self) -> ClientWithJSON:
        """The same namespaces and methods, each record a ``RawRecord(value, json)``:
        ``json`` its bytes as the service sent them (:mod:`asyncsports.views`).

        ``client.with_json.actions.list(sport, fixture_id)`` yields pairs where
        ``client.actions.list(sport, fixture_id)`` yields actions; made at first use.
        """
        return ClientWithJSON(self)

    @property
    def base_url(self) -> str:
        """The data service's URL, without a trailing slash."""
        return self.settings.base_url

    @property
    def streaming_url(self) -> str | None:
        """The live stream events host, without a trailing slash, if configured."""
        return self.settings.streaming_url

    @property
    def live_url(self) -> str | None:
        """The streams host of the live feeds, without a trailing slash, if configured."""
        return self.settings.live_url

    @property
    def is_open(self) -> bool:
        """Whether the client can send requests."""
        return self._session.is_open

    @property
    def requests_sent(self) -> int:
        """Requests sent so far (every attempt, retries included), answered or not."""
        return self._session.requests

    @property
    def retries(self) -> int:
        """Retries made so far."""
        return self._session.retries

    @property
    def server_date(self) -> dt.datetime | None:
        """The ``Date`` header of the last response (UTC): the service's clock as last
        seen, to the second. None before any response, or when the last one had no
        sensible ``Date`` (absent, unparseable, before 2000 or from 2100 on)."""
        date = self._session.server_date()
        return None if date is None else dt.datetime.fromtimestamp(date, dt.UTC)

    def server_time(self) -> float | None:
        """The service's time now, in epoch seconds (what ``time.time()`` says on its side):
        :attr:`server_date` plus the time since that response came; None when it is None.
        The mirror (:class:`~asyncsports.sync.Mirror`) takes "now" from it."""
        return self._session.server_time()

    def connections_in_use(self) -> int:
        """Pooled connections held right now: 0 once every call and listing is done."""
        return self._session.connections_in_use()

    async def open(self) -> Self:
        """Open the connection pool (``async with`` does this for you)."""
        await self._session.open()
        return self

    async def aclose(self) -> None:
        """Close the connection pool. Safe to call twice."""
        await self._session.close()
        if self._shared is not None:
            await self._shared.aclose()

    async def __aenter__(self) -> Self:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __del__(self) -> None:
        session = getattr(self, "_session", None)
        if session is not None and session.is_open:
            # source=self: with tracemalloc on (python -X tracemalloc), the warning
            # shows where this client was created, at no cost to every construction.
            warnings.warn(
                f"unclosed {self!r}: use 'async with Client(...)' or await client.aclose()",
                ResourceWarning,
                stacklevel=1,
                source=self,
            )

    def __repr__(self) -> str:
        state = "open" if self.is_open else "closed"
        return f"<asyncsports.Client {self.base_url} {state}>"


def _shared_pacer(s: Settings) -> SharedPacer | None:
    """The rate limit shared through Redis, when ``rate_limit_url`` asks for one."""
    if s.rate_limit_url is None or s.rate_limit is None:
        return None
    return SharedPacer(
        s.rate_limit, s.rate_limit_url, s.rate_limit_key, sharers=s.rate_limit_sharers
    )


def _transport(
    s: Settings,
    make: Callable[[Settings], Transport] | None,
    record: str | os.PathLike[str] | None,
    overwrite: bool,
) -> Transport | None:
    """The transport ``make`` makes (None: the session's default), wrapped in a recording
    when ``record`` names a file."""
    net = None if make is None else make(s)
    if record is None:
        return net
    # Imported here: a client that does not record never loads the recording format.
    from asyncsports._http.transports.aiohttp import AiohttpTransport
    from asyncsports._http.transports.record import RecordingTransport

    return RecordingTransport(net or AiohttpTransport(s), record, s, overwrite=overwrite)
