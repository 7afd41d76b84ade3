"""The one place that does network I/O.

:class:`Session` owns an aiohttp ClientSession and turns a :class:`~asyncsports._request.Request`
into a :class:`Response` (a whole body) or a :class:`StreamResponse` (a body read chunk by
chunk): headers and auth, timeouts, retries with backoff, the shared rate limit, and
mapping failures onto :mod:`asyncsports.errors`.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractContextManager, asynccontextmanager, nullcontext
from dataclasses import dataclass

import aiohttp
import anyio
import yarl
from aiolimiter import AsyncLimiter

from asyncsports._request import Request
from asyncsports._retry import RETRY_STATUSES, RetryPolicy, parse_retry_after
from asyncsports._version import __version__
from asyncsports.auth import StreamingCredentials, Token, TokenProvider
from asyncsports.errors import (
    APIError,
    BodyTooLargeError,
    RateLimitError,
    TransportError,
    error_from,
    redact,
)

__all__ = ["Call", "Hook", "RequestInfo", "Response", "Session", "StreamResponse", "Timeout"]

log = logging.getLogger("asyncsports")

USER_AGENT = f"asyncsports/{__version__} aiohttp/{aiohttp.__version__}"
_ERROR_BODY_LIMIT = 64 * 1024
_SECRET_PARAMS = frozenset({"auth", "token", "access_token"})


@dataclass(frozen=True)
class Timeout:
    """Time limits in seconds; None means no limit.

    ``connect`` bounds opening a connection, ``read`` the wait for each piece of a
    response, ``total`` one call with all its attempts and backoff waits.
    """

    connect: float | None = 10.0
    read: float | None = 30.0
    total: float | None = None


@dataclass(frozen=True, slots=True)
class RequestInfo:
    """What a hook sees of a request: the method, the URL with secrets redacted, the attempt."""

    method: str
    url: str
    attempt: int
    status: int | None = None
    elapsed: float | None = None


Hook = Callable[[RequestInfo], Awaitable[None] | None]


class Response:
    """A response whose body was read whole."""

    __slots__ = ("body", "headers", "status", "url")

    def __init__(self, status: int, headers: Mapping[str, str], url: str, body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.url = url
        self.body = body


class StreamResponse:
    """A response whose body is read chunk by chunk with :meth:`chunks`."""

    __slots__ = ("_resp", "headers", "status", "url")

    def __init__(self, resp: aiohttp.ClientResponse, url: str) -> None:
        self._resp = resp
        self.status = resp.status
        self.headers: Mapping[str, str] = resp.headers
        self.url = url

    async def chunks(self, size: int = 256 * 1024) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive, in pieces of at most ``size`` bytes."""
        try:
            async for chunk in self._resp.content.iter_chunked(size):
                yield chunk
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise TransportError(f"body broke off: {_describe(exc)}", url=self.url) from exc


def _describe(exc: BaseException) -> str:
    # aiohttp's messages may quote a URL with its query: redact it like ours.
    text = redact(exc)
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


