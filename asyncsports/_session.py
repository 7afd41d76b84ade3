"""The one place that does network I/O.

:class:`Session` owns an aiohttp ClientSession and runs every call through one loop
(:meth:`Session.stream`): send an attempt, hand a good response to the caller's body
reader, and on any failure (an error status, a connection failure, a body that broke
off midway) ask :func:`asyncsports._retry.decide` what to do next. Whole bodies
(:meth:`Session.get`) and streamed bodies use that same loop, so one budget of
retries and one deadline cover a call however it fails.
"""

from __future__ import annotations

import builtins
import logging
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from typing import TypeVar

import aiohttp
import anyio
import yarl
from aiohttp.helpers import sentinel
from aiolimiter import AsyncLimiter

from asyncsports._config import Hook, RequestInfo, Settings, Timeout
from asyncsports._request import Request, target
from asyncsports._retry import Call, Outcome, decide, parse_retry_after
from asyncsports._version import __version__
from asyncsports.auth import TokenProvider
from asyncsports.errors import (
    AsyncSportsError,
    BodyTooLargeError,
    TimeoutError,
    TransportError,
    error_from,
    redact,
)

__all__ = ["Hook", "RequestInfo", "Response", "Session", "StreamResponse", "Timeout"]

log = logging.getLogger("asyncsports")
T = TypeVar("T")

USER_AGENT = f"asyncsports/{__version__} aiohttp/{aiohttp.__version__}"
_ERROR_BODY_LIMIT = 64 * 1024
_CHUNK = 256 * 1024
_BROKEN = Outcome()
_STALE = Outcome(stale=True)
builtin_timeout = builtins.TimeoutError
_FINAL = Outcome(final=True)


