"""A client's settings as one frozen, validated value. No I/O.

:class:`Settings` is built once by :class:`~asyncsports.Client` from its keyword arguments;
every number is checked to be finite and in range, every URL to be http(s), so a mistake
is a ValueError naming the argument before anything is sent. Each setting is declared
here once, with what the command line needs to offer it as a global option (:class:`CliOption`).
"""

from __future__ import annotations

import math
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from asyncsports._http.request import Header, Param, QueryValue, extra_headers, extra_query
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
from asyncsports._wire.secrets import HIDDEN, hide_url, is_credential, split_userinfo

if TYPE_CHECKING:  # annotations only: the command line's --help reads Settings without auth
    from asyncsports.auth import StreamingCredentials, Token

__all__ = ["CliOption", "Hook", "Limits", "Pace", "RequestInfo", "Settings", "Timeout"]

_UNSET: Any = object()


def _seconds(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name}: expected a number of seconds or None, got {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name}: expected a finite number of seconds > 0, got {value!r}")
    return float(value)


@dataclass(frozen=True, init=False)
class Timeout:
    """Time limits in seconds; None means no limit.

    ``connect`` bounds opening a connection, ``read`` the wait for each piece of a
    response, ``total`` one call with all its attempts, backoff waits and its body.
    As in httpx, a single number sets every phase: ``Timeout(5)`` is connect 5 s and
    read 5 s (``total`` stays unset unless given). ``Timeout()`` is connect 10 s, read 30 s.

    Against a server that drips: a response's status line and headers must come whole
    within ``connect + read`` of the request going out (``1.5 * read`` with no
    ``connect``), however slowly they drip, or it is a
    :class:`~asyncsports.errors.TimeoutError` retried like a read timeout (one watchdog
    per pool checks, no timer per request). ``body`` bounds reading one whole body
    (300 s by default, whatever ``total`` says), and ``min_rate`` is the fewest bytes per
    second every body, whole or streamed, must deliver, averaged over windows of ``read``
    seconds (1,024 by default): a slower body is stalled, a ``TimeoutError`` that says
    its rate and the bytes so far, and is asked for again like one that broke off (a
    stream resumes where it stopped). Both are checked as each piece arrives, no timer:
    a body at 1 byte a second is cut off after ``read`` seconds.
    """

    connect: float | None
    read: float | None
    total: float | None
    body: float | None
    min_rate: float | None

    def __init__(
        self,
        timeout: float | None = _UNSET,
        *,
        connect: float | None = _UNSET,
        read: float | None = _UNSET,
        total: float | None = None,
        body: float | None = 300.0,
        min_rate: float | None = 1024.0,
    ) -> None:
        every = timeout is not _UNSET
        connect = connect if connect is not _UNSET else (timeout if every else 10.0)
        read = read if read is not _UNSET else (timeout if every else 30.0)
        object.__setattr__(self, "connect", _seconds("timeout.connect", connect))
        object.__setattr__(self, "read", _seconds("timeout.read", read))
        object.__setattr__(self, "total", _seconds("timeout.total", total))
        object.__setattr__(self, "body", _seconds("timeout.body", body))
        object.__setattr__(self, "min_rate", _seconds("timeout.min_rate", min_rate))


@dataclass(frozen=True, slots=True)
class RequestInfo:
    """What a hook sees of a request: the method, the URL with secrets redacted, the attempt."""

    method: str
    url: str
    attempt: int
    status: int | None = None
    elapsed: float | None = None


Hook = Callable[[RequestInfo], Awaitable[None] | None]


def _http_url(name: str, value: str) -> str:
    return _url(name, value, websocket=False)


def _ws_url(name: str, value: str) -> str:
    return _url(name, value, websocket=True)


