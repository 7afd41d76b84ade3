"""The mirror's logic apart from either engine: how a change is logged and replayed.

The mirror's database keeps the resource tables (the backfill's ``fixtures``, ``actions``
and ``statistics``, and ``standings``, ``squads``, ``events`` and ``snooker_tournaments``),
each row with the record's wire JSON in ``json``, and beside them the change log, cursors,
marks and positions.

A write is one transaction: each row is compared with the stored one and only a row whose
content changed is written, with one line in ``changes`` (``seq`` ascending in commit
order: insert, update or delete, the table, the key and the whole row). So a ``kill -9``
at any moment loses nothing committed, and the change log holds exactly the committed
changes. ``cursors`` keeps where each named consumer of the change feed stands; ``marks``
when each piece of once-in-a-while work was last done, and ``positions`` how many records
of each live feed are committed, so that a restart carries on.

Both engines have one interface, :class:`~asyncsports.store._types.MirrorStore`, opened by
:func:`asyncsports.store.open_mirror`: :mod:`~asyncsports.store._mirror_sqlite` (one
connection on a thread of its own; a follower polls) and
:mod:`~asyncsports.store._mirror_pg` (``LISTEN/NOTIFY`` wakes a follower).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import asyncsports.store._sql as _sql
from asyncsports.store._types import TABLES, Contents, Row, RowChange

__all__ = [
    "as_contents",
    "as_count",
    "as_fixture",
    "bookkeeping",
    "change_op",
    "last_states",
    "now_text",
    "time_text",
]


def now_text() -> str:
    """This moment as ``changes.committed_at`` keeps it (ISO 8601 UTC, microseconds)."""
    return time_text(dt.datetime.now(dt.UTC))


def time_text(at: dt.datetime) -> str:
    """``at`` (aware) as ``changes.committed_at`` keeps it."""
    return at.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def change_op(table: str, new: Row, inserted: bool) -> str:
    """The op a changed row is logged as."""
    if table == "fixtures" and new[TABLES["fixtures"].index("deleted")]:
        return "delete"  # fixtureDeleted: the service says to disregard it
    return "insert" if inserted else "update"


def last_states(changes: Iterable[RowChange]) -> dict[tuple[str, tuple[Any, ...]], RowChange]:
    """The last change of each row: replaying a feed leaves each row as its last change
    says (written, or gone), whatever came before."""
    return {(c.table, tuple(c.key)): c for c in changes}


def as_count(row: Sequence[Any] | None) -> int | None:
    """The number a one-value read found (None: no row)."""
    return int(row[0]) if row is not None and row[0] is not None else None


def as_contents(row: Sequence[Any]) -> Contents:
    """What a database holds, from the row :data:`~asyncsports.store._sql.CONTENTS` read
    (two flags: the mirror's bookkeeping, any record)."""
    if row[0]:
        return "mirror"
    return "records" if row[1] else "nothing"


def as_fixture(r: Sequence[Any]) -> tuple[str, str, str | None, str | None, bool]:
    """A row of :data:`~asyncsports.store._sql.MIRROR_FIXTURES` (deleted as a bool)."""
    return (r[0], r[1], r[2], r[3], bool(r[4]))


def bookkeeping(
    marks: Iterable[str], at: float, unmarks: Iterable[str], positions: Mapping[str, int] | None
) -> list[tuple[str, list[tuple[Any, ...]]]]:
    """The statements (``?`` placeholders) and their rows that remove ``unmarks``, set
    ``marks`` to ``at`` and the live feeds' ``positions``, in a write's transaction."""
    return [
        (_sql.UNMARK, [(name,) for name in unmarks]),
        (_sql.MARK, [(name, at) for name in marks]),
        (_sql.SET_POSITION, list((positions or {}).items())),
    ]
