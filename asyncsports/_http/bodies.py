"""What a response's body is read as: whole (:class:`Response`) or as it arrives.

Part of the session (the one place that does network I/O): :class:`StreamResponse`
reads a good response's body within the client's bounds (``max_body_size`` after
decoding, ``Timeout.body``, ``Timeout.min_rate``) and turns every failure into a
library error that carries no secret.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import AsyncIterator, Mapping

from asyncsports._http.config import Limits, Pace
from asyncsports._http.transports.base import Reply
from asyncsports._wire.secrets import hide_urls
from asyncsports.errors import BodyTooLargeError, TimeoutError, TransportError

__all__ = ["Response", "StreamResponse", "builtin_timeout", "transport"]

_CHUNK = 256 * 1024
builtin_timeout = builtins.TimeoutError


class Response:
    """A response whose body was read whole."""

    __slots__ = ("body", "headers", "status", "url")

    def __init__(self, status: int, headers: Mapping[str, str], url: str, body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.url = url
        self.body = body


class StreamResponse(Response):
    """A good response whose body is still to be read: by :meth:`chunks`, or whole.

    A failure while reading raises :class:`TransportError` (or its :class:`TimeoutError`),
    which the session's loop takes as a body that broke off. Nothing of the transport's
    own exception is kept: aiohttp's request headers hold the token.
    """

    __slots__ = ("_errors", "_limits", "_resp", "arrived", "attempts")

    def __init__(
        self,
        resp: Reply,
        headers: Mapping[str, str],
        url: str,
        attempts: int,
        limits: Limits,
        arrived: float,
        errors: tuple[type[BaseException], ...],
    ) -> None:
        self.status = resp.status
        self.headers = headers  # resp.headers, read once by the session
        self.url = url
        self.body = b""
        self._resp = resp
        self._limits = limits
        self.attempts = attempts
        self.arrived = arrived  # time.monotonic() when the headers came: a whole body's start
        self._errors = errors  # the transport's (Transport.errors)

    def _broke(self, exc: BaseException) -> TransportError:
        return transport(exc, self.url, self.attempts, None, "body broke off")

    async def chunks(self, size: int = _CHUNK) -> AsyncIterator[bytes]:
        """The body's bytes as they arrive, in pieces of at most ``size`` bytes.

        A body slower than ``Timeout.min_rate`` over a window of ``Timeout.read``
        seconds is stalled: a :class:`TimeoutError`, resumed like one that broke off.
        """
        pace = self._limits.pace(self.arrived, whole=False)
        why = None
        got = 0
        try:
            async for chunk in self._resp.content.iter_chunked(size):
                got += len(chunk)
                if pace is not None and (why := pace.late(got, time.monotonic())) is not None:
                    break
                yield chunk
            else:
                return
        except self._errors as exc:
            error = self._broke(exc)
        else:
            assert why is not None
            error = TimeoutError(why, url=self.url, attempts=self.attempts)
        # Raised here, outside the handler: no transport exception rides along as context.
        raise error

    async def whole(self) -> Response:
        """Read the whole body into :attr:`body` and release: how :meth:`Session.get` consumes.

        ``max_body_size`` is counted after content decoding, so a compressed bomb is
        refused as it inflates, not after; ``Timeout.body`` and ``Timeout.min_rate`` are
        checked as each piece arrives, as for a stream (a server that sends nothing is
        the read timeout's).
        """
        resp, limits = self._resp, self._limits
        try:
            limit = limits.body
            if limit is not None:
                length = resp.content_length
                if length is not None and length > limit and "Content-Encoding" not in resp.headers:
                    raise self._too_large(f"body of {length} bytes exceeds max_body_size={limit}")
            self.body = await self._read(limit, self.arrived)
        except self._errors as exc:
            # Our own TimeoutError (a builtin one too) keeps its words.
            error = exc if isinstance(exc, TransportError) else self._broke(exc)
        else:
            return self
        finally:
            resp.release()
        raise error

    async def _read(self, limit: int | None, start: float) -> bytes:
        # aiohttp's StreamReader.read() loop (on the transport's Body), with the size and
        # time bounds checked per piece.
        content = self._resp.content
        limits = self._limits
        due = start + limits.first
        pace: Pace | None = None
        parts: list[bytes] = []
        size = 0
        while chunk := await content.readany():
            parts.append(chunk)
            size += len(chunk)
            if limit is not None and size > limit:
                raise self._too_large(f"body exceeds max_body_size={limit} (decoded)")
            if (now := time.monotonic()) >= due:
                # Made only now: a body read within the first window never needs one.
                pace = pace or limits.pace(start, whole=True)
                assert pace is not None
                if (why := pace.late(size, now)) is not None:
                    raise TimeoutError(why, url=self.url, attempts=self.attempts)
                due = pace.due
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def _too_large(self, text: str) -> BodyTooLargeError:
        return BodyTooLargeError(text, limit=self._limits.body or 0, url=self.url)

    def release(self) -> None:
        """Give the connection back to the pool (or drop it if the body is unread)."""
        self._resp.release()


def _describe(exc: BaseException) -> str:
    # aiohttp's messages may quote a URL with its query: redact it like ours.
    text = hide_urls(str(exc))
    name = type(exc).__name__
    return f"{name}: {text}" if text else name


def transport(
    exc: BaseException,
    url: str,
    attempts: int,
    deadline: float | None,
    what: str = "connection failed",
) -> TransportError:
    """The library error for a transport's failure or a time limit.

    Described, redacted, and not chained: aiohttp's exception carries the request's
    headers (the bearer token) and its full URL (the stream auth).
    """
    error: TransportError
    if isinstance(exc, builtin_timeout):
        late = deadline is not None and time.monotonic() >= deadline
        # A transport that says which of its limits ran out (Transport.failure) is quoted.
        said = what if what.startswith("timed out") else "timed out"
        text = "timed out (Timeout.total)" if late else said
        error = TimeoutError(text, url=url, attempts=attempts)
    else:
        error = TransportError(f"{what}: {_describe(exc)}", url=url, attempts=attempts)
    error.__suppress_context__ = True
    return error
