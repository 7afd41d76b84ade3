"""The one place that does network I/O.

:class:`Session` reaches the network through a :class:`~asyncsports._http.transports.base.Transport`
only (aiohttp's by default). Every call goes through one loop,
:meth:`Session._exchange`, a plain coroutine parameterised by how a good response's body
is consumed (``consume``). The loop has two steps, each in one place:

- an attempt is begun in :meth:`Session.begin` (the client's turn, the token or the
  stream credentials, URL and headers, the ``on_request`` hook, the count), sent in
  :meth:`Session._attempt` (and its ``_send``), what came back classified (an error
  status, a connection failure) and a good response handed to ``consume``; a body that
  breaks off while consumed is a failed attempt like any other. ``Timeout.total`` is
  one ``asyncio`` timeout around the attempt, entered only when a deadline is set;
- a failure is decided in :meth:`Session.after`, which asks the pure
  :func:`asyncsports._wire.retry.decide`: wait (and pause the client after a 429), refresh
  the token, or raise. One :class:`~asyncsports._wire.retry.Call` carries the attempts,
  retries and deadline of the whole call.

A whole body (:meth:`Session.read`) is ``_exchange`` with a ``consume`` that reads it
(:meth:`StreamResponse.whole`): one coroutine per request, no generator or context
manager on the way. A streamed body (:meth:`Session.stream`) is ``_exchange`` with a
``consume`` that keeps the response open; the generator reads it, and when reading
breaks off it hands the failure back to ``_exchange`` with the same ``Call``, which
decides and sends again: resuming mid-body is another turn of the same loop under the
same budget. A live connection (:mod:`asyncsports._http.connection`) is begun by the same
:meth:`Session.begin` and its failures decided by the same :meth:`Session.after`; its
reconnects ask the same pure decision (:meth:`Session.reconnect`, over
:mod:`asyncsports._wire.live.reconnect`).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, TypeVar

from asyncsports._http.bodies import Response, StreamResponse, builtin_timeout, transport
from asyncsports._http.config import Hook, Limits, RequestInfo, Settings, Timeout
from asyncsports._http.observer import Observer
from asyncsports._http.ratelimit import Limiter, Pacer
from asyncsports._http.request import Request, merged_headers, target
from asyncsports._http.transports.aiohttp import AiohttpTransport
from asyncsports._http.transports.base import Reply, Transport
from asyncsports._wire.clock import parse_date
from asyncsports._wire.live import reconnect as live_reconnect
from asyncsports._wire.retry import Call, Decision, Outcome, decide, parse_retry_after
from asyncsports._wire.secrets import Secrets, hide_url, is_credential
from asyncsports.auth import TokenProvider
from asyncsports.errors import AsyncSportsError, TransportError, error_from

if TYPE_CHECKING:
    from asyncsports._wire.live import ConnectionEnd

__all__ = [
    "Attempt",
    "Failure",
    "Hook",
    "RequestInfo",
    "Response",
    "Session",
    "StreamResponse",
    "Timeout",
]

log = logging.getLogger("asyncsports")
T = TypeVar("T")
E = TypeVar("E", bound=BaseException)

_ERROR_BODY_LIMIT = 64 * 1024
_BROKEN = Outcome()
_FINAL = Outcome(final=True)
_STALE = Outcome(stale=True)
_OUTCOMES = {"final": _FINAL, "unreadable": _FINAL, "stale": _STALE, "broken": _BROKEN}
_NO_TOKEN = {
    False: "token: the sports data service needs one: Client(token=...)",
    True: "token: the live feeds need one: Client(token=...)",
}


class Failure:
    """An attempt (a request, or a live connection) that got no good response: the error
    to raise, what the retry sees, and the token it sent (None: none)."""

    __slots__ = ("error", "outcome", "token")

    def __init__(self, error: AsyncSportsError, outcome: Outcome, token: str | None) -> None:
        self.error = error
        self.outcome = outcome
        self.token = token


class Attempt:
    """What one attempt needs, from :meth:`Session.begin`: its number in the call, its
    URL (``shown``: as hooks, logs and errors see it, its query's secrets hidden), its
    headers, and the secrets it sends (``token``, the stream credentials' ``auth``)."""

    __slots__ = ("_session", "auth", "headers", "number", "shown", "started", "token", "url")

    def __init__(
        self,
        session: Session,
        number: int,
        url: str,
        headers: Mapping[str, str] | None,
        token: str | None,
        auth: str | None,
    ) -> None:
        self._session = session
        self.number = number
        self.url = url
        self.shown = hide_url(url)
        self.headers = headers
        self.token = token
        self.auth = auth
        self.started = 0.0
        """When it was sent (time.monotonic()), read only with an ``on_response`` hook."""

    async def answered(self, status: int | None, at: float | None = None) -> None:
        """The answer came (``status``, None for a failed connect; ``at``: when,
        time.monotonic(), now if None): the client's ``on_response`` hook sees it, if any."""
        hook = self._session.settings.on_response
        if hook is not None:
            elapsed = (time.monotonic() if at is None else at) - self.started
            await _call(hook, RequestInfo("GET", self.shown, self.number, status, elapsed))


async def _opened(resp: StreamResponse) -> StreamResponse:
    """Consume a good response by keeping it open: the caller reads and releases it."""
    return resp


Consume = Callable[[StreamResponse], Awaitable[T]]
_WHOLE: Consume[Response] = StreamResponse.whole


def own_secrets(req: Request) -> list[str | None]:
    """The credentials ``req`` carries itself (``extra_headers``, ``extra_query``)."""
    return [v for k, v in (*req.headers, *req.params) if is_credential(k)]


class Session:
    """Sends requests for one client through one transport (its connection pools).

    ``transport`` defaults to :class:`~asyncsports._http.transports.aiohttp.AiohttpTransport`.
    Not usable until :meth:`open`; :meth:`close` releases the pools.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        rng: random.Random | None = None,
        limiter: Limiter | None = None,
        transport: Transport | None = None,
    ) -> None:
        self.settings = settings
        self.transport: Transport = transport or AiohttpTransport(settings)
        self.retry = settings.retry
        self._bases = {"data": settings.base_url, "streaming": settings.streaming_url or ""}
        self._token = TokenProvider(settings.token)
        self._credentials = settings.streaming_credentials
        accept = f"application/vnd.{settings.vendor}.dde.api+json;version=1"
        # default_headers replace the client's own; a request's extra_headers, both.
        defaults = settings.headers()
        own = {"Accept": accept, "Content-Type": "application/json"}
        self._data_headers = merged_headers(own, defaults)
        self._stream_headers = merged_headers({"Accept": "application/json"}, defaults)
        self._query = settings.query()
        # The secrets the client was configured with, beside its token and stream
        # credentials: credential headers (an Authorization in any case) and query values.
        self._configured = Secrets(
            v for k, v in (*defaults, *self._query) if v is not None and is_credential(k)
        )
        # The data headers with the bearer token: one dict per token, not one per request.
        self._auth_token: str | None = None
        self._auth_headers = self._data_headers
        self._total = settings.timeout.total
        self._limits = Limits(settings)
        self._on_request = settings.on_request
        self._on_response = settings.on_response
        rate = settings.rate_limit
        # Requests spaced 1/rate apart, no burst: never more than rate in any second.
        self._limiter: Limiter | None = limiter or (Pacer(rate) if rate else None)
        self._rng = rng or random.Random()
        # The transport while open: None is the one test of "open" on the request path.
        self._net: Transport | None = None
        self._paused_until = 0.0
        self.requests = 0
        self.retries = 0
        # The last response's headers and when they came (time.monotonic()): the service's
        # clock (server_time), parsed only when asked for.
        self.last_headers: Mapping[str, str] | None = None
        self.last_at = 0.0
        self._held = b""
        self.observer: Observer | None = None
        """Sees every attempt (asyncsports.telemetry); None: nothing is observed."""

    def server_date(self) -> float | None:
        """The ``Date`` of the last response, epoch seconds (None: no response yet, or no
        sensible ``Date`` in it; see :func:`~asyncsports._wire.clock.parse_date`)."""
        return None if self.last_headers is None else parse_date(self.last_headers.get("Date"))

    def server_time(self) -> float | None:
        """The service's time now, epoch seconds: the last ``Date`` plus the time since."""
        date = self.server_date()
        return None if date is None else date + (time.monotonic() - self.last_at)

    @property
    def is_open(self) -> bool:
        """Whether the session can send requests."""
        return self._net is not None and self._net.is_open

    async def open(self) -> None:
        """Create the connection pool. Must run inside the event loop that will use it."""
        if self.is_open:
            return
        self.transport.open()
        self._net = self.transport

    async def close(self) -> None:
        """Close the pools. Safe to call twice."""
        self._net = None
        self._held = b""
        await self.transport.close()

    def connections_in_use(self) -> int:
        """How many pooled connections are acquired right now (0 when closed)."""
        return self.transport.in_use()

    async def read(self, req: Request, parse: Callable[[Response], T]) -> T:
        """Send ``req``, read the whole body (retrying as the policy allows) and ``parse``
        it: what ``parse`` raises (a DecodeError quoting the body) carries none of the
        client's secrets (:meth:`scrub`). ``Timeout.total`` bounds the attempts, the waits
        and reading the body.
        """
        resp = await self._exchange(req, _WHOLE)
        # Held until the next body replaces it: a large body freed before the next one of
        # its size is read lets the C allocator hand that memory back to the system and
        # fault it in again (measured: a fifth of a 1,000-a-page walk's CPU, all system
        # time; holding it, as a plain read-then-decode loop does, costs one body).
        self._held = resp.body
        try:
            return parse(resp)
        except AsyncSportsError as exc:
            self.scrub(exc, *own_secrets(req))
            raise

    def scrub(self, error: E, *more: str | None) -> E:
        """``error`` with the client's secrets, and ``more`` (an attempt's own), hidden.

        The one place a secret is kept out of what a server sent back: every error of
        the session goes through it before it is logged or raised.
        """
        return self._secrets(*more).scrub(error)

    def hide(self, text: str, *more: str | None) -> str:
        """``text`` (a reason a live server gave, say) with the secrets of :meth:`scrub` hidden."""
        return self._secrets(*more).text(text)

    def _secrets(self, *more: str | None) -> Secrets:
        creds = self._credentials
        own = () if creds is None else (creds.auth, creds.secret)
        return self._configured.with_(self._token.current, *own, *more)

    async def stream(
        self, req: Request, body: Callable[[StreamResponse], AsyncIterator[T]]
    ) -> AsyncGenerator[T, None]:
        """Send ``req`` and yield what ``body`` reads from each good response.

        ``body`` is called once per good response; if reading breaks off midway (it
        raises :class:`TransportError`), the failure goes back to the session's loop,
        which decides as for any failed attempt and sends the request again; ``body`` is
        then called with the new response, so it must carry on from where the last one
        stopped. Retries, the token refresh and ``Timeout.total`` are one budget for the
        whole call; the deadline bounds getting responses and waiting, not the caller's
        time between items.
        """
        call = self._new_call()
        failed: Failure | None = None
        while True:
            resp = await self._exchange(req, _opened, call, failed)
            try:
                async for item in body(resp):
                    yield item
                return
            except TransportError as exc:
                failed = Failure(self.scrub(exc, *own_secrets(req)), _BROKEN, None)
            except AsyncSportsError as exc:
                # A DecodeError quoting the body.
                self.scrub(exc, *own_secrets(req))
                raise
            finally:
                resp.release()

    def _new_call(self) -> Call:
        """A new call's budget: its attempts, retries and ``Timeout.total`` deadline."""
        total = self._total
        return Call() if total is None else Call(total, time.monotonic())

    async def _exchange(
        self,
        req: Request,
        consume: Consume[T],
        call: Call | None = None,
        failed: Failure | None = None,
    ) -> T:
        """The one loop: attempts of ``req`` until one is consumed, a decision after each failure.

        ``consume`` takes a good response and returns the call's result; a
        :class:`TransportError` from it is a body that broke off. ``call`` and ``failed``
        continue a call whose last response failed after it was handed over (a streamed
        body): that failure is decided first.
        """
        net = self._net
        if net is None:
            raise RuntimeError("the client is not open: use 'async with Client(...) as client:'")
        base = self._bases[req.host]
        if not base:
            raise ValueError(f"{req.host}_url: not configured for {req.path}")
        if call is None:
            call = self._new_call()
        attempt = self._attempt if self.observer is None else self.observer.attempt(self._attempt)
        while True:
            if failed is not None:
                await self.after(failed, call)
            result = await attempt(net, base, req, call, consume)
            if not isinstance(result, Failure):
                return result
            failed = result

    async def begin(self, req: Request, base: str, number: int, *, live: bool = False) -> Attempt:
        """Begin attempt ``number`` of ``req`` at ``base``: the one step every attempt takes,
        a request's or a live connection's (``live``).

        Waits for the client's turn (a 429 pause, the rate limit: first, as stream
        credentials are signed for the moment they are sent, valid 30 s), takes the token
        (the data and live hosts) or signs the stream credentials, builds the URL and
        headers (a live connection's are its request's own: the transport adds the rest),
        runs the ``on_request`` hook and counts it in ``requests_sent``. The caller sends
        it, tells :meth:`Attempt.answered` what came back and hands a failure to
        :meth:`after`.
        """
        if self._paused_until or self._limiter is not None:
            await self._wait_turn()
        auth: str | None = None
        headers: Mapping[str, str] | None
        if live or req.host == "data":
            token = self._token.current
            if token is None:
                token = await self._token.get()
                if token is None:
                    raise ValueError(_NO_TOKEN[live])
            if live:
                headers = {k: v for k, v in req.headers if v is not None} or None
                url = base + req.target
            else:
                headers = self._auth_headers if token is self._auth_token else self._headers(token)
                if req.headers:
                    headers = merged_headers(headers, req.headers)
                url = base + (target(req, self._defaults(req)) if self._query else req.target)
        else:
            if self._credentials is None:
                raise ValueError("streaming_credentials: required for the live stream events")
            token, headers = None, self._stream_headers
            if req.headers:
                headers = merged_headers(headers, req.headers)
            params = self._credentials.params()
            auth = dict(params).get("auth")
            url = base + target(req, [*params, *self._defaults(req)])
        attempt = Attempt(self, number, url, headers, token, auth)
        if self._on_request is not None:
            await _call(self._on_request, RequestInfo("GET", attempt.shown, number))
        self.requests += 1
        if self._on_response is not None:
            attempt.started = time.monotonic()
        return attempt

    async def _attempt(
        self,
        net: Transport,
        base: str,
        req: Request,
        call: Call,
        consume: Consume[T],
    ) -> T | Failure:
        """One attempt, the only place a request is sent: begin, send, consume.

        Returns what ``consume`` made of a good response, or the attempt's failure.
        """
        a = await self.begin(req, base, call.attempts + 1)
        call.attempts = a.number
        token, shown, deadline = a.token, a.shown, call.deadline
        try:
            if deadline is None:
                result = await self._send(net, a, consume)
            else:
                async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                    result = await self._send(net, a, consume)
        except TransportError as exc:
            # The body broke off while consumed.
            result = Failure(exc, _BROKEN, token)
        except builtin_timeout as exc:
            # Timeout.total ran out (the transport's own time limits are TransportErrors by now).
            result = Failure(transport(exc, shown, a.number, deadline), _BROKEN, token)
        except AsyncSportsError as exc:
            self.scrub(exc, token, a.auth, *own_secrets(req))
            raise
        if isinstance(result, Failure):
            # Before it is logged ("retrying ...") or raised.
            self.scrub(result.error, token, a.auth, *own_secrets(req))
        return result

    async def _send(self, net: Transport, a: Attempt, consume: Consume[T]) -> T | Failure:
        """Send, classify the answer and consume a good one (inside the deadline, if any)."""
        assert a.headers is not None  # a request's, never None
        shown, number, token = a.shown, a.number, a.token
        try:
            resp = await net.send(a.url, a.headers, consume is _WHOLE)
        except net.errors as exc:
            kind, what = net.failure(exc)
            return Failure(transport(exc, shown, number, None, what), _OUTCOMES[kind], token)
        # One clock reading serves the service's clock and the body's pace.
        seen = self.last_headers = resp.headers
        arrived = self.last_at = time.monotonic()
        try:
            if self._on_response is not None:
                await a.answered(resp.status, arrived)
            if resp.status < 300:
                return await consume(
                    StreamResponse(resp, seen, shown, number, self._limits, arrived, net.errors)
                )
            return await self._failure(net, resp, shown, number, token)
        except BaseException:
            resp.release()
            raise

    async def after(
        self, failed: Failure, call: Call, told: Callable[[int, float], None] | None = None
    ) -> None:
        """The one place a failed attempt of ``call`` (a request's, or a live connection's)
        is decided: wait (maybe pausing the client), refresh the token, or raise its error.
        ``told`` hears of each attempt to come (its number and wait: a live feed's health)."""
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
        if told is not None:
            told(call.attempts, decision.wait)
        await self.act(decision, call, getattr(error, "url", ""), str(error), failed.token)

    def reconnect(self, end: ConnectionEnd, call: Call) -> Decision:
        """What to do after a live connection of ``call`` ended before its feed did
        (``end``), by the client's retry policy: carry it out with :meth:`act`, unless it
        is ``raise``."""
        return live_reconnect(
            end,
            call,
            self.retry,
            now=time.monotonic(),
            refreshable=self._token.refreshable,
            rng=self._rng,
        )

    async def act(
        self,
        decision: Decision,
        call: Call,
        url: str,
        why: str,
        token: str | None,
        what: str = "GET",
    ) -> None:
        """Carry out a decision that is not ``raise``, for a request or a live connection
        (``what``): refresh the token, send again at once, or wait the backoff (pausing
        the whole client after a 429)."""
        if decision.action == "refresh":
            self._token.invalidate(token)
            log.info("%s %s refused the token: asking the token provider again", what, url)
            return
        if decision.action == "resend":
            log.info("%s %s: the pooled connection was closed: sending again at once", what, url)
            return
        if decision.pause:
            await self.pause(decision.wait)
        if why:
            # A live connection's reason may quote what its server sent.
            why = self.hide(why, token)
        log.warning(
            "retrying %s %s in %.2fs (attempt %d failed: %s)",
            what,
            url,
            decision.wait,
            call.attempts,
            why,
        )
        self.retries += 1
        await asyncio.sleep(decision.wait)

    async def _failure(
        self, net: Transport, resp: Reply, shown: str, attempt: int, token: str | None
    ) -> Failure:
        try:
            raw = await resp.content.read(_ERROR_BODY_LIMIT)
        except net.errors:
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
        return Failure(error, Outcome(resp.status, retry_after), token)

    def _defaults(self, req: Request) -> list[tuple[str, str]]:
        """``default_query`` less what ``req`` sets itself: the request's own win."""
        if not self._query:
            return []
        names = {k for k, _ in req.params}
        return [p for p in self._query if p[0] not in names]

    def _headers(self, token: str) -> dict[str, str]:
        headers = {**self._data_headers, "Authorization": f"Bearer {token}"}
        self._auth_token, self._auth_headers = token, headers
        return headers

    async def pause(self, seconds: float) -> None:
        """Hold every request of this client for ``seconds`` (after a 429), and pass it on
        to the limiter's other users (a budget shared through Redis)."""
        self._paused_until = max(self._paused_until, time.monotonic() + seconds)
        if self._limiter is not None:
            await self._limiter.pause(seconds)

    async def _wait_turn(self) -> None:
        observer = self.observer
        started = time.monotonic() if observer is not None else 0.0
        pause = self._paused_until - time.monotonic()
        if pause > 0:
            await asyncio.sleep(pause)
        if self._limiter is not None:
            await self._limiter.wait()
        if observer is not None:
            observer.waited(time.monotonic() - started)


async def _call(hook: Hook, info: RequestInfo) -> None:
    result = hook(info)
    if result is not None:
        await result
