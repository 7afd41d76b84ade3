"""The ``asyncsports`` command: every endpoint from the shell, the emulator, and backfill.

Needs the ``cli`` extra (typer, rich): ``pip install 'asyncsports[cli]'``.

Modules: ``options`` (global options and settings), ``running`` (a client for the
settings, exit codes, errors, logging), ``views`` (tables and JSON Lines), ``app`` (the
typer app and the one way a command runs), and the commands: ``data``, ``snooker``,
``events``, ``backfill``, ``emulator``.
"""

import atexit
import os
import signal
import sys
from collections.abc import Sequence

try:
    import rich
    import typer
except ModuleNotFoundError as exc:  # the library is installed without its cli extra
    if exc.name not in ("typer", "rich"):
        raise
    message = f"the asyncsports command needs the cli extra: pip install 'asyncsports[cli]' ({exc})"
    if os.path.basename(sys.argv[0]) == "asyncsports":
        raise SystemExit(f"asyncsports: {message}") from None
    raise ModuleNotFoundError(message, name=exc.name) from exc

# Importing the command modules registers their commands on `app`; the order is the
# order of --help.
from . import data, snooker, events, emulator, backfill, workers, export, sync  # noqa: F401, I001
from .app import app
from .interrupts import interrupts
from .running import EXIT_CODES, ConfigError, say

__all__ = ["EXIT_CODES", "ConfigError", "app", "main"]

del rich, typer


def main(noted: Sequence[signal.Signals] = ()) -> None:
    """The console script; ``noted``: signals received while it loaded (asyncsports.__main__)."""
    # First thing: from here to the end of the process no signal raises (interrupts.py).
    interrupts.received.clear()  # a test may run main() again in its process
    interrupts.install()
    interrupts.received[:0] = noted
    # While Python exits, SIG_IGN: it resets handlers to the defaults as it finalizes.
    atexit.register(interrupts.ignore)
    if interrupts.received:  # a signal during start-up: do not start
        say(interrupts.message)
        raise SystemExit(interrupts.code)
    app()
