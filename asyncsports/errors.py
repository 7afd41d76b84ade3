"""The exception hierarchy, and building errors from what a server sent. No I/O.

Every error the library raises on purpose is an :class:`AsyncSportsError`::

    AsyncSportsError
    ├── APIError                 the service answered with an error status
    │   ├── BadRequestError      400
    │   ├── AuthenticationError  401, 403
    │   ├── NotFoundError        404
    │   ├── RateLimitError       429
    │   └── ServerError          5xx
    ├── TransportError           no complete answer: connection failed or broke off
    │   └── TimeoutError         a time limit ran out (also a builtin TimeoutError)
    ├── BodyTooLargeError        a body over max_body_size (never retried)
    ├── DecodeError              a body that does not fit its model
    ├── NoRecordError            a 200 whose body held no record
    ├── PagingError              a server that breaks the paging contract
    ├── SinkError                a database that cannot be used or reached
    ├── MissingDependencyError   an optional dependency not installed (also ImportError)
    ├── RecordingError           a recording to replay that is malformed, cut short or too big
    └── RecordingWriteError      a recording (record=) that cannot be written

Argument mistakes found before anything is sent are plain :class:`ValueError` or
:class:`TypeError`, as in the standard library.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Any

from asyncsports._wire.secrets import Secrets, clip, hide_urls

__all__ = [
    "APIError",
    "AsyncSportsError",
    "AuthenticationError",
    "BadRequestError",
    "BodyTooLargeError",
    "BusError",
    "DecodeError",
    "MissingDependencyError",
    "NoRecordError",
    "NotFoundError",
    "PagingError",
    "RateLimitError",
    "RecordingError",
    "RecordingWriteError",
    "Secrets",
    "ServerError",
    "SinkError",
    "TimeoutError",
    "TransportError",
    "error_for_status",
    "error_from",
    "redact",
]


class AsyncSportsError(Exception):
    """Base class of every error raised by asyncsports."""


def _where(method: str, url: str, attempts: int) -> str:
    where = f" ({method} {url})" if url else ""
    tries = f" after {attempts} attempts" if attempts > 1 else ""
    return where + tries


class APIError(AsyncSportsError):
    """The service answered with an error status.

    ``body`` is the decoded JSON when the error body parses as JSON, else its text.
    ``message`` is the service's own message where one could be found.
    ``attempts`` counts the requests sent, retries included.
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
        method: str = "GET",
        url: str = "",
        attempts: int = 1,
    ) -> None:
        self.status = status
        self.message = message
        self.body = body
        self.headers: Mapping[str, str] = headers if headers is not None else {}
        self.method = method
        self.url = url
        self.attempts = attempts
        super().__init__(status, message)

    def __str__(self) -> str:
        return f"{self.status} {self.message}{_where(self.method, self.url, self.attempts)}"

    def _kw(self) -> dict[str, Any]:
        return {
            "body": self.body,
            "headers": dict(self.headers),
            "method": self.method,
            "url": self.url,
            "attempts": self.attempts,
        }

    def __reduce__(self) -> Any:
        return (_rebuild, (type(self), (self.status, self.message), self._kw()))


def _rebuild(cls: type[Any], args: tuple[Any, ...], kw: dict[str, Any]) -> Any:
    return cls(*args, **kw)


def _reduce(error: BaseException, args: tuple[Any, ...], *names: str) -> Any:
    """``__reduce__`` of an error made by ``type(error)(*args, name=value, ...)``: a
    pickled one comes back with its keyword attributes."""
    return (_rebuild, (type(error), args, {n: getattr(error, n) for n in names}))


class BadRequestError(APIError):
    """400: the service refused the request as malformed."""


class AuthenticationError(APIError):
    """401 or 403: the token or the streaming credentials were refused."""


class NotFoundError(APIError):
    """404: no such resource (an unknown id, or a sport without that endpoint)."""


class RateLimitError(APIError):
    """429: too many requests. ``retry_after`` is the server's hint in seconds, if any."""

    def __init__(self, status: int, message: str, *, retry_after: float | None = None, **kw: Any):
        super().__init__(status, message, **kw)
        self.retry_after = retry_after

    def _kw(self) -> dict[str, Any]:
        return {**super()._kw(), "retry_after": self.retry_after}


