"""The dlt source's tables: the store's (:mod:`asyncsports.store._schema`) and snooker's
matches, their dlt columns, and a row as the record dlt loads."""

from __future__ import annotations

from typing import Any

from asyncsports.store._rows import Row
from asyncsports.store._schema import MIRROR_TABLES, RESOURCE_TABLES, Column, Table

__all__ = ["TABLES", "columns", "record"]

_SNOOKER_MATCHES = Table(
    "snooker_matches",
    (
        Column("match_id", "int", null=False),
        Column("tournament_id", "int", null=False),
        Column("round_number", "int"),
        Column("json", "json", null=False),
    ),
    ("match_id",),
)

TABLES: dict[str, Table] = {t.name: t for t in (*RESOURCE_TABLES, *MIRROR_TABLES, _SNOOKER_MATCHES)}
"""Each table the source loads, with its columns and primary key."""

_DLT_TYPE = {
    "text": "text",
    "int": "bigint",
    "flag": "bool",
    "time": "timestamp",
    "json": "json",
    "real": "double",
}


def columns(table: Table) -> list[dict[str, Any]]:
    """``table``'s columns as dlt declares them."""
    return [
        {"name": c.name, "data_type": _DLT_TYPE[c.kind], "nullable": c.null} for c in table.columns
    ]


def record(table: Table, row: Row) -> dict[str, Any]:
    """``row`` of ``table`` as the record dlt loads (flags as booleans)."""
    out = dict(zip(table.names, row, strict=True))
    for c in table.columns:
        if c.kind == "flag":
            out[c.name] = bool(out[c.name])
    return out
