"""OpenTelemetry traces and metrics of a client (extra ``otel``).

``Client(..., tracing=True)``, or :func:`instrument` on a client made without it, gives:

- a span per call of a public method, named ``asyncsports.<namespace>.<method>``
  (``asyncsports.fixtures.list``); the span of a listing, a generator or a live feed
  lives from the first record asked for to its end or close;
- under it, a ``CLIENT`` span per HTTP attempt, named ``GET <url.template>``, with the
  HTTP client semantic conventions (``http.request.method``, ``url.template``,
  ``server.address``, ``server.port``, ``http.response.status_code``,
  ``http.request.resend_count``, ``error.type``), ``http.response.body.size`` and
  ``asyncsports.rate_limit.wait``: the seconds spent waiting for the client's turn
  (the rate limit, a 429 pause), which the attempt span includes;
- a span per live connection (``asyncsports.live.connection``) with the records it
  delivered and, when it ended before the feed did, an ``asyncsports.live.reconnect``
  event saying why;
- metrics: ``http.client.request.duration`` (a histogram per attempt),
  ``asyncsports.client.retries``, ``asyncsports.client.throttled`` (429 answers),
  ``asyncsports.client.rate_limit.wait``, ``asyncsports.live.records`` and
  ``asyncsports.live.lag`` (seconds from a record's timestamp to its arrival).

No attribute holds a secret: no header is recorded, ``url.full`` carries only the
request's own query (never the stream credentials nor ``default_query``), and every
message recorded (an error's, a connection's end) goes through the client's secret filter.

A client without tracing has no observer: a call of a public method and its request path
each read one attribute. This module imports OpenTelemetry only when :func:`instrument` runs.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import time
import urllib.parse
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from asyncsports._http.health import record_timestamp
from asyncsports._http.observer import Send
from asyncsports._http.request import Request
from asyncsports._http.session import Failure, Response, Session
from asyncsports._optional import need
from asyncsports._version import __version__
from asyncsports._wire.secrets import hide_url
from asyncsports.live import Feed
from asyncsports.paging import AsyncList

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import Span, TracerProvider

    from asyncsports._wire.live import ConnectionEnd
    from asyncsports._wire.retry import Call
    from asyncsports.resources.namespaces import Namespaces

__all__ = ["instrument"]

T = TypeVar("T")
_QUIET = (GeneratorExit, StopAsyncIteration)
# The metrics' descriptions.
_DURATION = "Duration of HTTP requests."
_RETRIES = "Requests sent again."
_429 = "429 answers."
_WAIT = "Time waited for the client's turn (rate limit, 429 pause)."
_RECORDS = "Live records delivered."
_LAG = "From a live record's timestamp to its arrival."


def instrument(
    client: Namespaces,
    *,
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
) -> None:
    """Trace ``client``'s calls (an :class:`~asyncsports.Client`) and record its metrics,
    through the global OpenTelemetry providers or those given. Once per client: a second
    call does nothing.

    ``client.with_json`` is traced too (its calls have the same span names), whenever it
    was made: the client's methods hand what they return to the session's observer
    (:func:`~asyncsports.resources._base.traced`), which this sets.
    """
    session: Session = client.session
    if session.observer is not None:
        return
    trace = need("opentelemetry.trace", "Tracing")
    metrics = need("opentelemetry.metrics", "Tracing")
    tracer = trace.get_tracer("asyncsports", __version__, tracer_provider)
    meter = metrics.get_meter("asyncsports", __version__, meter_provider)
    session.observer = _Telemetry(session, trace, tracer, meter)


class _Telemetry:
    """The session's observer and the calls' spans: one per instrumented client."""

    def __init__(self, session: Session, trace: Any, tracer: Any, meter: Any) -> None:
        self._session = session
        self._trace = trace
        self._tracer = tracer
        self._context = need("opentelemetry.context", "Tracing")
        self._client_kind = trace.SpanKind.CLIENT
        self._error = trace.StatusCode.ERROR
        self._status = trace.Status
        self._servers: dict[str, dict[str, Any]] = {}
        # The attempt waiting for its turn, if any (the session waits in the attempt's task).
        self._attempt: contextvars.ContextVar[Span | None] = contextvars.ContextVar(
            "asyncsports_attempt", default=None
        )
        histogram, counter = meter.create_histogram, meter.create_counter
        self._duration = histogram("http.client.request.duration", unit="s", description=_DURATION)
        self._retries = counter(
            "asyncsports.client.retries", unit="{request}", description=_RETRIES
        )
        self._throttled = counter(
            "asyncsports.client.throttled", unit="{response}", description=_429
        )
        self._wait = histogram("asyncsports.client.rate_limit.wait", unit="s", description=_WAIT)
        self._records = counter("asyncsports.live.records", unit="{record}", description=_RECORDS)
        self._lag = histogram("asyncsports.live.lag", unit="s", description=_LAG)

    # -- the session's observer

    def attempt(self, send: Send[T]) -> Send[T]:
        return functools.partial(self._observed, send)

    async def _observed(
        self, send: Send[T], net: Any, base: str, req: Request, call: Call, consume: Any
    ) -> T:
        server = self._server(base)
        # The metric's attributes: low cardinality (no URL, no retry number).
        common: dict[str, Any] = {"http.request.method": "GET", **server}
        route = req.route
        if route is not None:
            common["url.template"] = route
        span = self._tracer.start_span(
            f"GET {route or req.path}", kind=self._client_kind, attributes=common
        )
        span.set_attribute("url.full", hide_url(base + req.target))
        if call.attempts:
            span.set_attribute("http.request.resend_count", call.attempts)
            self._retries.add(1, server)
        token = self._context.attach(self._trace.set_span_in_context(span))
        waiting = self._attempt.set(span)
        started = time.monotonic()
        outcome: dict[str, Any] = {}
        try:
            result = await send(net, base, req, call, consume)
        except BaseException as exc:
            if not isinstance(exc, _QUIET):
                outcome["error.type"] = _error_type(exc)
                span.set_status(self._status(self._error, self._session.hide(str(exc))))
            raise
        else:
            outcome = self._outcome(span, result)
            if outcome.get("http.response.status_code") == 429:
                self._throttled.add(1, server)
            return result
        finally:
            self._attempt.reset(waiting)
            self._context.detach(token)
            span.set_attributes(outcome)
            span.end()
            self._duration.record(time.monotonic() - started, {**common, **outcome})

    def _outcome(self, span: Span, result: object) -> dict[str, Any]:
        """The status and error type of an attempt that came back (and its body's size)."""
        if isinstance(result, Failure):
            span.set_status(self._status(self._error, self._session.hide(str(result.error))))
            status = result.outcome.status
            if status is None:
                return {"error.type": _error_type(result.error)}
            return {"http.response.status_code": status, "error.type": str(status)}
        if not isinstance(result, Response):
            return {}
        if type(result) is Response:
            span.set_attribute("http.response.body.size", len(result.body))
        else:  # a streamed body, read after the attempt: its announced size, if any
            size = result.headers.get("Content-Length")
            if size is not None and size.isdigit():
                span.set_attribute("http.response.body.size", int(size))
        return {"http.response.status_code": result.status}

    def waited(self, seconds: float) -> None:
        span = self._attempt.get()
        if span is not None:
            span.set_attribute("asyncsports.rate_limit.wait", seconds)
        self._wait.record(seconds)

    def connection(self, req: Request, attempt: int) -> _Connection:
        base = self._session.settings.live_url or ""
        attributes: dict[str, Any] = {**self._server(base), "asyncsports.live.attempt": attempt}
        if req.route is not None:
            attributes["url.template"] = req.route
        span = self._tracer.start_span(
            "asyncsports.live.connection", kind=self._client_kind, attributes=attributes
        )
        return _Connection(span, self._session)

    # -- the calls

    def call(self, result: Any, name: str) -> Any:
        """What a call of a public method returned, traced as span ``name``."""
        if inspect.iscoroutine(result):
            return self._coroutine(result, name)
        if isinstance(result, AsyncList | Feed):
            # A counter made now, not a closure over the feed: the feed would hold itself.
            seen = self._feed_counter(result) if isinstance(result, Feed) else None
            result.wrap(functools.partial(self._steps, name=name, seen=seen))
        elif inspect.isasyncgen(result):
            return self._steps(result, name)
        return result

    async def _coroutine(self, coro: Coroutine[Any, Any, T], name: str) -> T:
        with self._tracer.start_as_current_span(
            name, record_exception=False, set_status_on_exception=False
        ) as span:
            try:
                return await coro
            except BaseException as exc:
                self._fail(span, exc)
                raise

    async def _steps(
        self,
        source: AsyncIterator[T],
        name: str,
        seen: Callable[[Span, T], None] | None = None,
    ) -> AsyncGenerator[T, None]:
        """``source``'s items under one span, current while ``source`` runs (so that the
        tasks it starts, a listing's page fetches, are its children) and only then."""
        span: Span | None = None
        context, trace = self._context, self._trace
        try:
            while True:
                if span is None:
                    span = self._tracer.start_span(name)
                token = context.attach(trace.set_span_in_context(span))
                try:
                    item = await anext(source)
                except StopAsyncIteration:
                    return
                finally:
                    context.detach(token)
                if seen is not None:
                    seen(span, item)
                yield item
        except BaseException as exc:
            if span is not None and not isinstance(exc, _QUIET):
                self._fail(span, exc)
            raise
        finally:
            aclose = getattr(source, "aclose", None)
            try:
                if aclose is not None:
                    await aclose()
            finally:
                if span is not None:
                    span.end()

    def _feed_counter(self, feed: Feed[Any]) -> Callable[[Span, Any], None]:
        attributes = {"asyncsports.live.kind": feed.kind}
        count = [0]
        records, lag = self._records, self._lag

        def seen(span: Span, record: Any) -> None:
            count[0] += 1
            span.set_attribute("asyncsports.live.records", count[0])
            records.add(1, attributes)
            stamp = record_timestamp(record)
            if stamp is not None:
                lag.record(max(0.0, time.time() - stamp), attributes)

        return seen

    def _fail(self, span: Span, exc: BaseException) -> None:
        span.set_attribute("error.type", _error_type(exc))
        span.set_status(self._status(self._error, self._session.hide(str(exc))))

    def _server(self, base: str) -> dict[str, Any]:
        server = self._servers.get(base)
        if server is None:
            parts = urllib.parse.urlsplit(base)
            port = parts.port or (443 if parts.scheme in ("https", "wss") else 80)
            server = self._servers[base] = {
                "server.address": parts.hostname or "",
                "server.port": port,
            }
        return server


class _Connection:
    """One live connection's span."""

    __slots__ = ("_session", "_span")

    def __init__(self, span: Span, session: Session) -> None:
        self._span = span
        self._session = session

    def end(self, delivered: int, end: ConnectionEnd | None) -> None:
        span = self._span
        span.set_attribute("asyncsports.live.records", delivered)
        if end is not None and end.error:
            reason = self._session.hide(end.error)
            span.set_attribute("asyncsports.live.end", reason)
            span.add_event(
                "asyncsports.live.reconnect",
                {"reason": reason, "stalled": end.stalled, "records": delivered},
            )
        span.end()


def _error_type(exc: BaseException) -> str:
    return type(exc).__qualname__
