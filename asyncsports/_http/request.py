"""Requests as plain values: paths, query encoding and argument checks. No I/O.

Resources build a :class:`Request` with these helpers; the session sends it.

The argument rule, for every argument of every resource method (also in docs/wire.md):

1. Every argument is checked here, before anything is sent, and a failed check names the
   argument: ``TypeError`` when its Python type is wrong (an int where an id goes, a str
   where a bool goes), ``ValueError`` when its value is.
2. A value from a set of names is matched ignoring case, spaces and punctuation, and sent
   in the wire spelling: ``"Live"`` is ``live``, ``"In Venue"`` is ``inVenue``, ``"Ice
   Hockey"``, ``"ICE_HOCKEY"`` and ``Sport.ICE_HOCKEY`` are ``ice-hockey``
   (:mod:`asyncsports._http.sports`). The filter
   values (``status``, ``type``, ``coverage_level``, ``restrictions``, sort fields) are open
   sets: a value the client does not know is sent as given, for the server to judge
   (``status="suspended"``); only a sort direction (``asc``, ``desc``) is closed. The
   sports are an open set (the vendor covers more than api-spec names): a name
   is put in normal form (lower case, words joined by ``-``), a known sport in any such
   spelling becomes its wire name (the vendor's table tennis too: ``"Table Tennis"`` is
   ``/v2/tabletennis``), and any other is sent for the server to judge (``"Field Hockey"``
   is ``field-hockey``); a version written before the name as the vendor does
   (``"v2/volleyball"``) is kept; only a name that cannot be one path segment (``"a/b"``,
   ``""``, ``"über"``) is refused.
3. A value with a format the spec gives is checked for it, endpoint by endpoint: an id
   the spec types UUID (fixtures' ``seasonId`` and ``fixtureId``, squads' ``teamId``) is a
   ``uuid.UUID`` or its text, sent in canonical lower case; an id it types string
   (squads' and standings' ``seasonId``, standings' ``stageId``, the ``fixtureId`` of
   actions and statistics, snooker external ids, the feed name) is any one safe path
   segment (:func:`segment`), sent as given (percent-encoded), a ``uuid.UUID`` in
   canonical form. Dates are ``datetime.date`` or ``"YYYY-MM-DD"``; integers stay within
   the bounds the spec gives; flags are ``bool``.
4. Every method takes ``extra_query`` and ``extra_headers`` (:class:`RequestOptions`):
   what the spec omits, merged after the method's own (:func:`options`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import urllib.parse
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal, TypedDict

from asyncsports._wire.secrets import HIDDEN, is_credential

__all__ = ["Param", "Request", "RequestOptions"]

Param = tuple[str, str]
Header = tuple[str, str | None]
Host = Literal["data", "streaming"]
QueryValue = str | int | float | bool | Sequence[str] | None


class RequestOptions(TypedDict, total=False):
    """What every resource method takes besides its own arguments: what the spec omits.

    Merged after the method's own, as in openai-python:

    - ``extra_query``: query parameters. A name the method sets itself is replaced;
      ``None`` drops it; a sequence of strings repeats the name; ``True``/``False`` are
      ``true``/``false``. ``{"subscribed": "true"}`` asks the fixtures listing for what
      the vendor's own consumer asks.
    - ``extra_headers``: request headers, replacing the client's own of the same name
      (any case); ``None`` drops one.
    """

    extra_query: Mapping[str, QueryValue]
    extra_headers: Mapping[str, str | None]


class Request:
    """One GET: which host, the path below it, and the query in order (names may repeat).

    ``target`` is the path and query percent-encoded, as they go on the request line. It
    is rendered once, when the request is built, and a page's request extends its
    listing's (:meth:`pages`), so that sending a request renders nothing. A Request
    is a value: nothing changes it once built.
    """

    __slots__ = ("headers", "host", "params", "path", "route", "target")

    def __init__(
        self,
        path: str,
        params: tuple[Param, ...] = (),
        host: Host = "data",
        headers: tuple[Header, ...] = (),
        route: str | None = None,
    ) -> None:
        self.path = path
        self.route = route
        """The path with its ids as ``{names}`` (``/{sport}/fixtures/{fixtureId}``), for traces."""
        self.params = params
        self.host: Host = host
        self.headers = headers
        """Headers merged after the client's own (``extra_headers``); None drops one."""
        self.target = _path(path) + _query(params, "?")

    def pages(self, name: str) -> Callable[[int], Request]:
        """The same request asking for page ``number`` in the parameter ``name`` (a plain
        word such as ``page``): the listing's target, rendered once, and the number (a page
        number needs no encoding)."""
        path, params, host, headers, route = (
            self.path,
            self.params,
            self.host,
            self.headers,
            self.route,
        )
        lead = f"{self.target}{'&' if params else '?'}{name}="

        def page(number: int) -> Request:
            req = Request.__new__(Request)
            value = str(number)
            req.path, req.params, req.host = path, (*params, (name, value)), host
            req.headers, req.route = headers, route
            req.target = lead + value
            return req

        return page

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Request):
            return NotImplemented
        mine = (self.host, self.path, self.params, self.headers)
        return mine == (other.host, other.path, other.params, other.headers)

    def __hash__(self) -> int:
        return hash((self.host, self.path, self.params, self.headers))

    def __repr__(self) -> str:
        # Header names only: a header's value may be a credential.
        more = f", headers={[k for k, _ in self.headers]!r}" if self.headers else ""
        params = tuple((k, HIDDEN if is_credential(k) else v) for k, v in self.params)
        return f"Request(path={self.path!r}, params={params!r}, host={self.host!r}{more})"

    def fingerprint(self) -> str:
        """8 hex digits naming the listing this request starts: host, path and query.

        Page parameters (``page``, ``page.page``) are left out, so every page of a
        listing has the same fingerprint; resume tokens carry it.
        """
        parts = [self.host, self.path]
        parts += [f"{k}={v}" for k, v in self.params if k not in _PAGE_PARAMS]
        return hashlib.blake2b("\n".join(parts).encode(), digest_size=4).hexdigest()