class Session:
    """Sends requests for one client over one aiohttp connection pool.

    Not usable until :meth:`open`; :meth:`close` releases the pool.
    """

    def __init__(
        self,
        *,
        base_url: str,
        token: Token | None,
        vendor: str,
        streaming_url: str | None,
        streaming_credentials: StreamingCredentials | None,
        timeout: Timeout,
        retry: RetryPolicy,
        max_connections: int,
        rate_limit: float | None,
        dns_ttl: int,
        max_body_size: int | None,
        on_request: Hook | None = None,
        on_response: Hook | None = None,
        verify_ssl: bool = True,
        rng: random.Random | None = None,
    ) -> None:
        self._bases = {
            "data": base_url.rstrip("/"),
            "streaming": (streaming_url or "").rstrip("/"),
        }
        self._token = TokenProvider(token)
        self._credentials = streaming_credentials
        self._accept = f"application/vnd.{vendor}.dde.api+json;version=1"
        self._timeout = timeout
        self.retry = retry
        self._max_connections = max_connections
        # A bucket holds at least one request: below 1/s, one per 1/rate seconds.
        self._limiter = (
            AsyncLimiter(max(1.0, rate_limit), max(1.0, rate_limit) / rate_limit)
            if rate_limit
            else None
        )
        self._dns_ttl = dns_ttl
        self._max_body = max_body_size
        self._on_request = on_request
        self._on_response = on_response
        self._verify_ssl = verify_ssl
        self._rng = rng or random.Random()
        self._http: aiohttp.ClientSession | None = None
        self._paused_until = 0.0
        self.requests = 0
        self.retries = 0

    @property
    def is_open(self) -> bool:
        """Whether the session can send requests."""
        return self._http is not None and not self._http.closed

    async def open(self) -> None:
        """Create the connection pool. Must run inside the event loop that will use it."""
        if self.is_open:
            return
        connector = aiohttp.TCPConnector(
            limit=self._max_connections,
            ttl_dns_cache=self._dns_ttl,
            ssl=self._verify_ssl,
        )
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=self._timeout.connect, sock_read=self._timeout.read
        )
        self._http = aiohttp.ClientSession(
            connector=connector,
            timeout=timeout,
            headers={"User-Agent": USER_AGENT},
            raise_for_status=False,
            auto_decompress=True,
        )

    async def close(self) -> None:
        """Close the pool. Safe to call twice."""
        http, self._http = self._http, None
        if http is not None:
            await http.close()

    def connections_in_use(self) -> int:
        """How many pooled connections are acquired right now (0 when closed)."""
        if self._http is None or self._http.connector is None:
            return 0
        acquired = getattr(self._http.connector, "_acquired", ())
        return len(acquired)

    def call(self) -> Call:
        """A fresh budget for one call: its retries, attempts and deadline."""
        return Call(self._timeout.total)

    async def get(self, req: Request) -> Response:
        """Send ``req`` and read the whole body, retrying as the policy allows.

        ``Timeout.total`` bounds everything: attempts, waits and reading the body.
        """
        call = self.call()
        try:
            with call.scope():
                while True:
                    async with self._attempts(req, call) as (resp, url):
                        try:
                            body = await self._read(resp, url)
                        except BodyTooLargeError:
                            raise
                        except TransportError as exc:
                            failure = exc
                        else:
                            return Response(resp.status, resp.headers, url, body)
                    # The body broke off: ask again, as for any failure to connect.
                    if not await self.backoff(failure, call):
                        raise failure
        except TimeoutError as exc:
            raise call.timed_out(req.path) from exc

    @asynccontextmanager
    async def stream(self, req: Request, call: Call | None = None) -> AsyncIterator[StreamResponse]:
        """Send ``req`` and hand over the response with its body unread.

        Status errors are retried as in :meth:`get`; a body that breaks off midway
        raises TransportError from :meth:`StreamResponse.chunks` (the caller resumes,
        with the same ``call`` so that retries and the deadline stay one budget). The
        deadline bounds getting the response, not the caller's time with the body.
        """
        async with self._attempts(req, call or self.call()) as (resp, url):
            yield StreamResponse(resp, url)

    async def _read(self, resp: aiohttp.ClientResponse, url: str) -> bytes:
        limit = self._max_body
        if limit is not None and (resp.content_length or 0) > limit:
            raise BodyTooLargeError(
                f"body of {resp.content_length} bytes exceeds max_body_size={limit}",
                limit=limit,
                url=url,
            )
        try:
            if limit is None or resp.content_length is not None:
                # The size is known (and was checked above): one read, no chunk loop.
                return await resp.read()
            parts: list[bytes] = []
            size = 0
            async for chunk in resp.content.iter_chunked(256 * 1024):
                size += len(chunk)
                if size > limit:
                    raise BodyTooLargeError(
                        f"body exceeds max_body_size={limit}", limit=limit, url=url
                    )
                parts.append(chunk)
            return b"".join(parts)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise TransportError(f"body broke off: {_describe(exc)}", url=url) from exc

    def _headers(self, req: Request, token: str | None) -> dict[str, str]:
        if req.host == "streaming":
            return {"Accept": "application/json"}
        headers = {"Accept": self._accept, "Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        return headers

    def _params(self, req: Request) -> list[tuple[str, str]]:
        params = list(req.params)
        if req.host == "streaming":
            if self._credentials is None:
                raise ValueError("streaming_credentials: required for the live stream events")
            params = self._credentials.params() + params
        return params

    def _base(self, req: Request) -> str:
        base = self._bases[req.host]
        if not base:
            raise ValueError(f"{req.host}_url: not configured for {req.path}")
        return base

    @asynccontextmanager
    async def _attempts(
        self, req: Request, call: Call
    ) -> AsyncIterator[tuple[aiohttp.ClientResponse, str]]:
        """Yield the first successful response; retry, refresh the token or raise."""
        http = self._http
        if http is None or http.closed:
            raise RuntimeError("the client is not open: use 'async with Client(...) as client:'")
        base = self._base(req)
        while True:
            call.attempts += 1
            token = await self._token.get() if req.host == "data" else None
            await self._wait_turn()
            url = base + req.path
            params = self._params(req)
            shown = url
            if self._on_request is not None:
                shown = redact(yarl.URL(url).with_query(params))
                await _call(self._on_request, RequestInfo("GET", shown, call.attempts))
            failure: BaseException
            retry_after: float | None = None
            sent = time.monotonic()
            try:
                pending = http.get(
                    url, params=params, headers=self._headers(req, token), allow_redirects=False
                )
                left = call.left()
                if left is None:
                    resp = await pending
                else:
                    with anyio.fail_after(left):
                        resp = await pending
            except (aiohttp.ClientSSLError, aiohttp.InvalidURL) as exc:
                # Never better on a second try: a certificate or an address is wrong.
                raise _final(exc, redact(url), call.attempts) from exc
            except (aiohttp.ClientError, TimeoutError) as exc:
                failure = exc
                shown = redact(url)
            else:
                # Only the streaming host carries secrets in its query.
                shown = redact(resp.url) if req.host == "streaming" else str(resp.url)
                self.requests += 1
                if self._on_response is not None:
                    info = RequestInfo(
                        "GET", shown, call.attempts, resp.status, time.monotonic() - sent
                    )
                    await _call(self._on_response, info)
                status = resp.status
                if status < 300:
                    try:
                        yield resp, shown
                    finally:
                        resp.release()
                    return
                try:
                    raw = await resp.content.read(_ERROR_BODY_LIMIT)
                except (aiohttp.ClientError, TimeoutError):
                    raw = b""
                finally:
                    resp.release()
                retry_after = parse_retry_after(resp.headers.get("Retry-After"), time.time())
                error = error_from(
                    status,
                    resp.headers,
                    raw,
                    method="GET",
                    url=shown,
                    attempts=call.attempts,
                    retry_after=retry_after,
                )
                if status == 401 and not call.refreshed and self._token.refreshable:
                    call.refreshed = True
                    self._token.invalidate(token)
                    log.info("401 from %s: asking the token provider again", shown)
                    continue
                if status not in RETRY_STATUSES:
                    raise error
                failure = error
            wait = self.retry.delay(call.retries, retry_after, self._rng)
            left = call.left()
            if wait is None or (left is not None and wait >= left):
                raise _final(failure, shown, call.attempts)
            if isinstance(failure, RateLimitError):
                # The whole client slows down after a 429, not only this call.
                self._paused_until = max(self._paused_until, time.monotonic() + wait)
            log.warning(
                "retrying GET %s in %.2fs (attempt %d failed: %s)",
                shown,
                wait,
                call.attempts,
                failure if isinstance(failure, APIError) else _describe(failure),
            )
            self.retries += 1
            call.retries += 1
            await anyio.sleep(wait)

    async def backoff(self, failure: TransportError, call: Call) -> bool:
        """Wait before asking again for a body that broke off midway.

        False, without waiting, when the call has no retry or time left (the failure
        then carries the call's attempt count). The caller resumes the body where it broke.
        """
        wait = self.retry.delay(call.retries, None, self._rng)
        left = call.left()
        if wait is None or (left is not None and wait >= left):
            failure.attempts = call.attempts
            return False
        log.warning("asking again in %.2fs: %s", wait, failure)
        self.retries += 1
        call.retries += 1
        await anyio.sleep(wait)
        return True

    async def _wait_turn(self) -> None:
        pause = self._paused_until - time.monotonic()
        if pause > 0:
            await anyio.sleep(pause)
        if self._limiter is not None:
            await self._limiter.acquire()


class Call:
    """The budget of one call across its attempts: retries used, attempts made, deadline."""

    __slots__ = ("attempts", "deadline", "refreshed", "retries")

    def __init__(self, total: float | None) -> None:
        self.attempts = 0
        self.retries = 0
        self.refreshed = False
        self.deadline = None if total is None else time.monotonic() + total

    def left(self) -> float | None:
        """Seconds left before the deadline, or None without one."""
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def scope(self) -> AbstractContextManager[object]:
        """A scope that raises TimeoutError at the deadline (none without one)."""
        left = self.left()
        return nullcontext() if left is None else anyio.fail_after(left)

    def timed_out(self, path: str) -> TransportError:
        """The error for a call that ran out of time."""
        return TransportError("timed out (Timeout.total)", url=path, attempts=self.attempts)


def _final(failure: BaseException, url: str, attempts: int) -> BaseException:
    if isinstance(failure, APIError):
        failure.attempts = attempts
        return failure
    if isinstance(failure, TimeoutError):
        what = "timed out"
    else:
        what = f"connection failed: {_describe(failure)}"
    error = TransportError(what, url=url, attempts=attempts)
    error.__cause__ = failure
    return error


async def _call(hook: Hook, info: RequestInfo) -> None:
    result = hook(info)
    if result is not None:
        await result
