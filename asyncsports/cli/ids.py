"""A fixture id as a table shows it: whole, or the prefix that tells the table's ids apart
(as git shortens a hash), resolved to the whole id by one listing of the sport's fixtures.

Every command that takes a FIXTURE_ID takes it through :data:`FixtureId` (checked as it
is parsed) and :class:`FixtureRef` (resolved in the command's job, before it asks for
anything): a whole UUID asks nothing more; a prefix costs one listing of the sport's
fixtures, deleted ones too (a table with ``--include-deleted`` shows them), 1,000 a page.
"""

# No `from __future__ import annotations` here: typer reads the annotations at runtime.

import re
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer

from .exits import AmbiguousIdError, UnknownIdError
from .names import NAME_MAX, check_length

if TYPE_CHECKING:  # imported where used: --help imports none of them
    from asyncsports.client import Client
    from asyncsports.models import Fixture

__all__ = ["LEAST", "FixtureId", "FixtureRef", "fixture_id", "resolve"]

LEAST = 4
"""Hex digits a prefix has at the fewest, as git asks of an abbreviated hash."""
SHOWN = 10
"""Candidates an ambiguous prefix's error names at most."""
_LAYOUT = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
"""A UUID's canonical text: a prefix has its dashes where they fall in it."""
_HEX = re.compile(r"[0-9a-f]+")
_OPTION = "'FIXTURE_ID'"


def fixture_id(value: str) -> str:
    """A FIXTURE_ID as given on the command line: a whole UUID, in canonical lower-case
    text, or a prefix of that text (``b9c40ca4``, ``b9c40ca4-1f``) of :data:`LEAST` hex
    digits or more, in lower case; anything else is a usage error (exit 2)."""
    check_length(_OPTION, "a fixture id", value, NAME_MAX)
    try:
        return str(uuid.UUID(value))
    except ValueError:
        pass
    text = value.lower()
    digits = text.replace("-", "")
    layout = "".join("-" if c == "-" else "x" for c in text)
    if _LAYOUT.startswith(layout) and len(digits) >= LEAST and _HEX.fullmatch(digits):
        return text
    raise typer.BadParameter(
        f"expected a fixture id (UUID) or its first {LEAST} hex digits or more, "
        f"as a table shows it; got {value!r}",
        param_hint=_OPTION,
    )


FixtureId = Annotated[
    str,
    typer.Argument(
        help=f"Fixture id: a UUID, or a prefix of one ({LEAST}+ hex digits) as tables show it.",
        show_default=False,
        callback=fixture_id,
    ),
]


def _whole(text: str) -> bool:
    return len(text) == 36  # fixture_id gives a whole UUID in its canonical text


def _candidate(f: "Fixture") -> str:
    when = f.start_date_utc.strftime("%Y-%m-%d %H:%M") if f.start_date_utc else "no start"
    return f"{f.id} ({f.name or 'no name'}, {f.status or 'no status'}, {when})"


async def resolve(client: "Client", sport: str, given: str) -> str:
    """The whole id of the one fixture of ``sport`` whose id starts with ``given`` (a
    :func:`fixture_id`); ``given`` itself when whole. No match is
    :class:`~asyncsports.cli.exits.UnknownIdError` (exit 5, as a 404), more than one
    :class:`~asyncsports.cli.exits.AmbiguousIdError` (a usage error, exit 2) naming them."""
    if _whole(given):
        return given
    from asyncsports.resources.fixtures import MAX_SIZE

    found: list[Fixture] = []
    listing = client.fixtures.list(sport, include_deleted=True, page_size=MAX_SIZE)
    async with listing:
        async for f in listing:
            if str(f.id).startswith(given):
                found.append(f)
    if not found:
        raise UnknownIdError(f"no fixture of {sport} has an id starting {given!r}")
    if len(found) > 1:
        named = "; ".join(map(_candidate, found[:SHOWN]))
        more = f"; and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
        raise AmbiguousIdError(
            f"fixture id {given!r} is ambiguous: {len(found)} fixtures of {sport} have ids "
            f"starting so: {named}{more}; give more of the id"
        )
    return str(found[0].id)


@dataclass(slots=True)
class FixtureRef:
    """A command's FIXTURE_ID, resolved in its job (:meth:`resolve`, a Query's
    ``resolve``) before ``id`` is read."""

    sport: str
    given: str
    _id: str | None = None

    @property
    def id(self) -> str:
        """The whole id."""
        if self._id is None:
            if not _whole(self.given):
                raise RuntimeError(f"fixture id {self.given!r} read before it was resolved")
            return self.given
        return self._id

    async def resolve(self, client: "Client") -> None:
        """Look the id up, if it is a prefix."""
        self._id = await resolve(client, self.sport, self.given)
