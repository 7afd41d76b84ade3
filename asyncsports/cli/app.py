"""The typer application, how commands register, and the one way a command runs a query.

A command declares its arguments and returns a :class:`Query`: what to ask the client
for, and how to show it. :func:`command` registers it with the global options and runs
the query it returns. Every command is a :class:`Command` and every group a
:class:`Group`, whose --help reads the same on every supported typer.
"""

# No `from __future__ import annotations` here: typer reads the annotations at runtime.

import inspect
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, get_args, get_origin

import typer
from typer.core import TyperCommand, TyperGroup

from asyncsports._version import __version__
from asyncsports._wire.shown import printable

from . import helptext
from .exits import exit_code_table
from .helptext import argument_name
from .messages import ClickError, NoCommandError, say, say_click_error
from .options import FOLLOW_SPEED, Globals, with_globals
from .renamed import rewrite
from .running import run

if TYPE_CHECKING:  # imported where used: --help and --version import none of them
    from asyncsports._iter.watch import Change
    from asyncsports.client import Client
    from asyncsports.paging import AsyncList

    Result = AsyncList[Any] | Awaitable[Any] | AsyncIterator[Change[Any]]

__all__ = [
    "EPILOG",
    "POINTER",
    "Command",
    "Group",
    "Query",
    "app",
    "command",
    "epilog_for",
    "perform",
    "snooker_app",
]

EPILOG = (
    "Global options (Connection, Live stream events, Emulator, Output) go before or after "
    "the command, and are also read from the ASYNCSPORTS_* environment variable shown "
    "beside each. A command's own options: asyncsports COMMAND --help.\n\n"
    "Output: a table on a terminal, of the columns that fit it (--wide: all of them; "
    "--columns: those named); JSON Lines (one record per line, as the service writes "
    "it, wire field names) with --json or when stdout is not a terminal. The exit codes "
    "above are the same for every command; the CLI reference says which commands use each."
)
HELP = (
    "Query the sports data service, the snooker proxy and the live stream events listing; "
    "keep a database in sync with them and follow its changes (sync, changes); copy them "
    "into SQLite or PostgreSQL (backfill, shared by workers) or a dlt warehouse (load); "
    "export a database to Parquet (export); serve the emulator (emulator)."
)
POINTER = "Global options and exit codes: asyncsports --help"
"""The last line of a command's --help: the global options and exit codes are listed once."""


def epilog_for(example: str, text: str | None = None, *, pointer: bool = True) -> str:
    """What a command's --help says after its options: ``text`` (exit codes of its own,
    say), a one-line ``example`` (its arguments after ``asyncsports``), and where the
    global options and the exit codes are (unless not ``pointer``)."""
    parts = [text, f"Example: asyncsports {example}", POINTER if pointer else None]
    return "\n\n".join(part for part in parts if part)


# ------------------------------------------------- --help, the same on every typer
#
# typer's help has changed under us: 0.29 (its own click since 0.26, types described by
# the annotation) prints every flag as taking a value (--json <bool>), value types as
# <str> or <int range>, and required arguments as {sport} in the usage line; click sorts
# commands by name; and typer's rich tables crop option names to fit the width. Command
# and Group settle each parameter's metavar and the usage line, and lay out --help with
# helptext, the same way on every typer from the lowest supported;
# tests/cli/test_cli_help.py holds them to it.

# Short metavars, so that an option's names and metavar fit beside its help.
_METAVARS = {"integer": "N", "float": "N", "file": "FILE", "directory": "DIR", "path": "PATH"}


def _metavar(param: Any) -> str:
    """``param``'s metavar when the code gives none: N, ID, URL, TEXT, FILE, [a|b]."""
    desc = getattr(param, "type_descriptor", None)
    if desc is None:  # a click type: STRING, IntRange, Choice, Path...
        kind = param.type
        choices = getattr(kind, "choices", None)
        name = str(kind.name).removesuffix(" range")
        if hasattr(kind, "dir_okay"):
            name = "directory" if not kind.file_okay else "file" if not kind.dir_okay else name
    else:
        choices = desc.choices
        kind = desc.annotation
        if get_origin(kind) is list:  # a repeatable option: the type of one value
            kind = get_args(kind)[0]
        if desc.is_path:  # file, dir or path, as file_okay and dir_okay say
            name = {"dir": "directory"}.get(desc.path_type, desc.path_type)
        else:
            name = {int: "integer", float: "float"}.get(kind, "text")
    if choices:
        return "[" + "|".join(str(getattr(c, "value", c)) for c in choices) + "]"
    if name in _METAVARS:
        return _METAVARS[name]
    return "ID" if param.name.endswith("_id") else "URL" if param.name.endswith("url") else "TEXT"


def _settle(param: Any) -> Any:
    """Fix what ``param``'s --help and errors show: its metavar, an argument's name."""
    if param.param_type_name == "option":
        if param.metavar is None:  # a metavar the code gives (SPORT, DATE) stays
            param.metavar = "" if param.is_flag or param.count else _metavar(param)
    else:
        hint = f"'{argument_name(param)}'"
        # Errors name it as the usage line does ("Missing argument 'SPORT'", not 'sport').
        param.get_error_hint = lambda *_: hint
    return param


def _usage(command: Any, ctx: Any) -> list[str]:
    """click's usage pieces, with arguments as SPORT, [OPTIONAL], MANY... on every typer."""
    pieces = [command.options_metavar] if command.options_metavar else []
    for param in command.get_params(ctx):
        if param.param_type_name != "argument":
            pieces += param.get_usage_pieces(ctx)
            continue
        name = argument_name(param)
        name = name if param.required else f"[{name}]"
        pieces.append(name + ("..." if param.nargs != 1 else ""))
    return pieces


