"""Export a store's tables (SQLite or PostgreSQL) to Parquet, partitioned hive style,
for DuckDB, Spark, pandas and the like. Needs the ``parquet`` extra (pyarrow).

::

    rows = await export_parquet("sports.sqlite", Path("lake"))

writes ``lake/fixtures/sport=basketball/season_id=123/part-0-0.parquet`` and so on:

- ``fixtures``, ``actions`` and ``statistics`` always, by sport and season; ``actions`` and
  ``statistics`` get their fixture's ``season_id`` (as the partition);
- the mirror's tables when they hold rows: ``standings`` and ``squads`` by sport and
  season, ``snooker_tournaments`` by season, ``events`` (a few hundred rows) in one
  folder without partitions.

A row without a season goes under ``season_id=__HIVE_DEFAULT_PARTITION__`` (read back as
NULL). Values are typed from the one schema description (:mod:`asyncsports.store._schema`):
``time`` columns are UTC timestamps (microseconds), flags booleans, ``json`` the record's
JSON text. Each table's directory is replaced as a whole, and the tables are read in one
snapshot (:func:`asyncsports.store.open`), so an export is a snapshot even of a database
being written. Rows are read and written in chunks: memory stays bounded whatever the
database's size.
"""

from __future__ import annotations

import functools
import shutil
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from asyncsports._optional import need
from asyncsports.errors import SinkError
from asyncsports.store import open
from asyncsports.store._schema import MIRROR_TABLES, RESOURCE_TABLES, Kind, Table
from asyncsports.store._types import CHUNK, CONNECT_TIMEOUT

__all__ = ["PARTITIONS", "export_parquet"]

PARTITIONS: dict[str, tuple[str, ...]] = {
    "fixtures": ("sport", "season_id"),
    "actions": ("sport", "season_id"),
    "statistics": ("sport", "season_id"),
    "standings": ("sport", "season_id"),
    "squads": ("sport", "season_id"),
    "snooker_tournaments": ("season_id",),
    "events": (),
}
"""Each exported table's partition columns (hive style), in folder order."""


def _pyarrow() -> Any:
    pa = need("pyarrow", "a Parquet export")
    for part in ("compute", "dataset"):  # used as pa.compute and pa.dataset
        need(f"pyarrow.{part}", "a Parquet export")
    return pa


def _arrow_type(pa: Any, kind: Kind) -> Any:
    return {
        "text": pa.string(),
        "int": pa.int64(),
        "flag": pa.bool_(),
        "time": pa.timestamp("us", tz="UTC"),
        "json": pa.string(),
        "real": pa.float64(),
        "seq": pa.int64(),
    }[kind]


def _select(table: Table) -> str:
    """The table's rows, with the fixture's season when the table has none, ordered by
    partition so that a chunk touches few partitions (few, larger files)."""
    if table.name not in _BY_FIXTURE:
        cols = ", ".join(table.names)
        order = ", ".join(dict.fromkeys((*PARTITIONS[table.name], *table.key)))
        return f"SELECT {cols} FROM {table.name} ORDER BY {order}"
    cols = ", ".join(f"t.{c}" for c in table.names)
    order = ", ".join(("t.sport", "f.season_id", *(f"t.{k}" for k in table.key)))
    return (
        f"SELECT {cols}, f.season_id FROM {table.name} t "
        f"LEFT JOIN fixtures f ON f.id = t.fixture_id ORDER BY {order}"
    )


_BY_FIXTURE = ("actions", "statistics")  # filed under their fixture's season


def _batch(pa: Any, schema: Any, kinds: Sequence[Kind], rows: list[tuple[Any, ...]]) -> Any:
    columns = []
    for field, kind, values in zip(schema, kinds, zip(*rows, strict=True), strict=True):
        if kind == "time" and any(isinstance(v, str) for v in values):
            # SQLite's ISO 8601 text with a 'Z': Arrow parses it, in C.
            array = pa.compute.cast(pa.array(values, pa.string()), field.type)
        elif kind == "flag":
            array = pa.array([None if v is None else bool(v) for v in values], pa.bool_())
        else:
            array = pa.array(values, field.type)
        columns.append(array)
    return pa.Table.from_arrays(columns, schema=schema)


async def _write_table(
    pa: Any, table: Table, chunks: AsyncIterator[list[tuple[Any, ...]]], out: Path
) -> int:
    kinds: list[Kind] = [c.kind for c in table.columns]
    fields = [(c.name, _arrow_type(pa, c.kind)) for c in table.columns]
    if table.name in _BY_FIXTURE:
        kinds.append("text")
        fields.append(("season_id", pa.string()))
    schema = pa.schema(fields)
    names = PARTITIONS[table.name]
    partitioning = (
        pa.dataset.partitioning(pa.schema([schema.field(n) for n in names]), flavor="hive")
        if names
        else None
    )
    n = 0
    try:
        await anyio.to_thread.run_sync(_replace, out)
        async for number, rows in _enumerate(chunks):
            # In a thread: the next chunk is read meanwhile (PostgreSQL).
            write = functools.partial(
                pa.dataset.write_dataset,
                _batch(pa, schema, kinds, rows),
                out,
                format="parquet",
                partitioning=partitioning,
                basename_template=f"part-{number}-{{i}}.parquet",
                existing_data_behavior="overwrite_or_ignore",
            )
            await anyio.to_thread.run_sync(write)
            n += len(rows)
    except OSError as exc:  # pyarrow's I/O errors are OSErrors too
        raise SinkError(f"cannot write {out}: {exc}") from exc
    return n


def _replace(out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)


async def _enumerate(chunks: AsyncIterator[Any]) -> AsyncIterator[tuple[int, Any]]:
    n = 0
    async for chunk in chunks:
        yield n, chunk
        n += 1


async def export_parquet(
    db: str | Path, directory: Path, *, connect_timeout: float = CONNECT_TIMEOUT
) -> dict[str, int]:
    """Write the tables of ``db`` (a SQLite file or a ``postgresql://`` URL) under
    ``directory``/TABLE: the resource tables, and the mirror's that hold rows; returns
    rows per table written. A database that cannot be reached fails within
    ``connect_timeout`` seconds."""
    pa = _pyarrow()
    directory = Path(directory)
    counts: dict[str, int] = {}
    async with open(db, connect_timeout=connect_timeout) as store:
        missing = [t.name for t in RESOURCE_TABLES if t.name not in store.tables]
        if missing:
            raise SinkError(f"{store.name} has no table {missing[0]}: not a store to export")
        mirrored = [t for t in MIRROR_TABLES if t.name in store.tables]
        with_rows = [t for t in mirrored if await store.value(f"SELECT count(*) FROM {t.name}")]
        for table in (*RESOURCE_TABLES, *with_rows):
            chunks = store.query(_select(table), chunk=CHUNK)
            counts[table.name] = await _write_table(pa, table, chunks, directory / table.name)
    return counts
