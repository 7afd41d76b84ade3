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
    narrowest it may wrap to (a name), ``compact`` if it never wraps.
    """

    full: int
    compact: int
    floor: int


def total(widths: Sequence[int], gap: int = GAP) -> int:
    """The width of a table whose columns are ``widths`` wide."""
    return sum(widths) + gap * max(len(widths) - 1, 0)


def choose(fits: Sequence[Fit], width: int, keep: int = 1, gap: int = GAP) -> list[int]:
    """The widths of the columns shown: the leading ones of ``fits``, in priority order.

    The first ``keep`` are always shown, then each next one while all fit ``width`` in
    their compact forms (the first that does not ends the table: lower ones are dropped
    rather than a higher one). Then, in priority order, each takes its full form if
    there is room for it. Only when the first ``keep`` do not fit in their compact
    forms do the columns that wrap narrow, the widest first, down to their floors: the
    table is then wider than ``width`` if even that is too wide.
    """
    n = min(max(keep, 1), len(fits))
    while n < len(fits) and total([f.compact for f in fits[: n + 1]], gap) <= width:
        n += 1
    widths = [f.compact for f in fits[:n]]
    for i, fit in enumerate(fits[:n]):
        if total(widths, gap) + fit.full - widths[i] <= width:
            widths[i] = fit.full
    while total(widths, gap) > width:
        narrower = [i for i, w in enumerate(widths) if w > fits[i].floor]
        if not narrower:
            break
        widest = max(narrower, key=lambda i: widths[i])
        widths[widest] -= 1
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
