"""The ``asyncsports`` command: every endpoint from the shell, the emulator, and backfill.

Needs the ``cli`` extra (typer, rich): ``pip install -e '.[cli]'`` in a checkout.

Modules: ``options`` (global options and settings), ``running`` (the one way a command
runs: its loop, signals, how it ends), ``exits`` (the exit codes), ``messages`` (what a
command says on stderr), ``logs`` (logging), ``clients`` (a client for the settings),
``views`` (tables and JSON Lines), ``app`` (the typer app and how commands register),
``helptext`` (--help laid out to the terminal's width), ``bars`` (progress bars), and
the commands: ``data``, ``snooker``, ``events``, ``backfill``, ``emulator``... A command
module imports the client and the engines inside its functions, when the command runs:
--help and --version import neither (tests/cli/test_cli_instant.py).
"""

import os
import signal
import sys
from collections.abc import Sequence

from asyncsports._optional import need
from asyncsports._signals import interrupts, own_process
from asyncsports.cli.exits import MISSING_EXTRA
from asyncsports.errors import MissingDependencyError

try:
    for _name in ("typer", "rich"):
        need(_name, "the asyncsports command")
except MissingDependencyError as exc:  # the library is installed without its cli extra
    # The console script, or `python -m asyncsports.cli` (argv[0] is "-m" while the
    # package is imported): one line and the code, as for any missing extra. An import
    # by other code gets the error.
    if os.path.basename(sys.argv[0]) == "asyncsports" or sys.argv[0] == "-m":
        sys.stderr.write(f"asyncsports: error: {exc}\n")
        raise SystemExit(MISSING_EXTRA) from None
    raise

# Importing the command modules registers their commands on `app`; the order is the
# order of --help.
# (After the check above: hence E402.)
from . import data, snooker, events, emulator, backfill, workers, export, load, sync, changes  # noqa: F401, I001
from .app import app
from .exits import EXIT_CODES, ConfigError
from .messages import say

__all__ = ["EXIT_CODES", "MISSING_EXTRA", "ConfigError", "app", "main"]

del _name


def main(noted: Sequence[signal.Signals] = ()) -> None:
    """The console script; ``noted``: signals received while it loaded (asyncsports.__main__)."""
    # First thing: from here to the end of the process no signal raises (_signals.py).
    own_process(noted)
    if interrupts.received:  # a signal during start-up: do not start
        say(interrupts.message)
        raise SystemExit(interrupts.code)
    app()
