"""asyncsports: an asyncio client for the sports data service, the snooker proxy and the
live stream events listing."""

# The names below load on first use (PEP 562): `import asyncsports` itself imports
# nothing heavy, so the `asyncsports` command (asyncsports.__main__) can take over Ctrl-C
# before aiohttp and the rest load. `from asyncsports import Client` works as ever.

import importlib

from asyncsports._version import __version__

# Not `typing.TYPE_CHECKING`: importing typing would cost the start-up more than the rest
# of this module. Type checkers read the name alone as True.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from asyncsports._http.config import RequestInfo, Timeout
    from asyncsports._http.request import RequestOptions
    from asyncsports._http.sports import Sport
    from asyncsports._iter.watch import Change
    from asyncsports._wire.retry import RetryPolicy
    from asyncsports.auth import StreamingCredentials
    from asyncsports.client import Client
    from asyncsports.errors import (
        APIError,
        AsyncSportsError,
        AuthenticationError,
        BadRequestError,
        BodyTooLargeError,
        DecodeError,
        MissingDependencyError,
        NoRecordError,
        NotFoundError,
        PagingError,
        RateLimitError,
        RecordingError,
        ServerError,
        SinkError,
        TimeoutError,
        TransportError,
    )
    from asyncsports.paging import AsyncList, ResumeToken
    from asyncsports.raw import RawRecord

__all__ = [
    "APIError",
    "AsyncList",
    "AsyncSportsError",
    "AuthenticationError",
    "BadRequestError",
    "BodyTooLargeError",
    "Change",
    "Client",
    "DecodeError",
    "MissingDependencyError",
    "NoRecordError",
    "NotFoundError",
    "PagingError",
    "RateLimitError",
    "RawRecord",
    "RecordingError",
    "RequestInfo",
    "RequestOptions",
    "ResumeToken",
    "RetryPolicy",
    "ServerError",
    "SinkError",
    "Sport",
    "StreamingCredentials",
    "Timeout",
    "TimeoutError",
    "TransportError",
    "__version__",
]

_HOMES = {
    "RequestOptions": "_http.request",
    "Sport": "_http.sports",
    "RetryPolicy": "_wire.retry",
    "RequestInfo": "_http.config",
    "Timeout": "_http.config",
    "Change": "_iter.watch",
    "StreamingCredentials": "auth",
    "Client": "client",
    "AsyncList": "paging",
    "ResumeToken": "paging",
    "RawRecord": "raw",
} | {name: "errors" for name in __all__ if name.endswith("Error")}
"""Where each public name is defined (its module under asyncsports)."""


# Hidden from type checkers, which read the imports above: to them a typo stays an error.
if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        home = _HOMES.get(name)
        if home is None:
            if name.startswith("__"):
                raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
            # A submodule not imported yet (`asyncsports.errors` after `import asyncsports`).
            try:
                return importlib.import_module(f"{__name__}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{__name__}.{name}":
                    raise
                raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})


del TYPE_CHECKING
