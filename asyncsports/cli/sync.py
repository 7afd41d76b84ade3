"""``asyncsports sync``: keep a SQLite or PostgreSQL database current, optionally printing
its change feed."""

# No `from __future__ import annotations` here: typer reads the annotations at runtime.

import dataclasses
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from asyncsports._signals import interrupts
from asyncsports._wire.defaults import CONNECT_TIMEOUT, DEFAULT_EVERY

from .app import command
from .clients import opened
from .exits import INTERRUPTED, TERMINATED
from .logs import sync_logging
from .messages import fail_parts
from .metrics import listen
from .options import SYNC_SPEED, ConnectTimeout, Db, Globals, MetricsPort, Sports
from .running import run_async

if TYPE_CHECKING:  # imported where used: --help imports none of them
    import asyncio

    from asyncsports.sync import Mirror

EPILOG = (
    "Cadences (--every kind=seconds, repeatable or comma-separated; defaults): "
    + ", ".join(f"{k}={v:g}" for k, v in DEFAULT_EVERY.items())
    + ". SIGTERM (and a first Ctrl-C) finishes what is in flight, then exits 0 (Ctrl-C: "
    f"{INTERRUPTED}; --once: {TERMINATED} at SIGTERM, the pass not done); a restart carries on. --changes prints each committed change as a "
    "JSON line (seq, op, table, key, committed_at, record) from the --consumer's cursor, "
    "saved in the database: a restarted consumer resumes where it stopped; "
    "asyncsports changes --db follows the same feed from any other process. Sync processes "
    "on one database (PostgreSQL: on any machines; a SQLite file: on one machine) elect one "
    "writer; the others stand by (/healthz and /metrics say which) and one takes over "
    "within 15 s of its end. --once exits with the code of the first task that still failed "
    "after its retries (10: the service unreachable), as backfill does; a running sync says "
    "each failure in its log, and /healthz names the failing tasks (503 once one has "
    "failed for 120 s)."
)


async def _print(mirror: "Mirror", consumer: str, until: "asyncio.Event") -> None:
    # The consumer is done with a change once it is written out: its cursor moves then.
    async for change in mirror.changes(consumer=consumer, until=until):
        sys.stdout.write(change.as_json().decode() + "\n")
        sys.stdout.flush()


async def _mirror(mirror: "Mirror", once: bool, changes: str | None, port: int | None) -> None:
    import asyncio

    from asyncsports.sync import Standby

    # Processes following one database elect its writer; the others wait (both engines).
    standby = Standby(mirror)
    runner = None
    if port is not None:
        from asyncsports.sync._metrics import serve_metrics

        runner = await listen(serve_metrics(mirror, port, standby=standby), port)
    over = asyncio.Event()
    printer = asyncio.create_task(_print(mirror, changes, over)) if changes else None
    try:
        with interrupts.stopping(standby.stop):
            await standby.run(once=once)
    finally:
        over.set()  # the printer ends after the last commit's changes
        if printer is not None:
            await printer
        if runner is not None:
            await runner.cleanup()


@command(epilog=EPILOG, example="--emulator sync --sports basketball --once")
def sync(
    sports: Sports = None,
    db: Db = "asyncsports-mirror.sqlite",
    every: Annotated[
        list[str] | None,
        typer.Option(metavar="KIND=SECONDS", help="A cadence (see below); repeatable."),
    ] = None,
    once: Annotated[bool, typer.Option("--once", help="One full pass, then exit.")] = False,
    changes: Annotated[
        bool, typer.Option("--changes", help="Print the change feed as JSON Lines.")
    ] = False,
    consumer: Annotated[
        str, typer.Option(metavar="NAME", help="Whose cursor --changes keeps.")
    ] = "cli",
    days_back: Annotated[int, typer.Option(min=0, help="Days of past fixtures followed.")] = 2,
    days_ahead: Annotated[int, typer.Option(min=0, help="Days of coming fixtures followed.")] = 2,
    concurrency: Annotated[int, typer.Option(min=1, max=64, help="Reads at once.")] = 4,
    metrics_port: MetricsPort = None,
    connect_timeout: ConnectTimeout = CONNECT_TIMEOUT,
    *,
    cfg: Globals,
) -> None:
    """Keep a SQLite or PostgreSQL database current for the chosen sports, and tell
    what changed.

    Follows fixtures around now, live fixtures' actions and statistics
    (over the live websockets with --live-url or --emulator, else actions
    polled), each ended fixture's actions and statistics, standings after
    a match, squads, live stream events and snooker tournaments, within
    --rate-limit (5 per second unless --emulator).
    """
    from asyncsports.sync import ALL_SPORTS, Mirror, parse_every

    try:
        cadences = parse_every(every or [])
    except ValueError as exc:
        raise typer.BadParameter(
            str(exc).removeprefix("--every: "), param_hint="'--every'"
        ) from None
    if cfg.rate_limit is None and not cfg.emulator:
        cfg = dataclasses.replace(cfg, rate_limit=5.0)  # the service's advice
    sync_logging(cfg.verbose)
    chosen = tuple(sports or ALL_SPORTS)

    follows = None if once else SYNC_SPEED

    async def main() -> int | None:
        async with opened(cfg, follows=follows, max_connections=concurrency) as (client, emu):
            # The embedded emulator's clock, read directly; any other service's, from its Date.
            mirror = Mirror(
                client,
                db,
                sports=chosen,
                every=cadences,
                days_back=days_back,
                days_ahead=days_ahead,
                concurrency=concurrency,
                clock=emu.clock.time if emu is not None else None,
                connect_timeout=connect_timeout,
            )
            await _mirror(mirror, once, consumer if changes else None, metrics_port)
            if once and mirror.failing and not interrupts.received:
                # The pass could not complete: what was read is committed, the rest is not.
                return fail_parts([(k, e) for k, (_, e) in mirror.failing.items()], "tasks")
            return None

    run_async(cfg, main, until_stopped=not once)
