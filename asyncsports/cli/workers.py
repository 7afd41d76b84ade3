"""``asyncsports worker`` and ``asyncsports jobs``: sharded backfills in PostgreSQL, and
``backfill --workers N`` (N local worker processes, see :func:`spread`)."""

# No `from __future__ import annotations` here: typer reads the annotations at runtime.

import contextlib
import dataclasses
import os
import signal
import subprocess
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer  # anyio and msgspec are imported where used: --help imports neither

from asyncsports._wire.defaults import CONNECT_TIMEOUT, LEASE
from asyncsports.errors import SinkError

from .app import command
from .clients import opened
from .exits import WORKER_KILLED
from .messages import say, stderr
from .names import PATH_MAX, check_length
from .options import SETTINGS, ConnectTimeout, Globals
from .running import run, run_async

if TYPE_CHECKING:  # imported where used: --help imports none of them
    from asyncsports.backfill import Scope
    from asyncsports.backfill.workers import JobProgress
    from asyncsports.client import Client
    from asyncsports.emulator import Emulator

__all__ = ["WORKER_KILLED", "ConnectTimeout", "jobs", "spread", "worker"]

FAILED_UNITS = 12  # as other client errors: a unit kept failing


def _pg(db: str) -> str:
    """A jobs ``--db`` (callback, so that a wrong one is a usage error before anything
    runs): a PostgreSQL URL, within :data:`~.names.PATH_MAX`."""
    from asyncsports.store import is_postgres

    check_length("'--db'", "a URL", db, PATH_MAX)
    if not is_postgres(db):
        raise typer.BadParameter(
            "sharded jobs live in PostgreSQL: a postgresql://... URL", param_hint="'--db'"
        )
    return db


def _show(cfg: Globals, progress: "list[JobProgress]") -> None:
    import msgspec
    from rich import box
    from rich.console import Console
    from rich.table import Table

    if cfg.as_json:
        for p in progress:
            sys.stdout.write(msgspec.json.encode(p.as_dict()).decode() + "\n")
        return
    table = Table("job", "units", "done", "held", "failed", "workers", "state", box=box.SIMPLE_HEAD)
    for p in progress:
        total = {
            k: sum(u[k] for u in p.units.values()) for k in ("total", "done", "held", "failed")
        }
        table.add_row(
            p.job,
            f"{total['total']:,}",
            f"{total['done']:,}",
            f"{total['held']:,}",
            f"{total['failed']:,}",
            str(p.workers),
            "finished" if p.finished else "running",
        )
    Console(highlight=False).print(table)


@command(example="jobs --db postgresql://localhost/sports")
def jobs(
    db: Annotated[
        str, typer.Option(metavar="URL", callback=_pg, help="The jobs' PostgreSQL database.")
    ],
    job: Annotated[str | None, typer.Option(metavar="NAME", help="Only this job.")] = None,
    connect_timeout: ConnectTimeout = CONNECT_TIMEOUT,
    *,
    cfg: Globals,
) -> None:
    """Show the progress of sharded backfills (backfill --workers, worker): units done,
    held under a live lease, failed for good, and the workers holding leases now."""
    from asyncsports.backfill.workers import job_progress

    progress: list[JobProgress] = []

    async def main() -> None:
        progress.extend(await job_progress(_pg(db), job, connect_timeout=connect_timeout))

    run_async(cfg, main)
    _show(cfg, progress)


@command(example="worker --db postgresql://localhost/sports --job NAME")
def worker(
    db: Annotated[
        str, typer.Option(metavar="URL", callback=_pg, help="The job's PostgreSQL database.")
    ],
    job: Annotated[str, typer.Option(metavar="NAME", help="The job (backfill --workers --job).")],
    concurrency: Annotated[int, typer.Option(min=1, max=64, help="Units in hand at once.")] = 8,
    lease: Annotated[
        float, typer.Option(min=0.1, help="Seconds a claim lasts unless renewed.")
    ] = LEASE,
    connect_timeout: ConnectTimeout = CONNECT_TIMEOUT,
    *,
    cfg: Globals,
) -> None:
    """Work on a sharded backfill until no unit is left: start any number, anywhere.

    Units (a fixture listing, or one fixture's actions and statistics) are claimed
    from the job table under a lease renewed as the worker goes; a worker that dies
    leaves its units to the others once its lease lapses.
    """
    import msgspec

    from asyncsports.backfill.workers import Worker

    if cfg.rate_limit is None and not cfg.emulator:
        # As backfill: the service asks for about 5 requests a second.
        cfg = dataclasses.replace(cfg, rate_limit=5.0)
    reports: list[Any] = []

    async def work(client: "Client") -> None:
        reports.append(
            await Worker(
                client,
                _pg(db),
                job,
                concurrency=concurrency,
                lease=lease,
                connect_timeout=connect_timeout,
            ).run()
        )

    run(cfg, work, max_connections=concurrency)
    (report,) = reports
    if cfg.as_json:
        sys.stdout.write(msgspec.json.encode(report.as_dict()).decode() + "\n")
    else:
        say(f"worker {report.owner}: {report.units:,} units, {report.seconds:.1f} s")
    if report.failed:
        unit, error = report.failed[0]
        say(f"asyncsports: error: {len(report.failed)} units failed, first {unit}: {error}")
        raise typer.Exit(FAILED_UNITS)


def _child_env(cfg: Globals, emulator: "Emulator | None") -> dict[str, str]:
    # A recording is the parent's own: workers writing to one file would interleave.
    skip = ("ASYNCSPORTS_EMULATOR", "ASYNCSPORTS_RECORD")
    env = {k: v for k, v in os.environ.items() if not k.startswith(skip)}
    # Every setting the command was given, as it read it (typed or from its variable);
    # in the environment, not in argv, which ps shows: the token is one of them.
    for name in SETTINGS:
        value = getattr(cfg, name)
        if value is not None:
            env[f"ASYNCSPORTS_{name.upper()}"] = str(value)
    if emulator is not None:
        env |= {"ASYNCSPORTS_BASE_URL": emulator.base_url, "ASYNCSPORTS_TOKEN": emulator.token}
    return env


