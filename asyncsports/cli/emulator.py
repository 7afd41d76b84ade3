"""``asyncsports emulator``: serve the embedded emulator standalone, as
``asyncsports-emulator`` does, with the same options (one table,
:data:`asyncsports.emulator._options.FLAGS`) as a typer command."""

# No `from __future__ import annotations` here: typer reads the annotations at runtime.

import argparse
import inspect
from typing import Annotated, Any

import typer

from asyncsports._signals import interrupts
from asyncsports.emulator._options import DESCRIPTION, EXIT_CODES, FLAGS, Flag

from .app import Command, app, epilog_for
from .options import Globals
from .running import run_async

EXAMPLE = "emulator --port 8080 --seed 3 --speed 60"


def _value(flag: Flag, given: Any) -> Any:
    """What ``flag`` holds: its default when not given, else the text read as the
    standalone command reads it (a usage error naming the option if it cannot be)."""
    if given is None:
        return flag.default
    if flag.choices and given not in flag.choices:
        raise typer.BadParameter(
            f"{given!r} is not one of {', '.join(flag.choices)}", param_hint=f"'{flag.name}'"
        )
    if flag.kind in (None, int, float, str):  # typer has read it already
        return given
    try:
        return flag.kind(given)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint=f"'{flag.name}'") from None


def _parameter(flag: Flag) -> inspect.Parameter:
    # Every option defaults to None (its help says the default), so that _value knows
    # what was given; a switch is off.
    if flag.kind is None:
        kind: Any = bool
        option = typer.Option(flag.name, help=flag.help, show_default=False)
    else:
        kind = flag.kind if flag.kind in (int, float) else str
        metavar = f"[{'|'.join(flag.choices)}]" if flag.choices else flag.metavar
        option = typer.Option(flag.name, help=flag.help, metavar=metavar, show_default=False)
    if flag.kind is not None:
        kind = kind | None
    default = False if flag.kind is None else None
    return inspect.Parameter(
        flag.dest,
        inspect.Parameter.KEYWORD_ONLY,
        default=default,
        annotation=Annotated[kind, option],
    )


def emulator_command(**given: Any) -> None:
    """Serve the emulator with the options given (``FLAGS``' keywords)."""
    from asyncsports.emulator.__main__ import ListenError, option_of, serving

    args = argparse.Namespace(**{flag.dest: _value(flag, given[flag.dest]) for flag in FLAGS})

    async def main() -> int:
        import asyncio

        stop = asyncio.Event()
        with interrupts.stopping(stop.set):  # a signal stops serving
            try:
                return await serving(args, stop, prefix="asyncsports: error:")
            except ListenError as exc:  # the user's to change, as --metrics-port's
                raise typer.BadParameter(
                    str(exc.strerror), param_hint=f"'{option_of(exc)}'"
                ) from None

    # It takes no global option; it serves until stopped: SIGTERM is its normal end.
    run_async(Globals(), main, until_stopped=True)


_PARAMETERS = [_parameter(flag) for flag in FLAGS]
emulator_command.__signature__ = inspect.Signature(_PARAMETERS)  # type: ignore[attr-defined]
emulator_command.__annotations__ = {p.name: p.annotation for p in _PARAMETERS}
app.command(
    "emulator",
    cls=Command,
    help=f"{DESCRIPTION} The same server as asyncsports-emulator.",
    # Its own exit codes; it takes no global option, so no pointer to them.
    epilog=epilog_for(EXAMPLE, EXIT_CODES, pointer=False),
)(emulator_command)
