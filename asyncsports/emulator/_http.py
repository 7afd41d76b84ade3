"""Replies as values, query parameter parsing, and writing a reply with body faults.

Handlers return a :class:`Reply` (status, headers and a lazy iterator of body chunks);
:func:`send` writes it: small bodies in one piece with a Content-Length, large ones
chunked as they are generated, and, when a fault says so, cut, reset or corrupted.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
import socket
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from aiohttp import web
from multidict import MultiMapping

from asyncsports.emulator._faults import Fault
from asyncsports.emulator._wire import encode

__all__ = [
    "HttpError",
    "Reply",
    "boolean",
    "choice",
    "date",
    "error_reply",
    "integer",
    "json_reply",
    "send",
    "text_reply",
]


@dataclass
class Reply:
    """A response to write: ``body`` is bytes or an iterator of chunks made on demand."""

    body: bytes | Iterable[bytes]
    status: int = 200
    content_type: str = "application/json"
    headers: Mapping[str, str] = field(default_factory=dict)
    charset: str | None = None


class HttpError(Exception):
    """Raised by handlers; becomes an error reply (JSON unless ``reply`` is given)."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        headers: Mapping[str, str] | None = None,
        reply: Reply | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.reply = reply if reply is not None else error_reply(status, message, headers)


def json_reply(obj: object, status: int = 200) -> Reply:
    """A JSON body."""
    return Reply(encode(obj), status)


def text_reply(status: int, text: str, headers: Mapping[str, str] | None = None) -> Reply:
    """A plain-text body."""
    return Reply(text.encode(), status, "text/plain", headers or {}, "utf-8")


def error_reply(status: int, message: str, headers: Mapping[str, str] | None = None) -> Reply:
    """The JSON error body of docs/wire.md: ``{"error": ..., "status": ...}``."""
    return Reply(encode({"error": message, "status": status}), status, headers=headers or {})


# --------------------------------------------------------------------------- parameters


def boolean(query: MultiMapping[str], name: str) -> bool | None:
    """``true`` or ``false`` (any case), None when absent, else 400."""
    value = query.get(name)
    if value is None:
        return None
    low = value.lower()
    if low not in ("true", "false"):
        raise HttpError(400, f"{name}: expected true or false, got {value!r}")
    return low == "true"


def integer(
    query: MultiMapping[str], name: str, *, low: int | None = None, high: int | None = None
) -> int | None:
    """An integer within bounds, None when absent, else 400."""
    value = query.get(name)
    if value is None:
        return None
    try:
        number = int(value)
    except ValueError:
        raise HttpError(400, f"{name}: expected an integer, got {value!r}") from None
    if (low is not None and number < low) or (high is not None and number > high):
        raise HttpError(400, f"{name}: {number} is outside {low}..{high}")
    return number


def date(query: MultiMapping[str], name: str) -> dt.date | None:
    """A ``YYYY-MM-DD`` date, None when absent, else 400."""
    value = query.get(name)
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise HttpError(400, f"{name}: expected YYYY-MM-DD, got {value!r}") from None


def choice(query: MultiMapping[str], name: str, allowed: Iterable[str]) -> frozenset[str] | None:
    """The values given for ``name`` (repeated or comma-separated), each one of ``allowed``."""
    values = [v for item in query.getall(name, []) for v in item.split(",") if v]
    if not values:
        return None
    options = tuple(allowed)
    for v in values:
        if v not in options:
            raise HttpError(400, f"{name}: expected one of {', '.join(options)}, got {v!r}")
    return frozenset(values)


# --------------------------------------------------------------------------- writing


def _chunks(body: bytes | Iterable[bytes]) -> Iterable[bytes]:
    return (body,) if isinstance(body, bytes) else body


async def _flushed(request: web.Request) -> None:
    """Wait (briefly) until the bytes written so far have left the process."""
    transport = request.transport
    for _ in range(200):
        if transport is None or transport.is_closing() or not transport.get_write_buffer_size():
            return
        await asyncio.sleep(0.005)


async def _cut(request: web.Request, reset: bool) -> None:
    """End the connection mid-response: a TCP reset, or a plain close."""
    await _flushed(request)
    transport = request.transport
    if transport is None:
        return
    if reset:
        sock = transport.get_extra_info("socket")
        if sock is not None:
            # SO_LINGER with a zero timeout makes close() send RST instead of FIN.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        transport.abort()
    else:
        transport.close()


async def send(request: web.Request, reply: Reply, fault: Fault | None) -> web.StreamResponse:
    """Write ``reply``, applying the body effects of ``fault`` (reset, truncate, malformed)."""
    chunks = iter(_chunks(reply.body))
    first = next(chunks, b"")
    limit = None
    if fault is not None and reply.status < 400:
        if fault.malformed:
            mid = len(first) // 2
            first = first[:mid] + b"\x00" + first[mid:]
        limit = fault.reset if fault.reset is not None else fault.truncate
    second = next(chunks, None)
    if second is None and limit is None:
        return web.Response(
            body=first,
            status=reply.status,
            content_type=reply.content_type,
            charset=reply.charset,
            headers=reply.headers,
        )
    resp = web.StreamResponse(status=reply.status, headers=reply.headers)
    resp.content_type = reply.content_type
    resp.charset = reply.charset
    resp.enable_chunked_encoding()
    sent = 0
    try:
        await resp.prepare(request)
        rest = () if second is None else (second,)
        for chunk in itertools.chain((first,), rest, chunks):
            if limit is not None and sent >= limit:
                break
            sent = await _write(resp, chunk, sent, limit)
            await asyncio.sleep(0)  # let other requests in between large chunks
        if limit is not None:
            await _cut(request, reset=fault is not None and fault.reset is not None)
            return resp
        await resp.write_eof()
    except ConnectionError:
        pass  # the client went away; nothing to tell it
    return resp


async def _write(resp: web.StreamResponse, chunk: bytes, sent: int, limit: int | None) -> int:
    if limit is not None:
        chunk = chunk[: max(0, limit - sent)]
    if chunk:
        await resp.write(chunk)
    return sent + len(chunk)
