"""Names a command knows (sports, statuses, sort fields): one check and one suggestion for
every option and argument that takes them. No I/O.

The service's vocabularies are open (it may serve a sport or a status the client does not
know yet), so a name is refused only when it is a slip of a known one: within two letters
of its length and 80% alike ("basketbal"). Any other unknown name is sent for the service
to judge; a 404 for a sport then gets the same suggestion (:func:`sport_hint`).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Iterable

import typer

__all__ = [
    "NAME_MAX",
    "PATH_MAX",
    "check",
    "check_length",
    "check_sport",
    "check_sports",
    "fold",
    "slip_of",
    "sport_hint",
]

ALIKE = 0.8
NAME_MAX = 100
"""Characters of a sport name at most: the longest the service knows has 17; the bound
keeps a request's first line within what servers take (8 KiB for aiohttp's)."""
PATH_MAX = 4096
"""Characters of a path or a database URL at most: Linux's PATH_MAX (macOS's is 1024), a
path no system opens beyond."""


def check_length(option: str, what: str, value: str, most: int) -> str:
    """``value`` as given, or a usage error (exit 2) naming ``option`` and its length
    when it has more than ``most`` characters (the value itself is not echoed)."""
    if len(value) > most:
        raise typer.BadParameter(
            f"{what} of {len(value)} characters; at most {most}", param_hint=option
        )
    return value


def slip_of(value: str, known: Iterable[str]) -> str | None:
    """The known name that ``value`` is a slip of, or None (known, or unlike any)."""
    names = [k for k in known if abs(len(k) - len(value)) <= 2]
    if value in names:
        return None
    close = difflib.get_close_matches(value, names, n=1, cutoff=ALIKE)
    return close[0] if close else None


def fold(value: str) -> str:
    """``value`` in lower case, letters and digits only, as the client matches a filter
    value to the spec's (``"In Venue"`` is ``inVenue``)."""
    return "".join(c for c in value.lower() if c.isalnum())


def check(
    option: str,
    what: str,
    value: str,
    known: Collection[str],
    normal: Callable[[str], str] = fold,
) -> str:
    """``value`` as given, or a usage error (exit 2) naming ``option`` when its
    ``normal`` form is a slip of a ``known`` name's: "did you mean ...?"."""
    names = {normal(k): k for k in known}
    near = slip_of(normal(value), names)
    if near is None:
        return value
    raise typer.BadParameter(
        f"unknown {what} {value!r}: did you mean {names[near]}?", param_hint=option
    )


def _sport(value: str) -> str:
    from asyncsports._http.sports import sport_name

    try:
        return sport_name(value)
    except (TypeError, ValueError):
        return value  # not a name at all: the client refuses it with its own words


def check_sport(value: str, option: str = "'SPORT'") -> str:
    """A sport argument or option checked (see :func:`check`)."""
    from asyncsports._http.sports import KNOWN_SPORTS

    check_length(option, "a sport name", value, NAME_MAX)
    if "/" in value:  # "v2/name": a versioned path is sent as written
        return value
    return check(option, "sport", value, KNOWN_SPORTS, _sport)


def check_sports(values: list[str] | None, option: str = "'--sports'") -> list[str] | None:
    """A repeatable ``--sports`` option checked, each value (see :func:`check`)."""
    return [check_sport(v, option) for v in values] if values is not None else None


def sport_hint(value: str) -> str:
    """What to add when a sport ``value`` was not found: the closest known names.

    Empty for a known sport.
    """
    from asyncsports._http.sports import KNOWN_SPORTS, sport_name

    try:
        name = sport_name(value.rpartition("/")[2])  # "v2/volleyball" as "volleyball"
    except (TypeError, ValueError):
        return ""
    if name in KNOWN_SPORTS:
        return ""
    close = difflib.get_close_matches(name, sorted(KNOWN_SPORTS), n=3)
    if close:
        return f" (not a known sport: did you mean {' or '.join(close)}?)"
    return f" (not a known sport; known: {', '.join(sorted(KNOWN_SPORTS))})"