def check_url(name: str, value: str, *, websocket: bool = False) -> None:
    """ValueError ``NAME: expected an http(s) URL such as https://host, got ...`` unless
    ``value`` is an http(s) URL with a host (``websocket``: ws(s), or http(s)).

    The rule of every address a client takes; the command line checks its options by it,
    under their own names (``--base-url``).
    """
    schemes = ("ws://", "wss://", "http://", "https://") if websocket else ("http://", "https://")
    if not isinstance(value, str) or not value.startswith(schemes) or not _host(value):
        what = (
            "a ws(s) URL such as wss://host" if websocket else "an http(s) URL such as https://host"
        )
        # The secrets policy: never a password (hide_url takes a URL's userinfo to its
        # last "@", whatever the password holds).
        shown = hide_url(value) if isinstance(value, str) else value
        raise ValueError(f"{name}: expected {what}, got {shown!r}")


def _host(url: str) -> str | None:
    try:
        return urllib.parse.urlsplit(url).hostname
    except ValueError:  # an unclosed IPv6 bracket
        return None


def _url(name: str, value: str, *, websocket: bool) -> str:
    check_url(name, value, websocket=websocket)
    if any(c.isspace() or ord(c) < 32 for c in value):
        raise ValueError(
            f"{name}: must not hold spaces or control characters, got {hide_url(value)!r}"
        )
    if split_userinfo(value)[1] is not None:
        # aiohttp would refuse each request with a bare ValueError, and a password in
        # the URL would be shown wherever the URL is: refused here, once, instead.
        raise ValueError(
            f"{name}: must not hold a user or password ({hide_url(value)!r}); give the "
            "token as Client(token=...), or a header with "
            "default_headers={'Authorization': ...}"
        )
    return value.rstrip("/")


def _count(name: str, value: int | None, low: int) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: expected an int, got {value!r}")
    if value < low:
        raise ValueError(f"{name}: must be >= {low}, got {value}")


CONNECTION = "Connection"
"""The section of ``asyncsports --help`` that lists most settings' options."""
STREAMING = "Live stream events"
"""The section of the live stream events listing's options."""


@dataclass(frozen=True, slots=True)
class CliOption:
    """How the command line takes a setting: ``--rate-limit-key`` (``ASYNCSPORTS_RATE_LIMIT_KEY``)
    for ``rate_limit_key``. ``help`` and ``panel`` are its --help text and section, ``kind``
    what its text is read as, ``min`` its lowest value. A setting's option is optional on
    the command line even where the setting is required (``base_url``: ``--emulator``)."""

    help: str
    panel: str = CONNECTION
    kind: type = str
    min: float | None = None


def _cli(help: str, **kw: Any) -> dict[str, CliOption]:
    return {"cli": CliOption(help, **kw)}


