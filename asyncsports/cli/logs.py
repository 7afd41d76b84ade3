"""Logging set-ups: the library's lines under --verbose, and the mirror's and the
publisher's minute-by-minute lines always; each line's control characters escaped."""

from __future__ import annotations

import logging
import sys

from asyncsports._wire.shown import printable

__all__ = ["setup_logging", "sync_logging"]


class _Printable(logging.Formatter):
    """A log line's message escaped (:func:`printable`); a traceback kept as it is."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return printable(super().formatMessage(record))


class _Stderr(logging.Handler):
    """Writes to whatever ``sys.stderr`` is at the time (a test runner may swap it)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
        except Exception:
            self.handleError(record)


def setup_logging(verbose: bool) -> None:
    """Give the ``asyncsports`` logger one stderr handler, shown only under --verbose.

    Called for every command, but the handler is added once per process: a second
    command in the same process (tests, ``main()`` called twice) only sets the level.
    """
    log = logging.getLogger("asyncsports")
    handler = next((h for h in log.handlers if isinstance(h, _Stderr)), None)
    if handler is None:
        handler = _Stderr()
        handler.setFormatter(_Printable("asyncsports: %(message)s"))
        log.addHandler(handler)
    # Silent unless verbose, yet present: without any handler Python would print each
    # retry's warning to stderr, and errors are reported once, at the end, by fail().
    handler.setLevel(logging.INFO if verbose else logging.CRITICAL + 1)
    log.setLevel(logging.INFO if verbose else logging.NOTSET)


class _SyncLines(logging.StreamHandler):  # type: ignore[type-arg]
    """The handler :func:`sync_logging` adds (found again by its class: added once)."""


def sync_logging(verbose: bool) -> None:
    """The mirror's and the publisher's minute-by-minute lines on stderr even without
    --verbose."""
    log = logging.getLogger("asyncsports.sync")
    if verbose or any(isinstance(h, _SyncLines) for h in log.handlers):
        return
    handler = _SyncLines(sys.stderr)
    handler.setFormatter(_Printable("asyncsports: %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False
