"""``asyncsports load``: the service into any warehouse dlt loads, incrementally
(:mod:`asyncsports.dlt`), with a progress bar per resource."""

# No `from __future__ import annotations` here: typer reads the annotations at runtime.

import dataclasses
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from asyncsports._optional import need
from asyncsports.errors import AsyncSportsError, SinkError

from .app import command
from .messages import fail, stderr
from .options import Globals, PageSize, Sports
from .running import run

if TYPE_CHECKING:  # imported where used: --help imports none of them
    from asyncsports.client import Client

__all__ = ["load"]


@dataclasses.dataclass
class _Outcome:
    loaded: dict[str, int]
    requests: int
    seconds: float


def _cause(exc: BaseException) -> BaseException:
    """The client's error behind a failed dlt step, if one is; else ``exc``."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, AsyncSportsError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return exc


def _summary(cfg: Globals, out: _Outcome, destination: str, dataset: str) -> None:
    import msgspec

    if cfg.as_json:
        line = {
            "destination": destination,
            "dataset": dataset,
            "loaded": out.loaded,
            "requests": out.requests,
            "seconds": round(out.seconds, 3),
        }
        sys.stdout.write(msgspec.json.encode(line).decode() + "\n")
        return
    from rich import box
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False)
    console.print(f"Loaded in {out.seconds:.1f} s into {destination}, dataset {dataset}.")
    table = Table("table", "rows loaded now", box=box.SIMPLE_HEAD)
    for name, rows in out.loaded.items():
        table.add_row(name, f"{rows:,}")
    console.print(table)
    console.print(f"{out.requests:,} requests.")


Destination = Annotated[
    str,
    typer.Option(
        metavar="NAME",
        help="A dlt destination: duckdb, postgres, bigquery, snowflake, filesystem, ... "
        "Credentials the dlt way: .dlt/secrets.toml or DESTINATION__<NAME>__CREDENTIALS.",
    ),
]
Dataset = Annotated[str, typer.Option(metavar="NAME", help="The dataset (schema) to load into.")]
Pipeline = Annotated[
    str,
    typer.Option(
        metavar="NAME",
        help="The dlt pipeline: what it loaded (its state) is kept under this name, so "
        "the next run loads only what changed. DuckDB's file is NAME.duckdb by default.",
    ),
]
PipelinesDir = Annotated[
    Path | None,
    typer.Option(
        metavar="DIR", help="Where dlt keeps its pipelines (default: dlt's, ~/.dlt/pipelines)."
    ),
]
Refresh = Annotated[
    bool,
    typer.Option(
        "--refresh", help="Drop the tables and state of earlier runs and load everything again."
    ),
]


@dataclasses.dataclass(frozen=True)
class _Where:
    """Where a run loads: the dlt pipeline's settings."""

    destination: str
    dataset: str
    pipeline: str
    pipelines_dir: Path | None
    refresh: bool


@command(example="--emulator load --destination duckdb --sports soccer")
def load(
    destination: Destination = "duckdb",
    dataset: Dataset = "sports",
    pipeline: Pipeline = "asyncsports",
    pipelines_dir: PipelinesDir = None,
    sports: Sports = None,
    concurrency: Annotated[int, typer.Option(min=1, max=64, help="Fixtures fetched at once.")] = 8,
    page_size: PageSize = 1000,
    refresh: Refresh = False,
    *,
    cfg: Globals,
) -> None:
    """Load fixtures, actions, statistics, standings, squads, live stream events and the
    snooker lists into a dlt destination; a later run loads only what changed.

    Each table has key columns and the record's JSON as sent (column json), merged on
    its primary key. Needs asyncsports[dlt], and dlt's extra for the destination
    (pip install 'dlt[postgres]', say; DuckDB comes with asyncsports[dlt]).
    """
    try:
        dlt = need("dlt", "asyncsports load")
        from asyncsports.dlt import sports_source
    except Exception as exc:
        fail(cfg, exc)
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bars

    from asyncsports.backfill import DEFAULT_SPORTS

    from .bars import BarsProgress, Rate

    if cfg.rate_limit is None and not cfg.emulator:
        # The service asks for about 5 requests a second; a bulk copy would go far above.
        cfg = dataclasses.replace(cfg, rate_limit=5.0)
    err = stderr()
    columns = (
        TextColumn("{task.description:<19}"),
        BarColumn(),
        MofNCompleteColumn(),
        Rate(),
        TimeElapsedColumn(),
    )
    where = _Where(destination, dataset, pipeline, pipelines_dir, refresh)
    outcome: list[_Outcome] = []

    async def job(client: "Client") -> None:
        bars = Bars(*columns, console=err, disable=not err.is_terminal)
        t0, sent = time.monotonic(), client.requests_sent
        try:
            source = sports_source(
                client,
                tuple(sports or DEFAULT_SPORTS),
                concurrency=concurrency,
                page_size=page_size,
                progress=BarsProgress(bars),
            )
            loaded = await _run(dlt, source, where)
        finally:
            bars.stop()
        outcome.append(_Outcome(loaded, client.requests_sent - sent, time.monotonic() - t0))

    run(cfg, job, max_connections=concurrency)
    _summary(cfg, outcome[0], destination, dataset)


async def _run(dlt: Any, source: Any, where: _Where) -> dict[str, int]:
    """Run the dlt pipeline on ``source`` (in a thread: dlt blocks); rows loaded a table."""
    import asyncio

    kw: dict[str, Any] = {"pipelines_dir": str(where.pipelines_dir)} if where.pipelines_dir else {}
    try:
        pipe = dlt.pipeline(
            pipeline_name=where.pipeline,
            destination=where.destination,
            dataset_name=where.dataset,
            **kw,
        )
        await asyncio.to_thread(pipe.run, source, refresh="drop_sources" if where.refresh else None)
    except Exception as exc:
        cause = _cause(exc)
        if cause is exc:  # the error line says its causes (running.with_causes)
            raise SinkError(f"dlt could not load into {where.destination}") from exc
        raise cause from exc
    counts = pipe.last_trace.last_normalize_info.row_counts
    return {t: n for t, n in counts.items() if not t.startswith("_dlt")}