@dataclass(frozen=True, slots=True, kw_only=True)
class Settings:
    """Everything a client is configured with, validated; URLs without a trailing slash.

    The one declaration of each setting: its type, its default, what it means and, in its
    metadata (``"cli"``: a :class:`CliOption`), the global option of ``asyncsports`` that
    sets it. :class:`~asyncsports.Client` takes the same names in its signature, checked
    against these fields by a test.
    """

    base_url: str = field(metadata=_cli("Data service address."))
    """The data service's URL (the snooker proxy's too)."""
    token: Token | None = field(default=None, metadata=_cli("Bearer token of the data service."))
    """The bearer token, or a sync or async callable returning one (asked again after a 401)."""
    vendor: str = field(default=VENDOR, metadata=_cli("Vendor of the Accept media type."))
    """The vendor in the media types asked for: ``application/vnd.<vendor>.dde.api+json``."""
    snooker_feed: str = field(default=SNOOKER_FEED, metadata=_cli("Snooker feed path segment."))
    """The snooker proxy's feed, the path segment after ``/snooker/``."""
    streaming_url: str | None = field(
        default=None, metadata=_cli("Live stream host address.", panel=STREAMING)
    )
    """The live stream events host."""
    streaming_credentials: StreamingCredentials | None = field(default=None, repr=False)
    """The operator's credentials for the live stream events listing."""
    live_url: str | None = field(
        default=None, metadata=_cli("Live feeds' websocket host (wss://...): --follow uses it.")
    )
    """The streams host of the live feeds (``client.live``, websockets)."""
    timeout: Timeout = field(default_factory=Timeout)
    """Time limits (``Client`` also takes a number of seconds, or None for the default)."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    """How failed attempts are retried (``Client`` also takes ``max_retries``)."""
    rate_limit: float | None = field(
        default=None,
        metadata=_cli(
            "Requests per second at most (backfill and sync: 5 unless --emulator; 0: no limit).",
            kind=float,
            min=0,
        ),
    )
    """Requests per second at most, across every call of the client."""
    rate_limit_url: str | None = field(
        default=None,
        metadata=_cli("Redis URL: share the --rate-limit budget with every process naming it."),
    )
    """A ``redis://`` URL: ``rate_limit`` is one budget shared by every client naming it."""
    rate_limit_key: str = field(
        default=RATE_LIMIT_KEY,
        metadata=_cli(f"Name of the shared budget in Redis (default: {RATE_LIMIT_KEY})."),
    )
    """The shared budget's name in Redis: clients naming another share another."""
    rate_limit_sharers: int = field(
        default=1,
        metadata=_cli(
            "Processes expected to share the budget: without Redis each keeps to budget / sharers.",
            kind=int,
            min=1,
        ),
    )
    """Clients expected to share the budget: each keeps to its share while Redis is away."""
    max_connections: int = MAX_CONNECTIONS
    """Pooled connections at most."""
    dns_ttl: int = DNS_TTL
    """Seconds a resolved address is kept (0: not cached)."""
    max_body_size: int | None = MAX_BODY_SIZE
    """Bytes of a whole body at most, after content decoding (None: no bound)."""
    max_element_size: int | None = MAX_ELEMENT_SIZE
    """Bytes of one element of a streamed list at most (None: no bound)."""
    on_request: Hook | None = None
    """Called before each attempt with its :class:`RequestInfo`."""
    on_response: Hook | None = None
    """Called after each answered attempt with its :class:`RequestInfo` (status, elapsed)."""
    verify_ssl: bool = True
    """Whether TLS certificates are checked."""
    default_query: Mapping[str, QueryValue] | None = None
    """Query parameters sent with every request (a method's own take precedence)."""
    default_headers: Mapping[str, str | None] | None = None
    """Headers sent with every request, replacing the client's own of the same name."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "base_url", _http_url("base_url", self.base_url))
        if self.streaming_url is not None:
            object.__setattr__(
                self, "streaming_url", _http_url("streaming_url", self.streaming_url)
            )
        if self.live_url is not None:
            object.__setattr__(self, "live_url", _ws_url("live_url", self.live_url))
        if not isinstance(self.vendor, str) or not self.vendor.replace("-", "").isalnum():
            raise ValueError(f"vendor: expected a short name like {VENDOR!r}, got {self.vendor!r}")
        if not isinstance(self.timeout, Timeout):
            raise TypeError(f"timeout: expected a Timeout or a number, got {self.timeout!r}")
        if not isinstance(self.retry, RetryPolicy):
            raise TypeError(f"retry: expected a RetryPolicy, got {self.retry!r}")
        self._check_rate()
        _count("max_connections", self.max_connections, 1)
        _count("dns_ttl", self.dns_ttl, 0)
        _count("max_body_size", self.max_body_size, 1)
        _count("max_element_size", self.max_element_size, 1)
        for name in ("on_request", "on_response"):
            hook = getattr(self, name)
            if hook is not None and not callable(hook):
                raise TypeError(f"{name}: expected a callable, got {hook!r}")
        self.query()
        self.headers()

    def _check_rate(self) -> None:
        """The rate budget's settings: a limit, and where and under what key it is shared."""
        if self.rate_limit is not None:
            rate = self.rate_limit
            if isinstance(rate, bool) or not isinstance(rate, int | float):
                raise TypeError(f"rate_limit: expected a number, got {rate!r}")
            if not math.isfinite(rate) or rate <= 0:
                raise ValueError(
                    f"rate_limit: must be a finite number > 0 requests per second, got {rate}"
                )
        if self.rate_limit_url is not None:
            url = self.rate_limit_url
            if not isinstance(url, str) or not url.startswith(("redis://", "rediss://", "unix://")):
                raise ValueError(f"rate_limit_url: expected a redis:// URL, got {url!r}")
            if self.rate_limit is None:
                raise ValueError("rate_limit_url: needs rate_limit, the budget the URL shares")
        if not isinstance(self.rate_limit_key, str) or not self.rate_limit_key:
            raise ValueError(f"rate_limit_key: expected a name, got {self.rate_limit_key!r}")
        _count("rate_limit_sharers", self.rate_limit_sharers, 1)

    def __repr__(self) -> str:
        # The secrets policy: the token, credential headers and query values and a URL's
        # password are never shown.
        shown = []
        for f in fields(self):
            value = getattr(self, f.name)
            if not f.repr:
                continue
            if f.name == "token" and isinstance(value, str):
                value = HIDDEN
            elif f.name in ("default_headers", "default_query") and value:
                value = {k: HIDDEN if is_credential(k) else v for k, v in value.items()}
            elif isinstance(value, str):
                value = hide_url(value)
            shown.append(f"{f.name}={value!r}")
        return f"Settings({', '.join(shown)})"

    def query(self) -> tuple[Param, ...]:
        """``default_query`` as parameters (a None value sends nothing)."""
        pairs = extra_query(self.default_query, "default_query")
        return tuple((k, v) for k, v in pairs if v is not None)

    def headers(self) -> tuple[Header, ...]:
        """``default_headers`` as (name, value or None) pairs."""
        return extra_headers(self.default_headers, "default_headers")