_PAGE_PARAMS = frozenset({"page", "page.page"})


def _fold(text: str) -> str:
    return "".join(c for c in text.lower() if c.isalnum())


# Whitespace, control and format characters: a URL library may strip or fold them
# (a TAB in "\t.." would vanish and leave ".."), so they are refused, never sent.
_HIDDEN = re.compile(
    r"[\s\x00-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]"
)


def visible(name: str, text: str) -> str:
    """``text`` if it holds no whitespace, control or format character, else ValueError."""
    found = _HIDDEN.search(text)
    if found is not None:
        raise ValueError(
            f"{name}: must not hold whitespace or control characters "
            f"({found.group()!r} at {found.start()}), got {text!r}"
        )
    return text


# A UUID in canonical form already: sent as it is, without parsing it.
_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def uuid_id(name: str, value: object) -> str:
    """A data-service id: a ``uuid.UUID`` or its text, as canonical lower-case text."""
    if type(value) is str and _CANONICAL_UUID.fullmatch(value):
        return value
    if isinstance(value, uuid.UUID):
        return str(value)
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected a UUID or its text, got {type(value).__name__}")
    visible(name, value)
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise ValueError(f"{name}: expected a UUID, got {value!r}") from None


def segment(name: str, value: object) -> str:
    """One safe path segment from an opaque id (str, int or UUID): sent as given, percent-encoded.

    Anything goes but what would change the path: an empty id, a ``/``, the dot
    segments ``.`` and ``..``, and whitespace or control characters (:func:`visible`) are
    ValueErrors naming the argument. The rest (``?``, ``#``, ``%``, ``+``, any letter) is
    percent-encoded when the request line is rendered.
    """
    if isinstance(value, bool) or not isinstance(value, str | int | uuid.UUID):
        raise TypeError(f"{name}: expected a str, int or UUID, got {type(value).__name__}")
    text = visible(name, str(value))
    if not text or "/" in text or text in (".", ".."):
        raise ValueError(
            f"{name}: expected one path segment (not empty, no '/', not '.' or '..'), got {value!r}"
        )
    return text


def string_id(name: str, value: object) -> str:
    """An id the spec types as a string: a ``uuid.UUID`` (canonical text) or one safe segment."""
    if isinstance(value, uuid.UUID):
        return str(value)
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected an id (a str or UUID), got {type(value).__name__}")
    return segment(name, value)


def boolean(name: str, value: bool) -> str:
    """A flag as the query wants it: ``true`` or ``false``; only a ``bool`` is taken."""
    if not isinstance(value, bool):
        raise TypeError(f"{name}: expected a bool, got {type(value).__name__}")
    return "true" if value else "false"


def narrowing(name: str, value: bool | None, wire: str) -> list[Param]:
    """A flag that only narrows (or adds to) a listing: ``[(wire, "true")]`` for True.

    False is the same as None, no parameter: the spec names only the value ``true``.
    """
    if value is None or boolean(name, value) == "false":
        return []
    return [(wire, "true")]


