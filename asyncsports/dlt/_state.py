"""What the dlt source keeps in dlt's state between runs: a digest of each record loaded,
so that a run yields only the records that are new or changed (see :mod:`asyncsports.dlt`)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from asyncsports.dlt._tables import TABLES, record
from asyncsports.store._rows import Row

__all__ = ["copy", "digest", "loaded_digests", "new_or_changed", "settled"]

_SETTLED = frozenset({"completed"})


def digest(text: str) -> str:
    """A short digest of a record's JSON: what tells a changed record from the last run's."""
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def settled(status: str | None, deleted: bool) -> bool:
    """Whether a fixture can no longer change (completed or deleted)."""
    return deleted or (status or "").lower() in _SETTLED


def copy(value: Any) -> Any:
    """A deep copy of a state value (dicts copied, leaves shared)."""
    if isinstance(value, dict):
        return {k: copy(v) for k, v in value.items()}
    return value


def loaded_digests(state: dict[str, Any], table: str) -> dict[str, Any]:
    """The digests of ``table``'s records as last loaded, by key."""
    found: dict[str, Any] = state.setdefault("seen", {}).setdefault(table, {})
    return found


def new_or_changed(
    table: str, seen: dict[str, Any], rows: Sequence[Row], key: Sequence[int] = (0,)
) -> list[dict[str, Any]]:
    """The records of ``rows`` new or changed since last loaded (``seen`` is updated):
    ``key`` the columns that name a record."""
    out = []
    t = TABLES[table]
    for row in rows:
        k, d = "|".join(str(row[i]) for i in key), digest(row[-1])
        if seen.get(k) != d:
            seen[k] = d
            out.append(record(t, row))
    return out
