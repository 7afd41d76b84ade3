"""What the recording client (:mod:`asyncsports._http.transports.record`) writes with:
a request's URL as host, path and query, the response headers worth replaying, and a body
as pieces with every secret hidden."""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping

from asyncsports._wire.secrets import Secrets

__all__ = ["PIECE", "Pieces", "kept_headers", "split"]

_DROPPED_HEADERS = frozenset(
    {
        "content-length",
        "content-encoding",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "set-cookie",
        "authorization",
        "proxy-authorization",
    }
)
PIECE = 64 * 1024


def kept_headers(secrets: Secrets, headers: Mapping[str, str]) -> dict[str, str]:
    """Response headers worth replaying: transport ones and cookies dropped, the rest with
    their secrets hidden (:meth:`Secrets.headers`)."""
    return secrets.headers({k: v for k, v in headers.items() if k.lower() not in _DROPPED_HEADERS})


class Pieces:
    """A body as scrubbed pieces of about :data:`PIECE` bytes, never cutting a secret.

    :meth:`feed` takes what arrived and returns a piece to write (or ``b""``); the last
    ``longest - 1`` bytes are held back, since a secret may go on in the next chunk, and
    the cut moves back to a UTF-8 character's start so that each piece stays text.
    """

    __slots__ = ("_buf", "_scrub", "size")

    def __init__(self, scrub: Secrets, size: int = PIECE) -> None:
        self._scrub = scrub
        self._buf = b""
        self.size = size

    def feed(self, chunk: bytes) -> bytes:
        buf = self._buf + chunk if self._buf else chunk
        if len(buf) < self.size:
            self._buf = buf
            return b""
        buf = self._scrub.bytes(buf)
        cut = max(0, len(buf) - max(0, self._scrub.longest - 1))
        while 0 < cut < len(buf) and (buf[cut] & 0xC0) == 0x80:
            cut -= 1
        self._buf = buf[cut:]
        return buf[:cut]

    def end(self) -> bytes:
        buf, self._buf = self._buf, b""
        return self._scrub.bytes(buf)


def split(url: str, bases: Mapping[str, str]) -> tuple[str, str, list[tuple[str, str]]]:
    """``(host, path, query)`` of a URL under one of ``bases`` (name -> base URL); the
    longest base wins (the emulator's streaming URL is under its base URL)."""
    target, _, query = url.partition("?")
    host, path = "", target
    for name, base in sorted(bases.items(), key=lambda b: -len(b[1])):
        if base and target.startswith(base):
            host, path = name, target[len(base) :]
            break
    pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
    return host, path or "/", pairs