def date(name: str, value: dt.date | str) -> str:
    """A date as ``YYYY-MM-DD``; a datetime is taken in UTC, a string is checked."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC)
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected a date or 'YYYY-MM-DD', got {type(value).__name__}")
    try:
        return dt.date.fromisoformat(value).isoformat()
    except ValueError:
        raise ValueError(f"{name}: expected a date or 'YYYY-MM-DD', got {value!r}") from None


def choice(name: str, value: str, allowed: Iterable[str]) -> str:
    """The one of ``allowed`` that ``value`` names, else ValueError naming the argument.

    Case, spaces and punctuation do not matter, so the response spelling of a value
    (``"In Venue"``, ``"Live"``) is accepted for the filter spelling (``inVenue``, ``live``).
    """
    options = tuple(allowed)
    found = _known(name, value, options)
    if found is None:
        raise ValueError(f"{name}: expected one of {', '.join(options)}; got {value!r}")
    return found


def open_choice(name: str, value: str, known: Iterable[str]) -> str:
    """A filter value: the one of ``known`` that ``value`` names, else ``value`` as given.

    As :func:`choice`, the known values in any case, spacing or response spelling
    (``"Completed"``, ``"COMPLETED"``, ``"In Venue"``, ``"in-venue"``) become their wire
    spelling; any other value (one the service added after the spec) is sent unchanged
    for the server to judge. Only an empty or blank value is refused.
    """
    found = _known(name, value, tuple(known))
    if found is not None:
        return found
    if not value.strip():
        raise ValueError(f"{name}: expected a value, got {value!r}")
    return value


def _known(name: str, value: object, options: tuple[str, ...]) -> str | None:
    if not isinstance(value, str):
        raise TypeError(f"{name}: expected a str, got {type(value).__name__}")
    key = _fold(value)
    for option in options:
        if _fold(option) == key:
            return option
    return None


def integer(name: str, value: int, *, low: int | None = None, high: int | None = None) -> str:
    """An integer within ``[low, high]`` as text."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"{low if low is not None else '-inf'}..{high if high is not None else 'inf'}"
        raise ValueError(f"{name}: {value} is outside {bounds}")
    return str(value)