class ServerError(APIError):
    """5xx: the service failed."""


class TransportError(AsyncSportsError):
    """No complete answer: connection refused or reset, DNS failure, a body that broke off."""

    def __init__(self, message: str, *, method: str = "GET", url: str = "", attempts: int = 1):
        self.method = method
        self.url = url
        self.attempts = attempts
        super().__init__(message)

    def __str__(self) -> str:
        return f"{self.args[0]}{_where(self.method, self.url, self.attempts)}"

    def __reduce__(self) -> Any:
        return _reduce(self, self.args, "method", "url", "attempts")


class TimeoutError(TransportError, builtins.TimeoutError):
    """A time limit ran out: connecting, waiting for data, or the call's ``Timeout.total``.

    Also a builtin :class:`TimeoutError`, so ``except TimeoutError`` catches it either way.
    """


class BodyTooLargeError(AsyncSportsError):
    """A body exceeded ``max_body_size`` (``limit`` bytes). Refused, never retried."""

    def __init__(self, message: str, *, limit: int, method: str = "GET", url: str = ""):
        self.limit = limit
        self.method = method
        self.url = url
        super().__init__(message)

    def __str__(self) -> str:
        return f"{self.args[0]}{_where(self.method, self.url, 1)}"

    def __reduce__(self) -> Any:
        return _reduce(self, self.args, "limit", "method", "url")


class DecodeError(AsyncSportsError):
    """A body did not decode into the expected type.

    ``target`` names the type, ``path`` the JSON path of the offending value
    (``$[3].teams[0].id``), ``offset`` the byte offset where known, and ``snippet``
    shows the offending bytes. ``status`` and ``url`` say which response it was.
    """

    def __init__(
        self,
        reason: str,
        *,
        target: str = "",
        path: str = "$",
        snippet: str = "",
        offset: int | None = None,
        url: str = "",
        status: int | None = None,
    ) -> None:
        self.reason = reason
        self.target = target
        self.path = path
        self.snippet = snippet
        self.offset = offset
        self.url = url
        self.status = status
        super().__init__(reason)

    def __str__(self) -> str:
        parts = [self.reason]
        if self.target:
            parts.append(f"decoding {self.target} at {self.path}")
        if self.offset is not None:
            parts.append(f"byte {self.offset}")
        if self.status is not None:
            parts.append(f"status {self.status}")
        if self.url:
            parts.append(self.url)
        text = "; ".join(parts)
        return f"{text}: {self.snippet}" if self.snippet else text

    def __reduce__(self) -> Any:
        return _reduce(self, self.args, "target", "path", "snippet", "offset", "url", "status")


class NoRecordError(AsyncSportsError):
    """The service answered 200 but the body held no record where one was expected."""

    def __init__(self, message: str, *, status: int = 200, url: str = ""):
        self.status = status
        self.url = url
        super().__init__(message)

    def __str__(self) -> str:
        return f"{self.args[0]} (status {self.status}, GET {self.url})"


class PagingError(AsyncSportsError):
    """The server broke the paging contract (a page repeated, or the wrong page came back)."""


class SinkError(AsyncSportsError):
    """A database cannot be used (not ours, another schema, unwritable, unreachable)."""


class BusError(AsyncSportsError):
    """A bus the change feed is published to cannot be used: unreachable, refusing, or
    holding what this database did not publish (another database's changes, a stream
    ahead of it)."""


def install_hint(extra: str) -> str:
    """How to install the extra ``extra``, as the docs say it (the package is installed
    from a checkout or a built wheel, not from an index)."""
    return (
        f"install asyncsports with its {extra} extra (in a checkout: pip install -e '.[{extra}]')"
    )


