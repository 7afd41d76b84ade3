"""``python -m asyncsports`` and the ``asyncsports`` console script: the command line.

The command line takes most of a second to import (aiohttp, typer, rich), and until
``asyncsports.cli.main`` installs its handler, Python's own turns a Ctrl-C into a
KeyboardInterrupt traceback. So this module imports nothing heavy: it notes SIGINT and
SIGTERM first, then imports the command line and hands it the signals noted, and it
stops before it starts (exit 128 + the signal, as at any other moment).
"""

import os
import signal
from types import FrameType

from asyncsports._signals import SIGNALS  # the standard library only


def main() -> None:
    """The console script."""
    early: list[signal.Signals] = []

    def note(signum: int, frame: FrameType | None) -> None:
        early.append(signal.Signals(signum))
        if len(early) >= 3:  # as at any moment: the third signal ends the process at once
            os.write(2, b"asyncsports: interrupted\n")
            os._exit(128 + early[0])

    for sig in SIGNALS:
        signal.signal(sig, note)
    from asyncsports.cli import main as cli

    # It installs its handler first thing, then reads `early`: no signal is lost between.
    cli(early)


if __name__ == "__main__":
    main()
