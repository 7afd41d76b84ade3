"""Which columns of a table fit a terminal's width, and how wide each is: pure arithmetic."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

__all__ = ["GAP", "Fit", "choose", "prefix", "total"]

GAP = 2
"""Characters between two columns, as ``gh`` has them."""


@dataclass(frozen=True, slots=True)
class Fit:
    """How wide one column may be.

    ``full`` shows every cell as it is; ``compact`` every cell whole in a shorter form
    (a date without its year, an id's prefix), ``full`` if it has none; ``floor`` the
    narrowest it may wrap to (a name), ``compact`` if it never wraps. ``eager``: its full
    form comes before any column of lower priority (a whole id, which the next command
    takes, is worth more than one more column; a date's year is not).
    """

    full: int
    compact: int
    floor: int
    eager: bool = False


def total(widths: Sequence[int], gap: int = GAP) -> int:
    """The width of a table whose columns are ``widths`` wide."""
    return sum(widths) + gap * max(len(widths) - 1, 0)


def choose(fits: Sequence[Fit], width: int, keep: int = 1, gap: int = GAP) -> list[int]:
    """The widths of the columns shown: the leading ones of ``fits``, in priority order.

    The first ``keep`` are always shown, in their compact forms; then each next one
    while it fits ``width`` in its compact form (the first that does not ends the table:
    lower ones are dropped rather than a higher one). An eager column takes its full form,
    if there is room, before the next column is tried; the others take theirs, in
    priority order, once the columns are chosen. Only when the first ``keep`` do not
    fit in their compact forms do the columns that wrap narrow, the widest first, down
    to their floors: the table is then wider than ``width`` if even that is too wide.
    """
    widths = [f.compact for f in fits[: min(max(keep, 1), len(fits))]]

    def widen(i: int) -> None:
        if total(widths, gap) + fits[i].full - widths[i] <= width:
            widths[i] = fits[i].full

    for i in [i for i, f in enumerate(fits[: len(widths)]) if f.eager]:
        widen(i)
    while len(widths) < len(fits) and total([*widths, fits[len(widths)].compact], gap) <= width:
        widths.append(fits[len(widths)].compact)
        if fits[len(widths) - 1].eager:
            widen(len(widths) - 1)
    for i in range(len(widths)):
        widen(i)
    while total(widths, gap) > width:
        narrower = [i for i, w in enumerate(widths) if w > fits[i].floor]
        if not narrower:
            break
        widths[max(narrower, key=lambda i: widths[i])] -= 1
    return widths


def prefix(ids: Collection[str], least: int = 8) -> int:
    """How many leading characters tell ``ids`` apart, ``least`` at the fewest (as git
    shortens a commit's hash); the longest id's length if nothing shorter does."""
    longest = max(map(len, ids), default=0)
    distinct = set(ids)
    for n in range(min(least, longest), longest):
        if len({i[:n] for i in distinct}) == len(distinct):
            return n
    return longest