class MissingDependencyError(AsyncSportsError, ModuleNotFoundError):
    """``feature`` needs ``module``, which is not installed (or fails to import):
    :func:`install_hint` says how, ``extra`` naming the extra.

    Also a :class:`ModuleNotFoundError` (``name`` is ``module``), so code that guards an
    import with ``except ImportError`` catches it too.
    """

    def __init__(self, feature: str, module: str, extra: str, *, reason: str = "") -> None:
        self.feature = feature
        self.module = module
        self.extra = extra
        self.reason = reason
        why = f"fails to import ({reason})" if reason else "is not installed"
        text = f"{feature} needs {module}, which {why}: {install_hint(extra)}"
        super().__init__(text, name=module)

    def __str__(self) -> str:
        return str(self.args[0])

    def __reduce__(self) -> Any:
        args = (self.feature, self.module, self.extra)
        return (_rebuild, (type(self), args, {"reason": self.reason}))


class RecordingError(AsyncSportsError, ValueError):
    """A recording (``Emulator(replay=...)``) that cannot be served: ``file``, its ``line``
    (1: the header; 0: the file as a whole) and ``what`` is wrong there.

    Also a :class:`ValueError`, what a file that is not a recording raised before.
    """

    def __init__(self, file: str, line: int, what: str) -> None:
        self.file = file
        self.line = line
        self.what = what
        super().__init__(f"{file}:{line}: {what}")

    def __reduce__(self) -> Any:
        return (type(self), (self.file, self.line, self.what))


class RecordingWriteError(AsyncSportsError):
    """A recording (``Client(record=...)``) that cannot be written: the system's
    ``errno`` and ``strerror`` (or why the file was refused) for ``filename``.

    Raised when the client opens, by every request after the error, and by closing. Not
    an :class:`OSError`: the transports take those as a connection failing, to retry.
    """

    def __init__(self, errno: int, strerror: str, filename: str) -> None:
        self.errno = errno
        self.strerror = strerror
        self.filename = filename
        super().__init__(f"cannot write the recording {filename}: {strerror}")

    def __reduce__(self) -> Any:
        return (type(self), (self.errno, self.strerror, self.filename))


_BY_STATUS: dict[int, type[APIError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: AuthenticationError,
    404: NotFoundError,
    429: RateLimitError,
}


def error_for_status(status: int) -> type[APIError]:
    """The error class for an HTTP status: 5xx is ServerError, other unknown ones APIError."""
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return ServerError if status >= 500 else APIError


# ------------------------------------------------------------------ from the wire


def redact(text: object) -> str:
    """``text`` (a URL, or a message quoting one) with its URL secrets hidden: the
    secrets policy's :func:`~asyncsports._wire.secrets.hide_urls`."""
    return hide_urls(str(text))


def message_of(body: Any, text: str) -> str:
    """The service's message from an error body: a JSON message field, else the text."""
    if isinstance(body, dict):
        for key in ("message", "errorMessage", "error", "detail", "title"):
            value = body.get(key)
            if isinstance(value, str) and value:
                return value
    stripped = text.strip()
    if stripped.startswith("{") and stripped.endswith("}") and not isinstance(body, dict):
        stripped = stripped[1:-1].strip()  # text inside braces that is not JSON
    return clip(stripped, 500) or "(empty body)"  # its URL secrets hidden before the cut


def error_from(
    status: int,
    headers: Mapping[str, str],
    raw: bytes,
    *,
    method: str,
    url: str,
    attempts: int,
    retry_after: float | None = None,
) -> APIError:
    """The error for a failed response: its class by status, its body as JSON or text.

    An error body that cannot be parsed (of any shape) is kept as text; it never
    changes the class, which depends on the status alone.
    """
    import msgspec  # here: the command's --help imports this module, not msgspec

    text = raw.decode("utf-8", "replace")
    body: Any
    try:
        body = msgspec.json.decode(raw)
    except (msgspec.DecodeError, RecursionError, UnicodeDecodeError):
        body = text
    cls = error_for_status(status)
    # A server may echo a request's secrets back (a Location with the stream auth): the
    # session hides them in every error before it is logged or raised (Secrets.scrub).
    kw: dict[str, Any] = {
        "body": body,
        "headers": dict(headers.items()),
        "method": method,
        "url": url,
        "attempts": attempts,
    }
    if cls is RateLimitError:
        kw["retry_after"] = retry_after
    return cls(status, message_of(body, text), **kw)
