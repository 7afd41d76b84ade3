"""The typer application, how commands register, and the one way a command runs a query.

A command declares its arguments and returns a :class:`Query`: what to ask the client
for, and how to show it. :func:`command` registers it with the global options and runs
the query it returns.
"""

# No `from __future__ import annotations` here: typer reads the annotations at runtime.

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any

import typer

from asyncsports._version import __version__
from asyncsports._watch import Change
from asyncsports.client import Client
from asyncsports.paging import AsyncList

from .options import Settings, with_globals
from .running import INTERRUPTED, PIPE_CLOSED, TERMINATED, exit_codes_text, run
from .views import show, show_changes, show_list

__all__ = ["EPILOG", "Query", "app", "command", "perform", "snooker_app"]

EPILOG = (
    "Global options (Connection, Live stream events, Emulator, Output) go before or after "
    "the command, and are also read from the ASYNCSPORTS_* environment variable shown "
    "beside each.\n\n"
    "Output: a table on a terminal; JSON Lines (one record per line, as the service writes "
    "it, wire field names) with --json or when stdout is not a terminal.\n\n"
    "Exit codes: 0 done · 1 internal error · 2 usage or bad argument · "
    + exit_codes_text()
    + f" · {INTERRUPTED} interrupted (Ctrl-C) · {PIPE_CLOSED} output pipe closed"
    + f" · {TERMINATED} terminated (SIGTERM)."
)
HELP = (
    "Query the sports data service, the snooker proxy and the live stream events "
    "listing; run the emulator; backfill a SQLite database."
)

app = typer.Typer(
    name="asyncsports",
    help=HELP,
    epilog=EPILOG,
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
snooker_app = typer.Typer(
    help="The snooker proxy: one command per endpoint. Ids: a number is the numeric id, "
    "anything else an external id (UUID).",
    no_args_is_help=True,
)
app.add_typer(snooker_app, name="snooker")


def _version(value: bool) -> None:
    if value:
        print(f"asyncsports {__version__}")
        raise typer.Exit()


def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    pass


_root.__doc__ = HELP
app.callback(epilog=EPILOG)(with_globals(_root))


Result = AsyncList[Any] | Awaitable[Any] | AsyncIterator[Change[Any]]


@dataclass(frozen=True, slots=True)
class Query:
    """What a command asks the client for, and how its answer is shown.

    ``ask(client)`` gives a listing (shown as it arrives, up to ``limit`` records), a
    watcher's changes (shown one by one, up to ``limit``), or an awaitable of one record or a list of
    them. ``what`` names the records in a table's caption. ``streaming``: it needs the
    live stream events host and credentials. ``watch``: it polls for changes, so the
    emulator's clock runs.
    """

    ask: Callable[[Client], Result]
    what: str | None = None
    limit: int | None = None
    streaming: bool = False
    watch: bool = False


def perform(cfg: Settings, query: Query) -> None:
    """Run ``query`` with a client for the settings and show its answer."""

    async def job(client: Client) -> None:
        answer = query.ask(client)
        if isinstance(answer, AsyncList):
            await show_list(cfg, answer, query.what, query.limit)
        elif isinstance(answer, AsyncIterator):
            await show_changes(cfg, answer, query.limit)
        else:
            value = await answer
            show(cfg, value if isinstance(value, list) else [value], query.what)

    run(cfg, job, streaming=query.streaming, live=query.watch)


def _finish(cfg: Settings, result: Any) -> None:
    if isinstance(result, Query):
        perform(cfg, result)


def command(
    group: typer.Typer = app, name: str | None = None, *, epilog: str | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a command of ``group`` that also takes the global options.

    The function returns a :class:`Query`, which is run, or does its own work with
    the settings it takes as ``cfg`` and returns None. ``epilog``: what --help says
    after the options, before the shared text (exit codes of its own, say).
    """

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        text = f"{epilog}\n\n{EPILOG}" if epilog else EPILOG
        group.command(name, epilog=text)(with_globals(fn, _finish))
        return fn

    return decorate
