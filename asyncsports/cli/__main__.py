"""``python -m asyncsports.cli``: the same as the ``asyncsports`` command."""

from asyncsports.cli import main

main()
