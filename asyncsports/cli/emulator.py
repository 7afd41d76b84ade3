"""``asyncsports emulator``: serve the embedded emulator standalone."""

# No `from __future__ import annotations` here: typer reads the annotations at runtime.

import typer

from .app import Command, app
from .interrupts import interrupts
from .running import INTERRUPTED


@app.command(
    "emulator",
    cls=Command,
    context_settings={
        "allow_extra_args": True,
        "ignore_unknown_options": True,
        "help_option_names": [],
    },
    add_help_option=False,
)
def emulator_command(ctx: typer.Context) -> None:
    """Serve the emulator until Ctrl-C: asyncsports-emulator's options (emulator --help)."""
    from asyncsports.emulator import __main__ as emulator_main

    if interrupts.received:
        raise typer.Exit(interrupts.code or INTERRUPTED)
    # The emulator handles SIGINT and SIGTERM itself (stop serving, exit 0).
    if interrupts.installed_here():
        interrupts.uninstall()
    raise typer.Exit(emulator_main.main(ctx.args))
