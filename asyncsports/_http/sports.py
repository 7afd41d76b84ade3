"""The sports: their names as the service spells them and their paths. No I/O.

Sports are an open set (rule 2 of :mod:`asyncsports._http.request`): a known sport in
any spelling becomes its wire name, any other name is sent in normal form for the
server to judge, and a version written before the name (``"v2/volleyball"``) is kept.
"""

from __future__ import annotations

import enum
import re

from asyncsports._http.request import visible

__all__ = ["KNOWN_SPORTS", "Sport", "sport_name", "sport_path"]


class Sport(enum.StrEnum):
    """Sports of the data service. Any other sport may be passed as a plain string."""

    AMERICAN_FOOTBALL = "american-football"
    BASKETBALL = "basketball"
    CRICKET = "cricket"
    ICE_HOCKEY = "ice-hockey"
    SNOOKER = "snooker"
    SOCCER = "soccer"
    VOLLEYBALL = "volleyball"


_SEGMENT_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_SEPARATORS = re.compile(r"[\s_-]+")
_V2 = frozenset({Sport.VOLLEYBALL, "tabletennis"})
"""Sports whose paths carry ``/v2`` (the vendor's table tennis too, which it spells so)."""
_VERSIONED = re.compile(r"\s*(v[0-9]+)/(.*)", re.IGNORECASE | re.DOTALL)


_SPORTS = {s.value.replace("-", ""): s.value for s in Sport} | {"tabletennis": "tabletennis"}
KNOWN_SPORTS = frozenset(_SPORTS.values())
"""The wire names of the sports the client knows; the service may serve others."""


def sport_name(sport: Sport | str) -> str:
    """The wire name of ``sport``: lower case, words joined by ``-``, a known sport's spelling.

    ``"Basketball"``, ``"ICE HOCKEY"``, ``"ice_hockey"``, ``"IceHockey"`` and
    ``Sport.ICE_HOCKEY`` name known sports, as do the vendor's spellings of sports outside
    :class:`Sport` (``"Table Tennis"`` is ``tabletennis``); any other name is sent in the
    same normal form (``"Field Hockey"`` is ``field-hockey``) for the server to judge. A
    name that cannot be one path segment (``"a/b"``, ``""``, ``"über"``) is a ValueError.
    """
    if not isinstance(sport, str):
        raise TypeError(f"sport: expected a Sport or a str, got {type(sport).__name__}")
    # Plain spaces separate words ("Ice Hockey"); any other blank or control is refused.
    visible("sport", sport.replace(" ", ""))
    name = _SEPARATORS.sub("-", sport.strip().lower())
    if not _SEGMENT_RE.fullmatch(name):
        raise ValueError(
            "sport: expected a Sport or a sport name of letters, digits, spaces, '-' or '_' "
            f"(optionally after a version, 'v2/'), got {sport!r}"
        )
    return _SPORTS.get(name.replace("-", ""), name)


def sport_path(sport: Sport | str) -> str:
    """``/basketball``, or ``/v2/volleyball`` for the sports whose paths carry ``/v2``.

    A name may carry its version as the vendor writes it (``"v2/volleyball"``,
    ``"v2/tabletennis"``): that prefix is kept, so a sport the client does not know yet
    can be reached under any version.
    """
    if type(sport) is str or type(sport) is Sport:
        path = _SPORT_PATHS.get(sport)
        if path is not None:
            return path
    given, version = sport, None
    if isinstance(sport, str) and not isinstance(sport, Sport):
        m = _VERSIONED.fullmatch(sport)
        if m is not None:
            version, sport = m.group(1).lower(), m.group(2)
    name = sport_name(sport)
    if version is None and name in _V2:
        version = "v2"
    path = f"/{version}/{name}" if version else f"/{name}"
    if len(_SPORT_PATHS) < _SPORT_PATHS_KEPT and type(given) in (str, Sport):
        _SPORT_PATHS[given] = path
    return path


# The paths of the sports asked for, by the argument as given: a loop of gets checks its
# sport once. Bounded, since the names come from callers; only plain str and Sport keys
# (a str subclass could hash or compare as it likes).
_SPORT_PATHS: dict[str, str] = {}
_SPORT_PATHS_KEPT = 256
