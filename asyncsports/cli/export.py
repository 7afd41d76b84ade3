"""``asyncsports export``: a store's tables as Parquet, partitioned by sport and season."""

# No `from __future__ import annotations` here: typer reads the annotations at runtime.

import sys
from pathlib import Path
from typing import Annotated

import typer

from asyncsports._wire.defaults import CONNECT_TIMEOUT

from .app import command
from .messages import say
from .options import ConnectTimeout, Globals, db_location
from .running import run_async

__all__ = ["export"]


@command(example="export --db sports.sqlite --parquet sports-parquet")
def export(
    parquet: Annotated[
        Path, typer.Option(metavar="DIR", help="Directory to write (one folder per table).")
    ],
    db: Annotated[
        str,
        typer.Option(
            callback=db_location, metavar="FILE|URL", help="SQLite file, or a postgresql://... URL."
        ),
    ] = "asyncsports.sqlite",
    connect_timeout: ConnectTimeout = CONNECT_TIMEOUT,
    *,
    cfg: Globals,
) -> None:
    """Write the tables fixtures, actions and statistics as Parquet under DIR/TABLE,
    partitioned by sport and season (hive style: sport=X/season_id=Y), readable as
    they are by DuckDB, Spark, pandas; and a mirror's standings, squads, events and
    snooker_tournaments, those with rows. Needs asyncsports[parquet] (pyarrow).

    Each table's folder is replaced: the export is a snapshot of the database.
    """
    import msgspec

    from asyncsports.store import is_postgres, redact_url
    from asyncsports.store.export import export_parquet

    counts: dict[str, int] = {}

    async def main() -> None:
        counts.update(await export_parquet(db, parquet, connect_timeout=connect_timeout))

    run_async(cfg, main)
    shown = redact_url(db) if is_postgres(db) else db
    if cfg.as_json:
        line = {"db": shown, "parquet": str(parquet), "rows": counts}
        sys.stdout.write(msgspec.json.encode(line).decode() + "\n")
    else:
        rows = ", ".join(f"{n:,} {t}" for t, n in counts.items())
        say(f"exported {rows} from {shown} to {parquet}")
