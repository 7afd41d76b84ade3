"""Classifying one websocket message of a live feed (sans I/O)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

import msgspec

from asyncsports._wire.decoding import FAILURES, Failure, type_name
from asyncsports.models import Action, Statistics
from asyncsports.models._types import dec_hook

FeedKind = Literal["actions", "statistics"]
Record: TypeAlias = Action | Statistics

# --------------------------------------------------------------------------- messages


@dataclass(slots=True)
class Packet:
    """A record of the feed. ``seq`` is its ``fixtureSeqNum`` (None when it has none)."""

    record: Record
    seq: int | None


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """A keep-alive between packets (any shape that says heartbeat, ping or pong)."""


@dataclass(frozen=True, slots=True)
class Ack:
    """An acknowledgement (the connection is authorised, subscribed, connected)."""

    text: str = ""


@dataclass(frozen=True, slots=True)
class AuthFailed:
    """The token was refused ("The supplied authentication is invalid", JSON or not)."""

    text: str = ""


@dataclass(frozen=True, slots=True)
class Warned:
    """A warning from the server on an open socket (the vendor's ``"level": "WARN"``
    message: an unknown fixture, say). Not a record; the client asks the service why."""

    text: str = ""


@dataclass(frozen=True, slots=True)
class Status:
    """A status message of the vendor's that is not a record: golf's ``Alarm`` (``kind``
    ``"alarm"``, ``text`` the alarm), another ``eventElementType`` (``"status"``, ``text``
    the type) or an ``INFO`` notice of no known words (``"notice"``, ``text`` the
    message). ``data``: its bytes, as sent. A feed's health event
    (:class:`~asyncsports._wire.live.health.VendorStatus`), never a record."""

    kind: str
    text: str
    data: bytes = b""


@dataclass(frozen=True, slots=True)
class Unknown:
    """Anything else: never yielded, but it shows the socket is alive."""

    data: bytes = b""


@dataclass(frozen=True, slots=True)
class Malformed:
    """A message that looks like a packet of the feed and does not decode."""

    data: bytes
    error: Failure
    target: str


Message: TypeAlias = Packet | Heartbeat | Ack | AuthFailed | Warned | Status | Unknown | Malformed

HEARTBEAT = Heartbeat()

_DECODERS: dict[FeedKind, msgspec.json.Decoder[Any]] = {
    "actions": msgspec.json.Decoder(Action, dec_hook=dec_hook, strict=False),
    "statistics": msgspec.json.Decoder(Statistics, dec_hook=dec_hook, strict=False),
}
_TYPES: dict[FeedKind, type] = {"actions": Action, "statistics": Statistics}
# Keys that only a packet of the feed has: a message with one of them is a packet or malformed.
_MARKERS: dict[FeedKind, tuple[str, ...]] = {
    "actions": ("fixtureAction",),
    "statistics": ("teamActionAggregates", "advancedSportStatistics"),
}


class _Seq(msgspec.Struct):
    fixtureSeqNum: Any = None  # the wire's name


_SEQ = msgspec.json.Decoder(_Seq)
_ANY = msgspec.json.Decoder()
_AUTH_INVALID = "supplied authentication is invalid"
_HEARTBEAT_WORDS = ("heartbeat", "ping", "pong", "keepalive", "keep-alive")
_ACK_WORDS = ("authori", "authenticated", "subscribed", "connected", "welcome")
_WARN_LEVELS = ("warn", "warning")
_ERROR_LEVELS = ("error", "fatal")


def live_decoder(kind: FeedKind) -> msgspec.json.Decoder[Any]:
    """The lax decoder of a feed's packets: quoted numbers (``"12"``, ``"1.5"``) decode too.

    ``strict=False`` costs nothing measurable (about 1% on an action record), but it also
    reads ``"true"`` as a bool and a number as a datetime, so the REST models keep strict
    decoders and the live path has its own.
    """
    return _DECODERS[kind]


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def _words(doc: Any, depth: int = 0) -> str:
    """The keys and text of a small decoded message, lower-cased, for looking up words."""
    if depth > 3:
        return ""
    if isinstance(doc, str):
        return doc.lower()
    if isinstance(doc, dict):
        return " ".join(f"{k.lower()} {_words(v, depth + 1)}" for k, v in list(doc.items())[:16])
    if isinstance(doc, list):
        return " ".join(_words(v, depth + 1) for v in doc[:16])
    return ""


def _shaped(doc: Any, raw: bytes) -> Message | None:
    """The vendor's documented shapes: ``{"message": ..., "level": ...}`` (WARN and ERROR
    by their level; INFO by its words, else a notice) and golf's
    ``{"eventElementType": ...}`` status messages (a heartbeat, an alarm...), none of them
    a record."""
    if not isinstance(doc, dict):
        return None
    element = doc.get("eventElementType")
    if isinstance(element, str):
        if "heartbeat" in element.lower():
            return HEARTBEAT
        if element.strip().lower() == "alarm":
            alarm = doc.get("alarm")
            return Status("alarm", alarm if isinstance(alarm, str) else "", raw)
        return Status("status", element, raw)
    level = doc.get("level")
    if not isinstance(level, str):
        return None
    text = doc.get("message")
    text = text if isinstance(text, str) else ""
    level = level.strip().lower()
    if level in _ERROR_LEVELS:
        return AuthFailed(text or "the server refused the connection (level ERROR)")
    if level in _WARN_LEVELS:
        return Warned(text)
    kind = _text_kind(_words(doc), raw)
    # An INFO word that is neither an acknowledgement nor a heartbeat is the vendor's
    # notice: a status for the feed's health, not a message of unknown shape.
    return Status("notice", text, raw) if isinstance(kind, Unknown) else kind


def _text_kind(words: str, raw: bytes) -> Message:
    """A message that is not a packet, by the words in it (``words`` lower-cased)."""
    if _AUTH_INVALID in words:
        return AuthFailed(raw.decode("utf-8", "replace").strip().strip("{}").strip())
    if any(w in words for w in _HEARTBEAT_WORDS):
        return HEARTBEAT
    if any(w in words for w in _ACK_WORDS) and "unauthori" not in words and "not " not in words:
        return Ack(raw.decode("utf-8", "replace").strip())
    return Unknown(raw)


def classify(data: bytes | bytearray | memoryview | str, kind: FeedKind) -> Message:
    """What one websocket message of a ``kind`` feed is. Pure; never raises.

    The packet decode is tried first (the hot path costs one msgspec decode). A statistics
    packet must carry statistics (aggregates, advanced statistics or a ``seqNum``): a
    message holding only a ``fixtureId`` and a ``timestamp`` (a heartbeat, perhaps) is not.
    """
    if not isinstance(data, bytes):
        data = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    failure: Failure | None = None
    try:
        record = _DECODERS[kind].decode(data)
    except FAILURES as exc:
        failure = exc
    else:
        if kind == "actions":
            return Packet(record, _int(record.fixture_action.fixture_seq_num))
        if (
            record.team_action_aggregates
            or record.advanced_sport_statistics is not None
            or record.seq_num is not None
        ):
            try:
                seq = _int(_SEQ.decode(data).fixtureSeqNum)
            except FAILURES:  # pragma: no cover - it decoded a moment ago
                seq = None
            return Packet(record, seq)
    try:
        doc = _ANY.decode(data)
    except FAILURES:
        text = data.decode("utf-8", "replace")
        if failure is not None and any(f'"{m}"' in text for m in _MARKERS[kind]):
            return Malformed(data, failure, type_name(_TYPES[kind]))
        return _text_kind(text.lower(), data)
    if isinstance(doc, dict) and failure is not None and any(m in doc for m in _MARKERS[kind]):
        return Malformed(data, failure, type_name(_TYPES[kind]))
    return _shaped(doc, data) or _text_kind(_words(doc), data)
