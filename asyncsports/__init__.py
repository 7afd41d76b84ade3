"""asyncsports: an asyncio client for the sports data service, the snooker proxy and the
live stream events listing."""

from asyncsports._request import Sport
from asyncsports._retry import RetryPolicy
from asyncsports._session import RequestInfo, Timeout
from asyncsports._version import __version__
from asyncsports._watch import Change
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
    "RequestInfo",
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
