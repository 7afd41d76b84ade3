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
from typing import Annotated, Any, get_args, get_origin

import typer
from rich.markup import escape
from typer.core import TyperCommand, TyperGroup

from asyncsports._iter.watch import Change
from asyncsports._version import __version__
from asyncsports.client import Client
from asyncsports.paging import AsyncList

from .options import FOLLOW_SPEED, Globals, with_globals
from .renamed import rewrite
from .running import ClickError, exit_codes_text, run, say, say_click_error
from .views import show, show_changes, show_list

__all__ = ["EPILOG", "Command", "Group", "Query", "app", "command", "perform", "snooker_app"]

EPILOG = (
    "Global options (Connection, Live stream events, Emulator, Output) go before or after "
    "the command, and are also read from the ASYNCSPORTS_* environment variable shown "
    "beside each.\n\n"
    "Output: a table on a terminal, of the columns that fit it (--wide: all of them; "
    "--columns: those named); JSON Lines (one record per line, as the service writes "
    "it, wire field names) with --json or when stdout is not a terminal.\n\n"
    "Exit codes: " + exit_codes_text() + "."
)
HELP = (
    "Query the sports data service, the snooker proxy and the live stream events "
    "listing; run the emulator; backfill a SQLite database."
)

# ------------------------------------------------- --help, the same on every typer
#
# typer's help has changed under us: 0.29 (its own click since 0.26, types described by
# the annotation) prints every flag as taking a value (--json <bool>), value types as
# <str> or <int range>, and required arguments as {sport} in the usage line; click sorts
# commands by name; and every typer reads help texts as rich markup. Command and Group settle each parameter's type
# column, the usage line and the help texts the same way on every typer from the lowest
# supported; tests/cli/test_cli_help.py holds them to it.

# click's names of the types typer derives from an annotation (newer typer keeps the
# annotation, not a click type).
_TYPE_NAMES = {str: "text", int: "integer", float: "float", bool: "boolean"}


def _type_name(param: Any) -> str:
    """``param``'s value as click names it: TEXT, INTEGER, FLOAT, PATH, [a|b] for choices."""
    desc = getattr(param, "type_descriptor", None)
    if desc is None:  # a click type: STRING, IntRange, Choice, Path...
        choices = getattr(param.type, "choices", None)
        name = param.type.name
    else:
        choices = desc.choices
        kind = desc.annotation
        if get_origin(kind) is list:  # a repeatable option: the type of one value
            kind = get_args(kind)[0]
        if desc.is_path:  # file, dir or path, as file_okay and dir_okay say
            name = {"dir": "directory"}.get(desc.path_type, desc.path_type)
        else:
            name = _TYPE_NAMES.get(kind) or getattr(kind, "__name__", str(kind))
    if choices:
        return "[" + "|".join(str(getattr(c, "value", c)) for c in choices) + "]"
    return str(name).removesuffix(" range").upper()


def _settle(param: Any) -> Any:
    """Fix what ``param``'s --help shows: no type after a flag, click's type names."""
    if param.param_type_name == "option":
        if param.metavar is None:  # a metavar the code gives (SPORT, YYYY-MM-DD) stays
            param.metavar = "" if param.is_flag or param.count else _type_name(param)
    else:
        hint = f"'{_argument_name(param)}'"
        # Errors name it as the usage line does ("Missing argument 'SPORT'", not 'sport').
        param.get_error_hint = lambda *_: hint
        if hasattr(param, "display_type_rich"):
            # Newer typer shows an argument's metavar as its name, so its type column
            # (<str>) is the one place to say TEXT; older ones already do.
            text = _type_name(param)
            param.display_type_rich = lambda ctx: text
    return param


def _argument_name(param: Any) -> str:
    return str(param.metavar or param.name).upper()


def _usage(command: Any, ctx: Any) -> list[str]:
    """click's usage pieces, with arguments as SPORT, [OPTIONAL], MANY... on every typer."""
    pieces = [command.options_metavar] if command.options_metavar else []
    for param in command.get_params(ctx):
        if param.param_type_name != "argument":
            pieces += param.get_usage_pieces(ctx)
            continue
        name = _argument_name(param)
        name = name if param.required else f"[{name}]"
        pieces.append(name + ("..." if param.nargs != 1 else ""))
    return pieces


def _markup(text: str | None) -> str | None:
    """A plain help text as rich markup: its wrapped lines joined, its brackets escaped."""
    if not text:
        return text
    paragraphs = inspect.cleandoc(text).split("\n\n")
    # In rich mode typer keeps each line break, so a docstring wrapped at 88 columns would
    # stay wrapped there; "\b" marks a paragraph to keep as written (click's convention).
    joined = [p if p.startswith("\b") else " ".join(p.split()) for p in paragraphs]
    # "asyncsports[postgres]" would be a tag to rich, which drops it.
    return escape("\n\n".join(joined))


def _as_markup(command: Any) -> None:
    if command.rich_markup_mode == "rich":  # as the app's is; typer reads help as markup
        command.help = _markup(command.help)
        command.epilog = _markup(command.epilog)
        for param in command.params:
            param.help = _markup(getattr(param, "help", None))


class _Settled:
    """What Command and Group share: help texts as markup, parameters settled."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        _as_markup(self)

    def get_params(self, ctx: Any) -> list[Any]:
        return [_settle(p) for p in super().get_params(ctx)]  # type: ignore[misc]


def _warn(line: str) -> None:
    sys.stderr.write(line + "\n")


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


app = typer.Typer(
    name="asyncsports",
    cls=Group,
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
app.callback(cls=Group, epilog=EPILOG)(with_globals(_root))


Result = AsyncList[Any] | Awaitable[Any] | AsyncIterator[Change[Any]]


@dataclass(frozen=True, slots=True)
class Query:
    """What a command asks the client for, and how its answer is shown.

    ``ask(client)`` gives a listing (shown as it arrives, up to ``limit`` records), a
    watcher's changes (shown one by one, up to ``limit``), or an awaitable of one record or a list of
    them. ``what`` names the records in a table's caption. ``streaming``: it needs the
    live stream events host and credentials. ``watch``: it follows changes (``--follow``,
    ``--watch``), so an embedded emulator's clock runs (``--emulator-speed``).
    """

    ask: Callable[[Client], Result]
    what: str | None = None
    limit: int | None = None
    streaming: bool = False
    watch: bool = False


def perform(cfg: Globals, query: Query) -> None:
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

    run(cfg, job, streaming=query.streaming, follows=FOLLOW_SPEED if query.watch else None)


def _finish(cfg: Globals, result: Any) -> None:
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
        group.command(name, cls=Command, epilog=text)(with_globals(fn, _finish))
        return fn

    return decorate