def seconds(name: str, value: float) -> float:
    """A finite, non-negative number (of seconds, or a fraction)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name}: expected a number of seconds, got {type(value).__name__}")
    if not 0 <= value < float("inf"):
        raise ValueError(f"{name}: expected a number of seconds >= 0, got {value!r}")
    return float(value)


def strings(name: str, value: str | Sequence[str]) -> list[str]:
    """One string or a sequence of them, as a list (for repeated parameters)."""
    if isinstance(value, str):
        items: list[object] = [value]
    elif isinstance(value, Sequence):
        items = list(value)
    else:
        raise TypeError(f"{name}: expected a str or a sequence of str, got {type(value).__name__}")
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"{name}: expected strings, got {type(item).__name__}")
        if not item.strip():
            raise ValueError(f"{name}: expected non-empty strings, got {item!r}")
    return [str(item) for item in items]


_FIELD_RE = re.compile(r"[A-Za-z][A-Za-z0-9_.]*")


def sort_params(
    name: str, value: str | Sequence[str], *, wire: str, fields: Iterable[str] | None = None
) -> list[Param]:
    """``<field>`` or ``<field>,asc|desc`` items as repeated ``wire`` parameters, in order.

    A field of ``fields`` may be given in any case; any other field name is sent as given
    (fields are an open set). The direction is ``asc`` or ``desc`` in any case.
    """
    known = tuple(fields) if fields is not None else None
    out: list[Param] = []
    for item in strings(name, value):
        field, comma, direction = (part.strip() for part in item.partition(","))
        if known is not None:
            field = _known(f"{name} field", field, known) or field
        if not _FIELD_RE.fullmatch(field):
            raise ValueError(f"{name} field: expected a field name, got {field!r}")
        if comma:
            direction = choice(f"{name} direction", direction, ("asc", "desc"))
        out.append((wire, f"{field},{direction}" if comma else field))
    return out


def exactly_one(**named: object) -> tuple[str, object]:
    """The one argument of ``named`` that is not None; ValueError when none or several are."""
    given = [(k, v) for k, v in named.items() if v is not None]
    if len(given) != 1:
        names = " or ".join(named)
        which = "neither" if not given else "both"
        raise ValueError(f"pass exactly one of {names} ({which} given)")
    return given[0]


# RFC 3986: what may stand unescaped in a path segment (besides "/", the separator) and
# in a query value. "%" is not among them, so an id is sent exactly as given. Text made
# only of what quoting leaves alone needs no quoting: most of it.
_PATH_SAFE = "/-._~!$'()*,;:@"
_QUERY_SAFE = "-._~!$'()*,;:@/?"
_PATH_PLAIN = re.compile(r"[A-Za-z0-9/._~!$'()*,;:@-]*")
_QUERY_WORD = r"[A-Za-z0-9._~!$'()*,;:@/?-]*"
_QUERY_PLAIN = re.compile(f"{_QUERY_WORD}={_QUERY_WORD}(?:&{_QUERY_WORD}={_QUERY_WORD})*")


def _path(path: str) -> str:
    return path if _PATH_PLAIN.fullmatch(path) else urllib.parse.quote(path, safe=_PATH_SAFE)


def _query(params: Sequence[Param], lead: str) -> str:
    """``params`` percent-encoded as ``k=v&k=v``, after ``lead`` (``?`` or ``&``); "" for none."""
    if not params:
        return ""
    raw = "&".join([f"{k}={v}" for k, v in params])
    # As it is if every name and value is plain: then the "&" and "=" are only the joins.
    if _QUERY_PLAIN.fullmatch(raw) and raw.count("&") == len(params) - 1:
        return lead + raw
    quote, safe = urllib.parse.quote, _QUERY_SAFE
    return lead + "&".join(f"{quote(k, safe=safe)}={quote(v, safe=safe)}" for k, v in params)


def target(req: Request, extra: Sequence[Param] = ()) -> str:
    """The request's path and query, percent-encoded: what goes on the request line.

    ``extra`` parameters (credentials) come first. Built here, and sent as already
    encoded, so that what reaches the wire does not depend on the URL library.
    """
    if not extra:
        return req.target
    return _path(req.path) + _query([*extra, *req.params], "?")


_OPTIONS = frozenset(RequestOptions.__annotations__)
# RFC 9110 token characters: a header name; a value must not hold a line break or NUL.
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_HEADER_BAD = re.compile(r"[\r\n\x00]")


def options(req: Request, given: Mapping[str, object]) -> Request:
    """``req`` with the ``extra_query`` and ``extra_headers`` of ``given`` merged after its own.

    ``given`` is a method's ``**extra``: any other keyword is a TypeError, as Python
    would raise for a named parameter. Without extras, ``req`` itself.
    """
    if not given:
        return req
    unknown = sorted(set(given) - _OPTIONS)
    if unknown:
        raise TypeError(f"unexpected keyword argument {unknown[0]!r}")
    query = extra_query(given.get("extra_query"))
    headers = extra_headers(given.get("extra_headers"))
    if not query and not headers:
        return req
    replaced = {k for k, _ in query}
    params = tuple(p for p in req.params if p[0] not in replaced)
    params += tuple((k, v) for k, v in query if v is not None)
    return Request(req.path, params, req.host, req.headers + headers, req.route)


def extra_query(query: object, arg: str = "extra_query") -> list[tuple[str, str | None]]:
    """``extra_query`` (or ``default_query``, ``arg``) checked, as (name, value) pairs."""
    if query is None:
        return []
    if not isinstance(query, Mapping):
        raise TypeError(f"{arg}: expected a mapping, got {type(query).__name__}")
    out: list[tuple[str, str | None]] = []
    for key, value in query.items():
        if not isinstance(key, str) or not key:
            raise ValueError(f"{arg}: expected names of text, got {key!r}")
        if value is None:
            out.append((key, None))
        elif isinstance(value, bool):
            out.append((key, boolean(f"{arg}[{key!r}]", value)))
        elif isinstance(value, str | int | float):
            out.append((key, str(value)))
        elif isinstance(value, Sequence) and all(isinstance(v, str) for v in value):
            out += [(key, v) for v in value]
        else:
            raise TypeError(
                f"{arg}[{key!r}]: expected a str, number, bool, sequence of str or None, "
                f"got {type(value).__name__}"
            )
    return out


def extra_headers(headers: object, arg: str = "extra_headers") -> tuple[Header, ...]:
    """``extra_headers`` (or ``default_headers``, ``arg``) checked, as (name, value) pairs."""
    if headers is None:
        return ()
    if not isinstance(headers, Mapping):
        raise TypeError(f"{arg}: expected a mapping, got {type(headers).__name__}")
    out: list[Header] = []
    for key, value in headers.items():
        if not isinstance(key, str) or not _HEADER_NAME.fullmatch(key):
            raise ValueError(f"{arg}: not a header name: {key!r}")
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{arg}[{key!r}]: expected a str or None, got {type(value).__name__}")
        if value is not None and _HEADER_BAD.search(value):
            raise ValueError(f"{arg}[{key!r}]: a value must not hold a line break")
        out.append((key, value))
    return tuple(out)


def merged_headers(own: Mapping[str, str], extra: Sequence[Header]) -> dict[str, str]:
    """``own`` with ``extra`` merged after: a name in any case replaces, None drops it."""
    out = dict(own)
    for key, value in extra:
        low = key.lower()
        for name in [n for n in out if n.lower() == low]:
            del out[name]
        if value is not None:
            out[key] = value
    return out