def _declared_help(callback: Any, name: str) -> str | None:
    """The help an argument was declared with (``typer.Argument(help=...)``)."""
    found = inspect.signature(callback).parameters.get(name) if callback else None
    if found is None:
        return None
    infos = [*get_args(found.annotation)[1:], found.default]
    return next((i.help for i in infos if isinstance(i, typer.models.ArgumentInfo)), None)


class _Settled:
    """What Command and Group share: parameters settled, --help laid out by helptext."""

    def get_params(self, ctx: Any) -> list[Any]:
        params = [_settle(p) for p in super().get_params(ctx)]  # type: ignore[misc]
        for param in params:
            if param.param_type_name == "argument" and not param.help:
                # typer 0.18 sets an argument's help before newer click's Argument.__init__,
                # which sets it to None.
                param.help = _declared_help(self.callback, param.name)  # type: ignore[attr-defined]
        return params

    def format_help(self, ctx: Any, formatter: Any) -> None:
        helptext.write(self, ctx, formatter, self.collect_usage_pieces(ctx))  # type: ignore[attr-defined]


def _warn(line: str) -> None:
    sys.stderr.write(printable(line) + "\n")


class Command(_Settled, TyperCommand):
    """A command whose --help reads the same on every supported typer, and that takes
    its options' old spellings (:mod:`~asyncsports.cli.renamed`)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, rewrite(self.name or "", args, _warn))

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return _usage(self, ctx)


class Group(_Settled, TyperGroup):
    """A group whose --help reads the same on every supported typer, commands in order."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [*_usage(self, ctx), self.subcommand_metavar]

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            raise NoCommandError(ctx)  # the same on every click (see NoCommandError)
        return super().parse_args(ctx, args)

    def list_commands(self, ctx: Any) -> list[str]:
        # The order they were registered in (click sorts them by name).
        return list(self.commands)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """click's main, its errors in one plain line (typer draws a Rich box)."""
        if not kwargs.pop("standalone_mode", True):
            return super().main(*args, standalone_mode=False, **kwargs)  # type: ignore[misc]
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)  # type: ignore[misc]
        except ClickError as exc:
            say_click_error(exc)
            sys.exit(exc.exit_code)  # type: ignore[attr-defined]
        except typer.Abort:
            say("asyncsports: aborted")
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


class Root(Group):
    """The top-level group: its --help ends with the exit codes, one a line."""

    tables = {"Exit codes": [(str(code), text) for code, text, _ in exit_code_table()]}


app = typer.Typer(
    name="asyncsports",
    cls=Root,
    help=HELP,
    epilog=EPILOG,
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
snooker_app = typer.Typer(
    cls=Group,
    help="The snooker proxy: one command per endpoint. Ids: a number is the numeric id, "
    "anything else an external id (UUID).",
    epilog=epilog_for("--emulator snooker matches 1000"),
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
app.callback(cls=Root, epilog=EPILOG)(with_globals(_root))


@dataclass(frozen=True, slots=True)
class Query:
    """What a command asks the client for, and how its answer is shown.

    ``ask(client)`` gives a listing (shown as it arrives, up to ``limit`` records), a
    watcher's changes (shown one by one, up to ``limit``), or an awaitable of one record or a list of
    them. ``what`` names the records in a table's caption. ``streaming``: it needs the
    live stream events host and credentials. ``watch``: it follows changes (``--follow``,
    ``--watch``), so an embedded emulator's clock runs (``--emulator-speed``).
    ``until_stopped``: it has no end of its own (``events --watch``), so SIGTERM ends it
    with exit 0 (:func:`~.running.run_async`).
    ``resolve(client)``: awaited before ``ask``, in the same job (a fixture id prefix
    looked up: :class:`~asyncsports.cli.ids.FixtureRef`).
    """

    ask: "Callable[[Client], Result]"
    what: str | None = None
    limit: int | None = None
    streaming: bool = False
    watch: bool = False
    until_stopped: bool = False
    resolve: "Callable[[Client], Awaitable[None]] | None" = None


def perform(cfg: Globals, query: Query) -> None:
    """Run ``query`` with a client for the settings and show its answer."""
    from asyncsports.paging import AsyncList

    from .views import show, show_changes, show_list

    async def job(client: "Client") -> None:
        if query.resolve is not None:
            await query.resolve(client)
        answer = query.ask(client)
        if isinstance(answer, AsyncList):
            await show_list(cfg, answer, query.what, query.limit)
        elif isinstance(answer, AsyncIterator):
            await show_changes(cfg, answer, query.limit)
        else:
            value = await answer
            show(cfg, value if isinstance(value, list) else [value], query.what)

    run(
        cfg,
        job,
        streaming=query.streaming,
        follows=FOLLOW_SPEED if query.watch else None,
        until_stopped=query.until_stopped,
    )


def _finish(cfg: Globals, result: Any) -> None:
    if isinstance(result, Query):
        perform(cfg, result)


def command(
    group: typer.Typer = app,
    name: str | None = None,
    *,
    example: str,
    epilog: str | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a command of ``group`` that also takes the global options.

    The function returns a :class:`Query`, which is run, or does its own work with
    the settings it takes as ``cfg`` and returns None. ``example`` and ``epilog``: see
    :func:`epilog_for`. The global options are taken, not listed: ``asyncsports --help``
    lists them.
    """
    text = epilog_for(example, epilog)

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        group.command(name, cls=Command, epilog=text)(with_globals(fn, _finish, hidden=True))
        return fn

    return decorate
