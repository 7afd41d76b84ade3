"""``asyncsports backfill``: the bulk copy into SQLite, with a progress bar per phase.

Its options are named after the fields of :class:`asyncsports.backfill.Scope` and the
keywords of :class:`asyncsports.backfill.Backfill`.
"""

# No `from __future__ import annotations` here: typer reads the annotations at runtime.

import dataclasses
import datetime as dt
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from asyncsports._signals import interrupts
from asyncsports._wire.defaults import CONNECT_TIMEOUT, PATIENCE
from asyncsports.errors import NotFoundError, SinkError

from .app import command
from .exits import INTERRUPTED, code_for
from .messages import fail_parts, say, stderr
from .names import sport_hint
from .options import ConnectTimeout, Db, Globals, PageSize, Sports, date_option, day
from .running import run
from .workers import WORKER_KILLED, spread

if TYPE_CHECKING:  # imported where used: --help imports none of them
    from asyncsports.backfill import Report, Scope
    from asyncsports.client import Client


def _summary(cfg: Globals, report: "Report") -> None:
    import msgspec
    from rich import box
    from rich.console import Console
    from rich.table import Table

    if cfg.as_json:
        sys.stdout.write(msgspec.json.encode(report.as_dict()).decode() + "\n")
        return
    console = Console(highlight=False)
    state = "finished" if report.finished else "stopped"
    resumed = f", resumed ({report.skipped:,} units were done before)" if report.resumed else ""
    console.print(f"Backfill {state} in {report.seconds:.1f} s{resumed}.")
    table = Table("table", "rows", "written now", box=box.SIMPLE_HEAD)
    for name, rows in report.rows.items():
        table.add_row(name, f"{rows:,}", f"{report.written.get(name, 0):,}")
    console.print(table)
    console.print(
        f"{report.requests:,} requests, {report.retries:,} retries; "
        f"{report.without_statistics:,} started fixtures have no statistics yet. "
        f"Database: {report.db}"
    )
    if report.not_found:
        shown = ", ".join(report.not_found[:5]) + (" ..." if len(report.not_found) > 5 else "")
        console.print(f"Not found (404, skipped): {shown}", style="yellow")


def _fill(
    cfg: Globals, db: str, scope: "Scope", concurrency: int, restart: bool, connect_timeout: float
) -> "Report":
    """Run the backfill with progress bars on stderr (a terminal only).

    The first SIGINT or SIGTERM stops it cleanly (what is fetched is committed, and the
    report says interrupted); the second cancels it (see interrupts.py).
    """
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bars

    from asyncsports.backfill import Backfill, Report

    from .bars import BarsProgress, Rate

    err = stderr()
    columns = (
        TextColumn("{task.description:<10}"),
        BarColumn(),
        MofNCompleteColumn(),
        Rate(),
        TimeElapsedColumn(),
    )
    outcome: list[Report] = []

    async def job(client: "Client") -> None:
        # Not entered: the bars start at the first report (BarsProgress).
        bars = Bars(*columns, console=err, disable=not err.is_terminal)
        try:
            work = Backfill(
                client,
                db,
                scope,
                concurrency=concurrency,
                restart=restart,
                progress=BarsProgress(bars),
                connect_timeout=connect_timeout,
            )

            def stop() -> None:
                err.print(
                    "asyncsports: stopping: saving what is fetched (Ctrl-C again to quit at once)"
                )
                work.stop()

            with interrupts.stopping(stop):
                outcome.append(await work.run())
        finally:
            bars.stop()

    # It says how a signal ended it and exits with that code in _exit, after its summary.
    run(cfg, job, max_connections=concurrency, interrupted=_resume_line(db), says_interrupt=True)
    return outcome[0]


def _resume_line(db: str | Path) -> str:
    from asyncsports.store import is_postgres, redact_url

    shown = redact_url(str(db)) if is_postgres(db) else db
    return f"asyncsports: interrupted; run the same command again to resume ({shown})"


def _missing(scope: "Scope", report: "Report", named_sports: bool) -> list[str]:
    """What the user asked for that the service does not have, every listing of it
    having answered 404: a sport named with --sports, a --season-id, or, when every
    listing answered 404, those listings. A run then did nothing it was asked to."""
    from asyncsports.backfill import listing_key

    gone = set(report.not_found)
    listings = scope.listings()

    def absent(these: Iterable[tuple[str, str | None]]) -> bool:
        return all(listing_key(sport, season) in gone for sport, season in these)

    missing = [
        f"season {season}"
        for season in dict.fromkeys(scope.seasons)
        if absent(p for p in listings if p[1] == season)
    ]
    if named_sports:
        missing[:0] = [
            f"sport {sport}{sport_hint(sport)}"
            for sport in dict.fromkeys(scope.sports)
            if absent(p for p in listings if p[0] == sport)
        ]
    if not missing and gone and absent(listings):
        missing = list(report.not_found)
    return missing


