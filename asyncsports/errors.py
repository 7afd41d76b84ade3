"""The exception hierarchy.

Every error the library raises on purpose is an :class:`AsyncSportsError`. Argument
mistakes found before anything is sent are plain :class:`ValueError` or
:class:`TypeError`, as in the standard library.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = [
    "APIError",
    "AsyncSportsError",
    "AuthenticationError",
    "BadRequestError",
    "BodyTooLargeError",
    "DecodeError",
    "NotFoundError",
    "RateLimitError",
    "ServerError",
    "TransportError",
    "error_for_status",
]


class AsyncSportsError(Exception):
    """Base class of every error raised by asyncsports."""


class APIError(AsyncSportsError):
    """The service answered with an error status.

    ``body`` is the decoded JSON when the error body parses as JSON, else its text.
    ``message`` is the service's own message where one could be found.
    ``attempts`` counts the requests made, retries included.
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
        where = f" ({self.method} {self.url})" if self.url else ""
        tries = f" after {self.attempts} attempts" if self.attempts > 1 else ""
        return f"{self.status} {self.message}{where}{tries}"

    def __reduce__(self) -> Any:
        kw = {
            "body": self.body,
            "headers": dict(self.headers),
            "method": self.method,
            "url": self.url,
            "attempts": self.attempts,
        }
        return (_rebuild, (type(self), self.status, self.message, kw))


def _rebuild(cls: type[APIError], status: int, message: str, kw: dict[str, Any]) -> APIError:
    return cls(status, message, **kw)


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

    def __reduce__(self) -> Any:
        cls, (_, status, message, kw) = super().__reduce__()
        return (_rebuild, (cls, status, message, {**kw, "retry_after": self.retry_after}))


class ServerError(APIError):
    """5xx: the service failed."""


class TransportError(AsyncSportsError):
    """The request did not complete: connection refused or reset, DNS failure, timeout."""

    def __init__(self, message: str, *, method: str = "GET", url: str = "", attempts: int = 1):
        self.method = method
        self.url = url
        self.attempts = attempts
        super().__init__(message)

    def __str__(self) -> str:
        where = f" ({self.method} {self.url})" if self.url else ""
        tries = f" after {self.attempts} attempts" if self.attempts > 1 else ""
        return f"{self.args[0]}{where}{tries}"


class BodyTooLargeError(TransportError):
    """A body exceeded the client's ``max_body_size``; it is refused, not retried."""


class DecodeError(AsyncSportsError):
    """A body did not decode into the expected type.

    ``target`` names the type, ``path`` the JSON path of the offending value
    (``$[3].teams[0].id``), ``offset`` the byte offset where known, and ``snippet``
    shows the offending bytes.
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
