"""Requests as plain values: paths, query encoding and argument checks. No I/O.

Resources build a :class:`Request` with these helpers; the session sends it.
"""

from __future__ import annotations

import datetime as dt
import enum
import hashlib
import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

__all__ = ["Param", "Request", "Sport"]

Param = tuple[str, str]
Host = Literal["data", "streaming"]


class Sport(enum.StrEnum):
    """Sports of the data service. Any other sport may be passed as a plain string."""

    AMERICAN_FOOTBALL = "american-football"
    BASKETBALL = "basketball"
    CRICKET = "cricket"
    ICE_HOCKEY = "ice-hockey"
    SNOOKER = "snooker"
    SOCCER = "soccer"
    VOLLEYBALL = "volleyball"


@dataclass(frozen=True, slots=True)
class Request:
    """One GET: which host, the path below it, and the query in order (names may repeat)."""

    path: str
    params: tuple[Param, ...] = ()
    host: Host = "data"

    def with_params(self, *extra: Param) -> Request:
        """The same request with ``extra`` appended to the query."""
        return replace(self, params=self.params + extra)

    def fingerprint(self) -> str:
        """8 hex digits naming the listing this request starts: host, path and query.

        Page parameters (``page``, ``page.page``) are left out, so every page of a
        listing has the same fingerprint; resume tokens carry it.
        """
        parts = [self.host, self.path]
        parts += [f"{k}={v}" for k, v in self.params if k not in _PAGE_PARAMS]
        return hashlib.blake2b("\n".join(parts).encode(), digest_size=4).hexdigest()


_PAGE_PARAMS = frozenset({"page", "page.page"})
_SPORT_RE = re.compile(r"[a-z0-9][a-z0-9-]*")
_V2 = frozenset({Sport.VOLLEYBALL})


def sport_path(sport: Sport | str) -> str:
    """``/basketball``, or ``/v2/volleyball`` for the sports whose paths carry ``/v2``."""
    name = str(sport.value if isinstance(sport, Sport) else sport)
    if not isinstance(sport, str) or not _SPORT_RE.fullmatch(name):
        raise ValueError(f"sport: expected a Sport or a lower-case sport name, got {sport!r}")
    return f"/v2/{name}" if name in _V2 else f"/{name}"


def segment(name: str, value: object) -> str:
    """A path segment from an id (UUID, str or int), refusing what would change the path."""
    if isinstance(value, bool) or not isinstance(value, str | int | uuid.UUID):
        raise TypeError(f"{name}: expected a str, int or UUID, got {type(value).__name__}")
    text = str(value)
    if not text or "/" in text or text in (".", "..") or any(c in text for c in "?#%"):
        raise ValueError(f"{name}: not a valid id: {value!r}")
    return text


def boolean(value: bool) -> str:
    """A boolean as the query wants it: ``true`` or ``false``."""
    return "true" if value else "false"


def date(name: str, value: dt.date | str) -> str:
    """A date as ``YYYY-MM-DD``; a datetime is taken in UTC, a string is checked."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC)
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value).isoformat()
        except ValueError:
            pass
    raise ValueError(f"{name}: expected a date or 'YYYY-MM-DD', got {value!r}")


def _fold(text: str) -> str:
    return "".join(c for c in text.lower() if c.isalnum())


def choice(name: str, value: str, allowed: Iterable[str]) -> str:
    """The one of ``allowed`` that ``value`` names, else ValueError naming the argument.

    Case, spaces and punctuation do not matter, so the response spelling of a value
    (``"In Venue"``, ``"Live"``) is accepted for the filter spelling (``inVenue``, ``live``).
    """
    options = tuple(allowed)
    if isinstance(value, str):
        key = _fold(value)
        for option in options:
            if _fold(option) == key:
                return option
    raise ValueError(f"{name}: expected one of {', '.join(options)}; got {value!r}")


def integer(name: str, value: int, *, low: int | None = None, high: int | None = None) -> str:
    """An integer within ``[low, high]`` as text."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}: expected an int, got {type(value).__name__}")
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"{low if low is not None else '-inf'}..{high if high is not None else 'inf'}"
        raise ValueError(f"{name}: {value} is outside {bounds}")
    return str(value)


def seconds(name: str, value: float) -> float:
    """A finite, non-negative number of seconds."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not 0 <= value < float("inf")
    ):
        raise ValueError(f"{name}: expected a number of seconds >= 0, got {value!r}")
    return float(value)


def strings(name: str, value: str | Sequence[str]) -> list[str]:
    """One string or a sequence of them, as a list (for repeated parameters)."""
    items = [value] if isinstance(value, str) else list(value)
    for item in items:
        if not isinstance(item, str) or not item:
            raise ValueError(f"{name}: expected non-empty strings, got {item!r}")
    return items


def exactly_one(**named: object) -> tuple[str, object]:
    """The one argument of ``named`` that is not None; ValueError when none or several are."""
    given = [(k, v) for k, v in named.items() if v is not None]
    if len(given) != 1:
        names = " or ".join(named)
        which = "neither" if not given else "both"
        raise ValueError(f"pass exactly one of {names} ({which} given)")
    return given[0]