NOT_FOUND = code_for(NotFoundError)

EPILOG = (
    f"A run that finds nothing it was asked for exits {NOT_FOUND}: a --sports value or a "
    "--season-id the service answers 404 for (every listing of it), or every listing "
    "answering 404. The rest of the run is done and kept. A date range without fixtures "
    "is an answer, not a mistake: it exits 0 with no rows.\n\n"
    f"A PostgreSQL --db that cannot be reached fails within --connect-timeout, exit "
    f"{code_for(SinkError)}; one lost during the run is waited for up to "
    f"{PATIENCE:.0f} s.\n\n"
    "With --workers N: 0 when every worker exited 0; else the code of the first worker "
    f"(in start order) that did not (see asyncsports --help); {WORKER_KILLED} when that worker "
    "was killed by a signal (SIGKILL, the out-of-memory killer): its units go to the "
    "other workers once its lease lapses, and the same command run again resumes the job."
)


@command(epilog=EPILOG, example="--emulator backfill --sports soccer --db sports.sqlite")
def backfill(
    sports: Sports = None,
    seasons: Annotated[
        list[str] | None,
        typer.Option("--season-id", metavar="ID", help="Only this season; repeatable."),
    ] = None,
    date_from: Annotated[dt.datetime | None, date_option("Fixtures starting on or after.")] = None,
    date_to: Annotated[dt.datetime | None, date_option("Fixtures starting on or before.")] = None,
    db: Db = "asyncsports.sqlite",
    concurrency: Annotated[
        int, typer.Option(min=1, max=64, help="Requests in flight at once.")
    ] = 8,
    page_size: PageSize = 1000,
    restart: Annotated[
        bool, typer.Option("--restart", help="Start over even if the last run was interrupted.")
    ] = False,
    workers: Annotated[
        int,
        typer.Option(
            min=0,
            max=256,
            help="Split the job between N local worker processes (PostgreSQL only); more "
            "join from anywhere with: asyncsports worker --db URL --job NAME.",
        ),
    ] = 0,
    job: Annotated[
        str | None,
        typer.Option(metavar="NAME", help="The sharded job's name (default: from the scope)."),
    ] = None,
    connect_timeout: ConnectTimeout = CONNECT_TIMEOUT,
    *,
    cfg: Globals,
) -> None:
    """Copy fixtures, then each started fixture's actions and statistics, into SQLite
    or PostgreSQL.

    Tables fixtures, actions and statistics hold key columns and the record's JSON
    (column json); re-running upserts. A run stopped by Ctrl-C or SIGTERM (or killed)
    resumes when the same command is run again: the first signal commits what is
    fetched and exits 130 (SIGTERM: 143), a second one quits without waiting for the
    work in flight, a third at once.
    """
    from asyncsports.backfill import DEFAULT_SPORTS, Scope

    interrupts.message = _resume_line(db)
    scope = Scope(
        sports=tuple(sports or DEFAULT_SPORTS),
        seasons=tuple(seasons or ()),
        date_from=day(date_from),
        date_to=day(date_to),
        page_size=page_size,
    )
    if cfg.rate_limit is None and not cfg.emulator:
        # The service asks for about 5 requests a second; a bulk copy would go far above.
        cfg = dataclasses.replace(cfg, rate_limit=5.0)
    if workers or job:
        spread(cfg, db, scope, workers, job, concurrency, restart, connect_timeout)
        return
    report = _fill(cfg, db, scope, concurrency, restart, connect_timeout)
    _summary(cfg, report)
    _exit(report, scope, named_sports=bool(sports))


def _exit(report: "Report", scope: "Scope", *, named_sports: bool) -> None:
    """Exit as the run ended: interrupted, units failed, or what was asked for not found."""
    if report.interrupted:
        say(_resume_line(report.db))
        raise typer.Exit(interrupts.code or INTERRUPTED)
    if report.failed:
        raise typer.Exit(fail_parts(report.failed, "units"))
    missing = _missing(scope, report, named_sports=named_sports)
    if missing:
        say(
            f"asyncsports: error: not found (404): {', '.join(missing)}: "
            f"check the sport names and season ids"
        )
        raise typer.Exit(NOT_FOUND)