class Response:
    """A response whose body was read whole."""

    __slots__ = ("body", "headers", "status", "url")

    def __init__(self, status: int, headers: Mapping[str, str], url: str, body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.url = url
        self.body = body


class StreamResponse:
    """A good response whose body is still to be read, by :meth:`chunks` or :meth:`read`.

    A failure while reading raises :class:`TransportError` (or its :class:`TimeoutError`),
    which the session's loop takes as a body that broke off. Nothing of aiohttp's own
    exception is kept: its request headers hold the token.
    """

    __slots__ = ("_deadline", "_limits", "_resp", "attempts", "headers", "status", "url")

    def __init__(
        self,
        resp: aiohttp.ClientResponse,
        url: str,
        attempts: int,
        deadline: float | None,
        limits: _Limits,
    ) -> None:
        self._resp = resp
        self._deadline = deadline
        self._limits = limits
        self.status = resp.status
        self.headers: Mapping[str, str] = resp.headers
        self.url = url
        self.attempts = attempts

    def _broke(self, exc: BaseException) -> TransportError:
        return _transport(exc, self.url, self.attempts, self._deadline, "body broke off")

    async def chunks(self, size: int = _CHUNK) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive, in pieces of at most ``size`` bytes.

        A body slower than ``Timeout.min_rate`` over a window of ``Timeout.read``
        seconds is stalled: a :class:`TimeoutError`, resumed like one that broke off.
        """
        pace = self._limits.pace()
        try:
            async for chunk in self._resp.content.iter_chunked(size):
                if pace is not None and pace.slow(len(chunk), time.monotonic()):
                    break
                yield chunk
            else:
                return
        except (aiohttp.ClientError, builtin_timeout) as exc:
            error = self._broke(exc)
        else:
            assert pace is not None
            error = TimeoutError(pace.describe(), url=self.url, attempts=self.attempts)
        # Raised here, outside the handler: no aiohttp exception rides along as context.
        raise error

    async def read(self) -> bytes:
        """The whole body, within ``max_body_size``, ``Timeout.body`` and the call's deadline.

        The size is counted after content decoding, so a compressed bomb is refused as
        it inflates, not after.
        """
        try:
            if self._deadline is None:
                return await self._read()
            with anyio.fail_after(max(0.0, self._deadline - time.monotonic())):
                return await self._read()
        except (aiohttp.ClientError, builtin_timeout) as exc:
            error = self._broke(exc)
        raise error

    async def _read(self) -> bytes:
        limit, resp = self._limits.body, self._resp
        length = resp.content_length
        plain = resp.headers.get("Content-Encoding", "identity").lower() == "identity"
        if limit is None or (plain and length is not None and length <= limit):
            return await resp.read()
        if plain and length is not None:
            raise self._too_large(f"body of {length} bytes exceeds max_body_size={limit}")
        parts: list[bytes] = []
        size = 0
        async for chunk in resp.content.iter_chunked(_CHUNK):
            size += len(chunk)
            if size > limit:
                raise self._too_large(f"body exceeds max_body_size={limit} (decoded)")
            parts.append(chunk)
        return b"".join(parts)

    def _too_large(self, text: str) -> BodyTooLargeError:
        return BodyTooLargeError(text, limit=self._limits.body or 0, url=self.url)

    def release(self) -> None:
        """Give the connection back to the pool (or drop it if the body is unread)."""
        self._resp.release()


class _Limits:
    """What a body may take: bytes (whole, per element) and the slowest pace of a stream."""

    __slots__ = ("body", "element", "min_rate", "window")

    def __init__(self, settings: Settings) -> None:
        self.body = settings.max_body_size
        self.element = settings.max_element_size
        self.min_rate = settings.timeout.min_rate
        self.window = settings.timeout.read or 30.0

    def pace(self) -> _Pace | None:
        return None if self.min_rate is None else _Pace(self.min_rate, self.window)


class _Pace:
    """Whether a stream keeps up ``rate`` bytes a second, over windows of ``window`` seconds."""

    __slots__ = ("got", "rate", "since", "window")

    def __init__(self, rate: float, window: float) -> None:
        self.rate = rate
        self.window = window
        self.since = time.monotonic()
        self.got = 0

    def slow(self, n: int, now: float) -> bool:
        """Count ``n`` bytes arrived at ``now``; True once a whole window fell short."""
        self.got += n
        if now - self.since < self.window:
            return False
        if self.got < self.rate * (now - self.since):
            return True
        self.since, self.got = now, 0
        return False

    def describe(self) -> str:
        return (
            f"stalled: the body gave fewer than {self.rate:g} bytes a second over "
            f"{self.window:g} s (Timeout.min_rate)"
        )


def _describe(exc: BaseException) -> str:
    # aiohttp's messages may quote a URL with its query: redact it like ours.
    text = redact(exc)
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


class _Failed:
    """An attempt that got no good response: the error to raise and what the retry sees."""

    __slots__ = ("error", "outcome", "token")

    def __init__(self, error: AsyncSportsError, outcome: Outcome, token: str | None) -> None:
        self.error = error
        self.outcome = outcome
        self.token = token


async def _whole(resp: StreamResponse) -> AsyncIterator[Response]:
    yield Response(resp.status, resp.headers, resp.url, await resp.read())


class Session:
    """Sends requests for one client over one aiohttp connection pool.

    Not usable until :meth:`open`; :meth:`close` releases the pool.
    """

    def __init__(self, settings: Settings, *, rng: random.Random | None = None) -> None:
        self.settings = settings
        self.retry = settings.retry
        self._bases = {"data": settings.base_url, "streaming": settings.streaming_url or ""}
        self._token = TokenProvider(settings.token)
        self._credentials = settings.streaming_credentials
        accept = f"application/vnd.{settings.vendor}.dde.api+json;version=1"
        self._data_headers = {"Accept": accept, "Content-Type": "application/json"}
        self._stream_headers = {"Accept": "application/json"}
        self._auth: tuple[str | None, dict[str, str]] = (None, self._data_headers)
        self._total = settings.timeout.total
        self._limits = _Limits(settings)
        t = settings.timeout
        # A whole body is bounded by aiohttp's own total timer (Timeout.body), which runs
        # until the body is read; a stream has no such bound, only its pace.
        self._whole_timeout = aiohttp.ClientTimeout(
            total=t.body, sock_connect=t.connect, sock_read=t.read
        )
        rate = settings.rate_limit
        # A bucket holds at least one request: below 1/s, one per 1/rate seconds.
        self._limiter = AsyncLimiter(max(1.0, rate), max(1.0, rate) / rate) if rate else None
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
        s = self.settings
        connector = aiohttp.TCPConnector(
            limit=s.max_connections, ttl_dns_cache=s.dns_ttl, ssl=s.verify_ssl
        )
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=s.timeout.connect, sock_read=s.timeout.read
        )
        http = self._http = aiohttp.ClientSession(
            connector=connector,
            timeout=timeout,
            headers={"User-Agent": USER_AGENT},
            raise_for_status=False,
            auto_decompress=True,
        )
        if hasattr(http, "_retry_connection"):
            # aiohttp would re-send a GET once, unseen, when a pooled connection turns out
            # closed; the retry engine does that instead (decide's "resend"), so that
            # every request on the wire is counted in attempts and requests_sent.
            http._retry_connection = False

    async def close(self) -> None:
        """Close the pool. Safe to call twice."""
        http, self._http = self._http, None
        if http is not None:
            await http.close()

    def connections_in_use(self) -> int:
        """How many pooled connections are acquired right now (0 when closed)."""
        if self._http is None or self._http.connector is None:
            return 0
        return len(getattr(self._http.connector, "_acquired", ()))

    async def get(self, req: Request) -> Response:
        """Send ``req`` and read the whole body, retrying as the policy allows.

        ``Timeout.total`` bounds everything: attempts, waits and reading the body.
        """
        responses = self.stream(req, _whole, whole=True)
        try:
            return await anext(responses)
        finally:
            await responses.aclose()

    async def stream(
        self,
        req: Request,
        body: Callable[[StreamResponse], AsyncIterator[T]],
        *,
        whole: bool = False,
    ) -> AsyncGenerator[T, None]:
        """Send ``req`` and yield what ``body`` reads from each good response: the one loop.

        ``body`` is called once per good response; if reading breaks off midway (it
        raises :class:`TransportError`), the request is sent again after the policy's
        wait and ``body`` is called with the new response, so it must carry on from
        where the last one stopped. Retries, the token refresh and ``Timeout.total``
        are one budget for the whole call; the deadline bounds getting responses and
        waiting, not the caller's time between items.
        """
        http = self._http
        if http is None or http.closed:
            raise RuntimeError("the client is not open: use 'async with Client(...) as client:'")
        base = self._bases[req.host]
        if not base:
            raise ValueError(f"{req.host}_url: not configured for {req.path}")
        total = self._total
        call = Call(total, time.monotonic() if total is not None else 0.0)
        while True:
            sent = await self._send(http, base, req, call, whole)
            if isinstance(sent, _Failed):
                failed = sent
            else:
                try:
                    async for item in body(sent):
                        yield item
                    return
                except TransportError as exc:
                    failed = _Failed(exc, _BROKEN, None)
                finally:
                    sent.release()
            await self._after(failed, call)

    async def _after(self, failed: _Failed, call: Call) -> None:
        """Decide after a failed attempt: wait (and maybe pause the client), refresh or raise."""
        decision = decide(
            failed.outcome,
            call,
            self.retry,
            now=time.monotonic(),
            refreshable=self._token.refreshable,
            rng=self._rng,
        )
        error = failed.error
        if decision.action == "raise":
            raise error
        call.apply(decision)
        url = getattr(error, "url", "")
        if decision.action == "refresh":
            self._token.invalidate(failed.token)
            log.info("401 from %s: asking the token provider again", url)
            return
        if decision.action == "resend":
            log.info("pooled connection to %s was closed: sending again at once", url)
            return
        if decision.pause:
            # The whole client slows down after a 429, not only this call.
            self._paused_until = max(self._paused_until, time.monotonic() + decision.wait)
        log.warning(
            "retrying GET %s in %.2fs (attempt %d failed: %s)",
            url,
            decision.wait,
            call.attempts,
            error,
        )
        self.retries += 1
        await anyio.sleep(decision.wait)

    async def _send(
        self, http: aiohttp.ClientSession, base: str, req: Request, call: Call, whole: bool
    ) -> StreamResponse | _Failed:
        """One attempt: wait for the budget, send, and classify what came back."""
        data = req.host == "data"
        if data:
            token = await self._token.get()
            if token is None:
                raise ValueError("token: the sports data service needs one: Client(token=...)")
            headers = self._headers(token)
        else:
            token, headers = None, self._stream_headers
        if self._paused_until or self._limiter is not None:
            await self._wait_turn()
        if data:
            url = base + target(req)
            shown = url
        else:
            if self._credentials is None:
                raise ValueError("streaming_credentials: required for the live stream events")
            url = base + target(req, self._credentials.params())
            shown = redact(url)
        call.attempts += 1
        attempt = call.attempts
        on_request = self.settings.on_request
        if on_request is not None:
            await _call(on_request, RequestInfo("GET", shown, attempt))
        started = time.monotonic()
        self.requests += 1
        try:
            pending = http.get(
                yarl.URL(url, encoded=True),
                headers=headers,
                allow_redirects=False,
                timeout=self._whole_timeout if whole else sentinel,
            )
            if call.deadline is None:
                resp = await pending
            else:
                with anyio.fail_after(call.left(started) or 0.0):
                    resp = await pending
        except (aiohttp.ClientSSLError, aiohttp.InvalidURL) as exc:
            # Never better on a second try: a certificate or an address is wrong.
            return _Failed(_transport(exc, shown, attempt, None), _FINAL, token)
        except aiohttp.ClientResponseError as exc:
            # The answer could not be read as HTTP (a content encoding we cannot decode,
            # malformed headers): the same server would say the same again.
            what = "the response could not be read"
            return _Failed(_transport(exc, shown, attempt, None, what), _FINAL, token)
        except aiohttp.ServerDisconnectedError as exc:
            return _Failed(_transport(exc, shown, attempt, call.deadline), _STALE, token)
        except (aiohttp.ClientError, builtin_timeout) as exc:
            return _Failed(_transport(exc, shown, attempt, call.deadline), _BROKEN, token)
        try:
            on_response = self.settings.on_response
            if on_response is not None:
                info = RequestInfo("GET", shown, attempt, resp.status, time.monotonic() - started)
                await _call(on_response, info)
            if resp.status < 300:
                return StreamResponse(resp, shown, attempt, call.deadline, self._limits)
            return await self._failure(resp, shown, attempt, token)
        except BaseException:
            resp.release()
            raise

    async def _failure(
        self, resp: aiohttp.ClientResponse, shown: str, attempt: int, token: str | None
    ) -> _Failed:
        try:
            raw = await resp.content.read(_ERROR_BODY_LIMIT)
        except (aiohttp.ClientError, builtin_timeout):
            raw = b""
        finally:
            resp.release()
        retry_after = parse_retry_after(resp.headers.get("Retry-After"), time.time())
        error = error_from(
            resp.status,
            resp.headers,
            raw,
            method="GET",
            url=shown,
            attempts=attempt,
            retry_after=retry_after,
        )
        return _Failed(error, Outcome(resp.status, retry_after), token)

    def _headers(self, token: str) -> dict[str, str]:
        # One dict per token, not one per request.
        cached, headers = self._auth
        if cached != token:
            headers = {**self._data_headers, "Authorization": f"Bearer {token}"}
            self._auth = (token, headers)
        return headers

    async def _wait_turn(self) -> None:
        pause = self._paused_until - time.monotonic()
        if pause > 0:
            await anyio.sleep(pause)
        if self._limiter is not None:
            await self._limiter.acquire()


def _transport(
    exc: BaseException,
    url: str,
    attempts: int,
    deadline: float | None,
    what: str = "connection failed",
) -> TransportError:
    """The library error for an aiohttp failure or a time limit.

    Described, redacted, and not chained: aiohttp's exception carries the request's
    headers (the bearer token) and its full URL (the stream auth).
    """
    error: TransportError
    if isinstance(exc, builtin_timeout):
        late = deadline is not None and time.monotonic() >= deadline
        text = "timed out (Timeout.total)" if late else "timed out"
        error = TimeoutError(text, url=url, attempts=attempts)
    else:
        error = TransportError(f"{what}: {_describe(exc)}", url=url, attempts=attempts)
    error.__suppress_context__ = True
    return error


async def _call(hook: Hook, info: RequestInfo) -> None:
    result = hook(info)
    if result is not None:
        await result
