"""``asyncsports changes``: a mirror database's change feed as JSON Lines, from any process."""

# No `from __future__ import annotations` here: typer reads the annotations at runtime.

import os
import signal
import sys
from pathlib import Path
from typing import Annotated

import typer

from asyncsports._wire.defaults import CONNECT_TIMEOUT
from asyncsports.errors import SinkError

from .app import command
from .interrupts import interrupts
from .options import ConnectTimeout, Globals, db_location
from .running import INTERRUPTED, PIPE_CLOSED, fail, say, setup_logging

__all__ = ["changes"]

EPILOG = (
    "Each line: seq, op (insert, update or delete), table, key, committed_at and the "
    "record as the service sent it (null for a row gone). With --consumer, the cursor "
    "NAME is kept in the database and moves past each change printed: a restarted "
    "follower resumes where it stopped (the same cursors as sync --changes). --follow "
    "on PostgreSQL is woken by each commit (LISTEN/NOTIFY); a SQLite file is looked at "
    "20 times a second. SIGTERM (and a first Ctrl-C) ends it after the changes "
    f"committed so far, exit 0 (Ctrl-C: {INTERRUPTED})."
)


async def _print(db: str, after: int, consumer: str | None, follow: bool, reach: float) -> None:
    import asyncio

    import msgspec

    from asyncsports.sync import feed

    stop = asyncio.Event()
    with interrupts.stopping(stop.set):
        async for change in feed(db, after, consumer=consumer, follow=follow, until=stop,
                                 connect_timeout=reach):  # fmt: skip
            sys.stdout.write(msgspec.json.encode(change.as_dict()).decode() + "\n")
            sys.stdout.flush()


async def _main(db: str, after: int, consumer: str | None, follow: bool, reach: float) -> None:
    import asyncio

    task = asyncio.current_task()
    assert task is not None
    interrupts.attach(task)
    try:
        await _print(db, after, consumer, follow, reach)
    finally:
        interrupts.detach()


@command(epilog=EPILOG, example="changes --db asyncsports-mirror.sqlite --follow")
def changes(
    db: Annotated[
        str,
        typer.Option(
            callback=db_location,
            metavar="FILE|URL",
            help="The mirror's SQLite file, or a postgresql://... URL.",
        ),
    ] = "asyncsports-mirror.sqlite",
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing changes as they are committed.")
    ] = False,
    consumer: Annotated[
        str | None,
        typer.Option(metavar="NAME", help="Start from NAME's cursor and move it on."),
    ] = None,
    after: Annotated[
        int,
        typer.Option(
            min=0,
            metavar="SEQ",
            show_default=False,
            help="Start after this seq (default: the --consumer's cursor, else the start).",
        ),
    ] = 0,
    connect_timeout: ConnectTimeout = CONNECT_TIMEOUT,
    *,
    cfg: Globals,
) -> None:
    """Print a mirror database's change feed (asyncsports sync writes it) as JSON Lines,
    in commit order, without running a mirror: from this machine or any other."""
    import asyncio

    from asyncsports.store import is_postgres

    setup_logging(cfg.verbose)
    if not is_postgres(db) and not Path(db).is_file():
        # Opening would make an empty database, and a follower would wait on it for ever.
        fail(cfg, SinkError(f"no mirror database at {db}: asyncsports sync --db makes one"))
    with interrupts.installed():
        try:
            if interrupts.received:
                raise asyncio.CancelledError
            with asyncio.Runner() as runner:
                runner.run(_main(db, after, consumer, follow, connect_timeout))
        except (asyncio.CancelledError, KeyboardInterrupt):
            say("asyncsports: interrupted")
            raise typer.Exit(interrupts.code or INTERRUPTED) from None
        except BrokenPipeError:
            # The reader went away (`| head`): stop quietly, as `yes | head` does.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(PIPE_CLOSED) from None
        except Exception as exc:
            fail(cfg, exc)
    if interrupts.received and interrupts.received[0] == signal.SIGINT:
        raise typer.Exit(INTERRUPTED)  # SIGTERM is how a follower is stopped: exit 0