class Limits:
    """What a body may take: bytes (whole, per element), time (whole), the slowest pace."""

    __slots__ = ("body", "element", "first", "min_rate", "time", "window")

    def __init__(self, settings: Settings) -> None:
        self.body = settings.max_body_size
        self.element = settings.max_element_size
        self.time = settings.timeout.body
        self.min_rate = settings.timeout.min_rate
        self.window = settings.timeout.read or 30.0
        # Seconds into a whole body before anything is to be checked: most bodies are
        # read by then, and never need a Pace.
        self.first = min(
            self.window if self.min_rate is not None else math.inf,
            self.time if self.time is not None else math.inf,
        )

    def pace(self, start: float, whole: bool) -> Pace | None:
        """A new check of one body read from ``start``: ``Timeout.min_rate``, and for a
        ``whole`` body ``Timeout.body`` (a stream has no time bound); None when neither applies."""
        seconds = self.time if whole else None
        if self.min_rate is None and seconds is None:
            return None
        return Pace(self.min_rate, self.window, start, seconds)


class Pace:
    """Whether a body keeps up ``rate`` bytes a second over windows of ``window`` seconds,
    and ends within ``seconds`` of ``start``: pure arithmetic on the times it is given.

    Checked as each piece arrives, never by a timer: :meth:`late` compares one number
    until :attr:`due`, the end of the window or the deadline. A server that sends nothing
    at all is the read timeout's. So a body slower than ``rate`` is cut off by the first
    piece that arrives once a window has passed: a 1-byte-a-second drip after ``window``
    seconds, and any drip within ``window`` plus its gap between pieces.
    """

    __slots__ = ("deadline", "due", "mark", "rate", "seconds", "since", "window")

    def __init__(
        self, rate: float | None, window: float, start: float, seconds: float | None = None
    ) -> None:
        self.rate = rate or 0.0
        self.window = window if rate else math.inf
        self.seconds = seconds
        self.deadline = math.inf if seconds is None else start + seconds
        self.since = start  # the start of the current window
        self.mark = 0  # the bytes read when it started
        self.due = min(start + self.window, self.deadline)

    def late(self, size: int, now: float) -> str | None:
        """With ``size`` bytes read in all at ``now``: why the body is too slow, or None."""
        if now < self.due:
            return None
        if now > self.deadline:
            return (
                f"timed out: the body took longer than Timeout.body={self.seconds:g}s "
                f"({size} bytes so far)"
            )
        elapsed = now - self.since
        if elapsed >= self.window:
            got = size - self.mark
            if got < self.rate * elapsed:
                return (
                    f"stalled: the body gave {got} bytes in {elapsed:.1f} s "
                    f"({got / elapsed:.3g} a second), below Timeout.min_rate={self.rate:g} "
                    f"bytes a second; {size} bytes so far"
                )
            self.since, self.mark = now, size
        self.due = min(self.since + self.window, self.deadline)
        return None
