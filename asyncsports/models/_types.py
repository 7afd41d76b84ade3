"""Shared model pieces: the wire quirks and the decode helpers.

- :func:`utc` / :func:`utc_required`: a descriptor that exposes a stored datetime as aware UTC.
  The wire writes most datetimes without a zone; msgspec decodes those as naive datetimes and
  turning them aware eagerly costs more than the decode itself, so the Struct keeps the wire value
  in a private field and the public name converts on access.
- :class:`Duration`, :func:`parse_duration`, :func:`format_duration`: ``[-][d.]hh:mm:ss[.fffffff]``
  durations as :class:`datetime.timedelta`.
- :func:`dec_hook` / :func:`enc_hook`: the hooks every decoder and :func:`encode` use.
- :func:`decoder` / :func:`decode`: cached typed decoders, and decoding that fails with
  :class:`asyncsports.errors.DecodeError` naming the type, the JSON path and the offending bytes.
- :func:`flag` / :func:`loose_bool`: a flag the service sends as a JSON boolean or as text
  (``"homeTeam": "true"``), exposed as a bool.
- :class:`Ref`, :class:`TeamRef`, :class:`Location`, :class:`Country`, :class:`Continent`:
  small shared records.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, Generic, Self, TypeVar, overload

import msgspec

from asyncsports._wire.decoding import FAILURES, Source, body_error, type_name

__all__ = [
    "ZERO_UUID",
    "Continent",
    "Country",
    "Duration",
    "Flag",
    "Location",
    "Ref",
    "TeamRef",
    "UTCDateTime",
    "dec_hook",
    "decode",
    "decoder",
    "enc_hook",
    "encode",
    "flag",
    "format_duration",
    "loose_bool",
    "parse_duration",
    "utc",
    "utc_required",
]

T = TypeVar("T")
_D = TypeVar("_D")
_S = TypeVar("_S")

ZERO_UUID = uuid.UUID(int=0)
"""The all-zero UUID, which the snooker proxy sends for an unknown ``personId``."""


# --------------------------------------------------------------------------- datetimes


_combine = datetime.combine


class _View(Generic[_S]):
    """A descriptor over the private attribute ``attr``: assigning stores the value as
    given; a subclass's ``__get__`` says how it reads (kept inline there: it runs on
    every access of a field)."""

    __slots__ = ("attr",)
    _name = ""  # how repr names it: the function that makes one

    def __init__(self, attr: str) -> None:
        self.attr = attr

    def __set__(self, instance: object, value: _S) -> None:
        setattr(instance, self.attr, value)

    def __repr__(self) -> str:
        return f"{self._name}({self.attr!r})"


class UTCDateTime(_View[_D]):
    """Descriptor exposing the datetime stored in private attribute ``attr`` as aware UTC.

    A naive value (the wire's zone-less form, which is UTC) gets ``tzinfo=UTC`` on access; an
    aware one and ``None`` pass through. Assigning stores the value as given.
    """

    __slots__ = ()
    _name = "utc"

    @overload
    def __get__(self, instance: None, owner: type[Any] | None = None) -> Self: ...
    @overload
    def __get__(self, instance: object, owner: type[Any] | None = None) -> _D: ...
    def __get__(self, instance: object | None, owner: type[Any] | None = None) -> Self | _D:
        if instance is None:
            return self
        v = getattr(instance, self.attr)
        if v is None or v.tzinfo is UTC:
            return v  # type: ignore[no-any-return]
        if v.tzinfo is None:
            return _combine(v, v.time(), UTC)  # type: ignore[return-value]  # 5x faster than replace()
        return v.astimezone(UTC)  # type: ignore[no-any-return]  # another offset: say it in UTC


def utc(attr: str) -> UTCDateTime[datetime | None]:
    """A public, aware-UTC view of the optional datetime kept in private field ``attr``."""
    return UTCDateTime(attr)


def utc_required(attr: str) -> UTCDateTime[datetime]:
    """As :func:`utc`, for a field that always holds a datetime."""
    return UTCDateTime(attr)


# --------------------------------------------------------------------------- flags

_TRUE = frozenset({"true", "1", "yes"})
_FALSE = frozenset({"false", "0", "no"})


def loose_bool(value: bool | str | None) -> bool | None:
    """A flag as sent: a JSON boolean, or text (``"true"``, ``"False "``, ``"1"``, ``"no"``).

    Text that says neither (``""``, ``"null"``, ``"unknown"``) is None, as an absent flag is:
    a value the service has not defined never fails a decode (the raw JSON keeps it).
    """
    if value is None or value is True or value is False:
        return value
    text = value.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return None


class Flag(_View[bool | str | None]):
    """Descriptor exposing the flag stored in private attribute ``attr`` (bool or text) as a bool.

    See :func:`loose_bool`. Assigning stores the value as given.
    """

    __slots__ = ()
    _name = "flag"

    @overload
    def __get__(self, instance: None, owner: type[Any] | None = None) -> Self: ...
    @overload
    def __get__(self, instance: object, owner: type[Any] | None = None) -> bool | None: ...
    def __get__(
        self, instance: object | None, owner: type[Any] | None = None
    ) -> Self | bool | None:
        if instance is None:
            return self
        v = getattr(instance, self.attr)
        if v is None or v is True or v is False:
            return v
        return loose_bool(v)


def flag(attr: str) -> Flag:
    """A public bool view of the flag kept in private field ``attr`` (``bool | str | None``)."""
    return Flag(attr)


# --------------------------------------------------------------------------- durations


class Duration(timedelta):
    """A :class:`~datetime.timedelta` decoded from ``[-][d.]hh:mm:ss[.fffffff]`` wire text.

    It exists so that msgspec hands the wire text to :func:`dec_hook`; use it as a timedelta
    (arithmetic on it returns plain timedeltas).
    """

    __slots__ = ()


_DURATION_RE = re.compile(r"([-+])?(?:(\d+)\.)?(\d+):([0-5]\d):([0-5]\d)(?:\.(\d{1,9}))?", re.ASCII)


def parse_duration(text: str) -> Duration:
    """Parse ``[-][d.]hh:mm:ss[.fffffff]`` (also an ISO 8601 ``PnDTnHnMnS``) into a Duration.

    Fraction digits beyond microseconds are rounded half up, as msgspec rounds datetimes.
    Raises ValueError on any other text.
    """
    m = _DURATION_RE.fullmatch(text)
    if m is None:
        if text.lstrip("+-")[:1] == "P":
            try:
                td = msgspec.convert(text, timedelta)
            except msgspec.ValidationError:
                pass
            else:
                return Duration(days=td.days, seconds=td.seconds, microseconds=td.microseconds)
        raise ValueError(f"invalid duration {text!r}: expected [d.]hh:mm:ss[.fffffff]")
    sign, days, hours, minutes, seconds, frac = m.groups()
    if days is not None and int(hours) > 23:
        raise ValueError(f"invalid duration {text!r}: hours above 23 after a day count")
    nanos = int(frac.ljust(9, "0")) if frac else 0
    total = (
        ((int(days or 0) * 24 + int(hours)) * 60 + int(minutes)) * 60 + int(seconds)
    ) * 1_000_000 + (nanos + 500) // 1000
    return Duration(microseconds=-total if sign == "-" else total)


def format_duration(value: timedelta) -> str:
    """Format a timedelta as the wire writes it: ``[-][d.]hh:mm:ss.fffffff`` (seven digits)."""
    total = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
    sign = "-" if total < 0 else ""
    total = abs(total)
    secs, micros = divmod(total, 1_000_000)
    mins, s = divmod(secs, 60)
    hrs, m = divmod(mins, 60)
    d, h = divmod(hrs, 24)
    day = f"{d}." if d else ""
    return f"{sign}{day}{h:02d}:{m:02d}:{s:02d}.{micros * 10:07d}"


# --------------------------------------------------------------------------- hooks

_DECODE_HOOKS: dict[type, Callable[[Any], Any]] = {}
_ENCODE_HOOKS: dict[type, Callable[[Any], Any]] = {}


def register_hooks(
    tp: type, decode: Callable[[Any], Any], encode: Callable[[Any], Any] | None = None
) -> None:
    """Teach :func:`dec_hook` (and :func:`enc_hook`) a custom type. For the model modules."""
    _DECODE_HOOKS[tp] = decode
    if encode is not None:
        _ENCODE_HOOKS[tp] = encode


def _decode_duration(obj: Any) -> Duration:
    if not isinstance(obj, str):
        raise ValueError(f"Expected duration text, got `{type(obj).__name__}`")
    return parse_duration(obj)


register_hooks(Duration, _decode_duration, format_duration)


def dec_hook(tp: type, obj: Any) -> Any:
    """msgspec decode hook of every model decoder: Duration text, and registered custom types."""
    hook = _DECODE_HOOKS.get(tp)
    if hook is None:
        raise NotImplementedError(f"no decoder for {tp!r}")
    return hook(obj)


def enc_hook(obj: Any) -> Any:
    """msgspec encode hook matching :func:`dec_hook` (Duration back to wire text, ...)."""
    hook = _ENCODE_HOOKS.get(type(obj))
    if hook is None:
        raise NotImplementedError(f"cannot encode {type(obj).__name__}")
    return hook(obj)


_ENCODER = msgspec.json.Encoder(enc_hook=enc_hook)


def encode(obj: Any) -> bytes:
    """Encode models back to JSON with wire names (datetimes as stored: zone-less stay so)."""
    return _ENCODER.encode(obj)


# --------------------------------------------------------------------------- decoding

_DECODERS: dict[Any, msgspec.json.Decoder[Any]] = {}
_LAX: dict[Any, msgspec.json.Decoder[Any]] = {}


@overload
def decoder(tp: type[T], *, lax: bool = False) -> msgspec.json.Decoder[T]: ...
@overload
def decoder(tp: Any, *, lax: bool = False) -> msgspec.json.Decoder[Any]: ...
def decoder(tp: Any, *, lax: bool = False) -> msgspec.json.Decoder[Any]:
    """The JSON decoder for ``tp`` (cached per type) with the shared :func:`dec_hook`.

    Pass it ``bytes``: fields typed ``msgspec.Raw`` (action metadata) keep views into the input
    buffer, which must then not change. :func:`decode` copies other buffers to bytes first.
    Errors are msgspec's own; use :func:`decode` for :class:`~asyncsports.errors.DecodeError`.
    ``lax``: quoted numbers decode as numbers (``strict=False``), as the live feeds send them.
    """
    if lax:
        dec = _LAX.get(tp)
        if dec is None:
            dec = _LAX[tp] = msgspec.json.Decoder(tp, dec_hook=dec_hook, strict=False)
        return dec
    dec = _DECODERS.get(tp)
    if dec is None:
        dec = _DECODERS[tp] = msgspec.json.Decoder(tp, dec_hook=dec_hook)
    return dec


_Data = bytes | bytearray | memoryview | str


@overload
def decode(tp: type[T], data: _Data, *, url: str = "", status: int | None = None) -> T: ...
@overload
def decode(tp: Any, data: _Data, *, url: str = "", status: int | None = None) -> Any: ...
def decode(tp: Any, data: _Data, *, url: str = "", status: int | None = None) -> Any:
    """Decode JSON ``data`` into ``tp``; raise DecodeError naming type, path and snippet.

    ``url`` and ``status`` say which response the body is, for the error. Non-``bytes``
    input is copied to ``bytes`` first (``msgspec.Raw`` fields reference it); a ``str``
    holding lone surrogates fails as invalid UTF-8 would.
    """
    if not isinstance(data, bytes):
        data = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    try:
        return decoder(tp).decode(data)
    except FAILURES as exc:
        raise body_error(Source(type_name(tp), url, status), exc, data) from exc


# --------------------------------------------------------------------------- shared records


class Ref(msgspec.Struct, gc=False, kw_only=True):
    """A reference to another record: ``{id, name}`` (team, player, season, stage, group)."""

    id: uuid.UUID
    name: str | None = None


class TeamRef(Ref, gc=False, kw_only=True):
    """A team reference ``{id, name, homeTeam}`` (an action's team, a statistics team).

    ``home_team`` is a bool; the service sends it as a JSON boolean in actions and as text
    (``"true"``) in statistics packets, and both read the same.
    """

    _home_team: bool | str | None = msgspec.field(name="homeTeam", default=None)

    home_team = flag("_home_team")


class Country(msgspec.Struct, gc=False, kw_only=True):
    """The country of a Location; the wire may send an empty object."""

    name: str | None = None


class Continent(msgspec.Struct, gc=False, kw_only=True):
    """The continent of a Location; the wire may send an empty object."""

    name: str | None = None


class Location(msgspec.Struct, gc=False, kw_only=True):
    """A place (a competition's, a venue's, or a player's nationality); any part may be absent."""

    name: str | None = None
    country: Country | None = None
    continent: Continent | None = None
