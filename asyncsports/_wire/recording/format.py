"""The line format of a recording, shared by its writer and its reader: the header's
``format`` and ``version``, one event a line, bytes as ``text`` or ``b64``, and the
:func:`key` a replay matches a request by."""

from __future__ import annotations

import base64
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from asyncsports._wire.secrets import HIDDEN, is_credential

__all__ = [
    "FORMAT",
    "REDACTED",
    "VERSION",
    "decode_payload",
    "encode",
    "key",
    "payload",
    "position",
]

FORMAT = "asyncsports-recording"
VERSION = 1
REDACTED = HIDDEN
"""What a secret is written as (the secrets policy's mark)."""
_IGNORED = frozenset({"timestamp", "operatorId"})
"""Query parameters a replay does not match on, beside credentials (any
:func:`~asyncsports._wire.secrets.is_credential` name): who asks, and when it signed, vary."""
_LIVE_IGNORED = frozenset({"startPosition", "speed"})

_encoder = msgspec.json.Encoder()


def encode(event: Mapping[str, Any]) -> bytes:
    """One line of the file."""
    return _encoder.encode(event) + b"\n"


def payload(data: bytes) -> dict[str, str]:
    """Bytes as a field: ``text`` when they are UTF-8 (JSON always is), else ``b64``."""
    try:
        return {"text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"b64": base64.b64encode(data).decode("ascii")}


def decode_payload(event: Mapping[str, Any]) -> bytes:
    """The bytes of a :func:`payload` field (ValueError: not base64, or not text)."""
    if "text" in event:
        text: str = event["text"]
        return text.encode("utf-8")
    return base64.b64decode(event.get("b64", ""), validate=True)


def key(host: str, path: str, query: Iterable[tuple[str, str]] | Iterable[list[str]]) -> str:
    """What a replay matches a request by: host, path and the query sorted by name (the
    order of one name's values kept), credentials and live positions left out."""
    ignored = _LIVE_IGNORED | _IGNORED if host == "live" else _IGNORED
    kept = sorted(
        ((n, v) for n, v in query if n not in ignored and not is_credential(n)), key=lambda p: p[0]
    )
    qs = urllib.parse.urlencode(kept)
    return f"{host} {path}" + (f"?{qs}" if qs else "")


def position(raw: str) -> int | None:
    """A ``startPosition`` as given: ASCII digits, at most 18 (None: not one). ``str.isdigit``
    takes ``²`` and 5,000 digits, which ``int`` refuses or takes long over."""
    if not raw or len(raw) > 18 or not raw.isascii() or not raw.isdigit():
        return None
    return int(raw)