def _child_argv(
    cfg: Globals, db: str, job: str, n: int, concurrency: int, timeout: float = CONNECT_TIMEOUT
) -> list[str]:
    # -m asyncsports, the light entry: a Ctrl-C while a worker starts is no traceback.
    argv = [
        sys.executable,
        "-m",
        "asyncsports",
        "--vendor",
        cfg.vendor,
        "worker",
        "--db",
        db,
        "--job",
        job,
        "--concurrency",
        str(concurrency),
        "--connect-timeout",
        str(timeout),
        "--json",
    ]
    # One budget for the whole job: shared in Redis, or split between the processes (0:
    # none, said outright, else a worker would take the default of 5 a second).
    rate = cfg.rate_limit or 0.0
    argv += ["--rate-limit", str(rate if cfg.rate_limit_url else rate / n)]
    if cfg.rate_limit_url:
        # Each keeps to its share of what each of the sharers may take while Redis is away.
        sharers = str(cfg.rate_limit_sharers * n)
        argv += ["--rate-limit-url", cfg.rate_limit_url, "--rate-limit-key", cfg.rate_limit_key]
        argv += ["--rate-limit-sharers", sharers]
    for item in cfg.query or ():  # every process sends what the command was told to
        argv += ["--query", item]
    return argv


async def _bar(db: str, job: str, connect_timeout: float) -> None:
    """The job's units done, as a bar on the terminal, from the job table (every
    worker's, local or not)."""
    import anyio
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bars

    from asyncsports.backfill.workers import job_progress

    with Bars(
        TextColumn("units"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=stderr(),
        transient=True,
    ) as bars:
        task = bars.add_task("units", total=None)
        while True:
            with contextlib.suppress(SinkError):
                (p,) = await job_progress(db, job, connect_timeout=connect_timeout)
                units = p.units.values()
                bars.update(
                    task,
                    total=sum(u["total"] for u in units),
                    completed=sum(u["done"] + u["failed"] for u in units),
                )
            await anyio.sleep(0.5)


def spread(
    cfg: Globals,
    db: str,
    scope: "Scope",
    n: int,
    job: str | None,
    concurrency: int,
    restart: bool,
    connect_timeout: float = CONNECT_TIMEOUT,
) -> None:
    """``backfill --workers N``: plan the job, run N worker processes, show the outcome.

    Exits with the code of the first worker (in start order) that did not exit 0, or
    :data:`WORKER_KILLED` for one killed by a signal (its returncode is negative).
    """
    import anyio
    import msgspec

    from asyncsports.backfill.workers import job_progress, plan_job
    from asyncsports.store import redact_url

    _pg(db)
    name = job or scope.key
    outcome: dict[str, Any] = {}

    async def parent() -> None:
        # The settings checked as for any command (a missing token is said before any
        # worker starts); with --emulator, the workers are given its address.
        async with opened(cfg) as (_, emulator):
            outcome["resumed"] = await plan_job(
                _pg(db), name, scope, restart=restart, connect_timeout=connect_timeout
            )
            argv = _child_argv(cfg, db, name, n, concurrency, connect_timeout)
            env = _child_env(cfg, emulator)
            procs = [
                await anyio.open_process(argv, env=env, stdout=subprocess.PIPE, stderr=None)
                for _ in range(n)
            ]
            try:
                async with anyio.create_task_group() as tg:
                    if stderr().is_terminal:
                        tg.start_soon(_bar, db, name, connect_timeout)
                    reports = []
                    for proc in procs:
                        assert proc.stdout is not None
                        out = b"".join([chunk async for chunk in proc.stdout])
                        await proc.wait()
                        reports.append(msgspec.json.decode(out) if out.strip() else None)
                    tg.cancel_scope.cancel()
            finally:
                for proc in procs:
                    if proc.returncode is None:
                        proc.terminate()  # the child gives its leases back
            outcome["codes"] = [p.returncode for p in procs]
            outcome["workers"] = reports
            outcome["progress"] = await job_progress(db, name, connect_timeout=connect_timeout)

    run_async(
        cfg,
        parent,
        interrupted=f"asyncsports: interrupted; run the same command again "
        f"to resume ({redact_url(db)})",
    )
    _report(cfg, db, outcome)


def _report(cfg: Globals, db: str, outcome: dict[str, Any]) -> None:
    """Show the job's progress, and exit with the first failed worker's code."""
    import msgspec

    from asyncsports.store import redact_url

    (progress,) = outcome["progress"]
    if cfg.as_json:
        summary = {
            **progress.as_dict(),
            "db": redact_url(db),
            "resumed": outcome["resumed"],
            "workers": outcome["workers"],
            "codes": outcome["codes"],
        }
        sys.stdout.write(msgspec.json.encode(summary).decode() + "\n")
    else:
        _show(cfg, [progress])
    code = next((c for c in outcome["codes"] if c), 0)
    again = (
        "the others finished the job"
        if progress.finished
        else ("run the same command again to resume")
    )
    if code < 0:  # killed by signal -code; 128 + n would be 130 or 143 for SIGINT, SIGTERM:
        # this command's own codes for "interrupted" and "terminated"
        say(f"asyncsports: error: a worker was killed by {_signal_name(-code)}; {again}")
        raise typer.Exit(WORKER_KILLED)
    if code:
        say(f"asyncsports: error: a worker exited {code}; {again}")
        raise typer.Exit(code)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
