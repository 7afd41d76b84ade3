"""The exit codes: one table, the code of an error, and the errors the command raises.

Needs neither typer nor rich: the package exits with :data:`MISSING_EXTRA` when either
is missing, before it imports anything that needs them.
"""

from __future__ import annotations

from asyncsports import errors
from asyncsports._signals import INTERRUPTED, TERMINATED

__all__ = [
    "EXIT_CODES",
    "INTERRUPTED",
    "MISSING_EXTRA",
    "PIPE_CLOSED",
    "TERMINATED",
    "UNTIL_STOPPED",
    "WORKER_KILLED",
    "AmbiguousIdError",
    "ConfigError",
    "FeedEndedError",
    "OutputFileError",
    "UnknownIdError",
    "code_for",
    "exit_code",
    "exit_code_table",
]


class ConfigError(Exception):
    """The command line or environment does not say how to reach the service."""


class OutputFileError(Exception):
    """A file the user named for output (``--save``) cannot be written."""


class FeedEndedError(Exception):
    """A live feed (``--follow``) ended without the fixture's finishing record."""


class UnknownIdError(Exception):
    """No fixture's id starts with the prefix given (exit 5, as for an unknown whole id)."""


class AmbiguousIdError(ValueError):
    """More than one fixture's id starts with the prefix given: a usage error (exit 2)."""


MISSING_EXTRA = 18
"""The exit code of a missing optional dependency."""

# Most specific class first: the first that matches gives the code. Codes are a
# contract with scripts, so an existing one never changes meaning; a class that
# shares a code shares its line in the --help epilog.
EXIT_CODES: tuple[tuple[type[BaseException], int, str], ...] = (
    (ConfigError, 3, "configuration (base URL, token, credentials)"),
    (errors.AuthenticationError, 4, "refused credentials (401, 403)"),
    (errors.NotFoundError, 5, "not found (404)"),
    (UnknownIdError, 5, "not found (404)"),
    (errors.BadRequestError, 6, "bad request (400)"),
    (errors.RateLimitError, 7, "rate limited (429)"),
    (errors.ServerError, 8, "server error (5xx)"),
    (errors.APIError, 9, "other HTTP status"),
    (errors.TimeoutError, 10, "timed out"),
    (errors.TransportError, 10, "host unreachable or connection lost"),
    (errors.DecodeError, 11, "undecodable response"),
    (errors.SinkError, 13, "unusable or unreachable --db"),
    (OutputFileError, 17, "unwritable output file (--save, --record)"),
    (errors.RecordingWriteError, 17, "unwritable output file (--save, --record)"),
    (FeedEndedError, 20, "a live feed that ended without the fixture's finishing record"),
    (errors.BodyTooLargeError, 14, "response larger than the client accepts"),
    (errors.NoRecordError, 15, "a response without the record asked for"),
    (errors.PagingError, 16, "a server that breaks the paging contract"),
    (errors.MissingDependencyError, MISSING_EXTRA, "an optional dependency not installed"),
    (errors.RecordingError, 21, "a recording that cannot be replayed (emulator --replay)"),
    (errors.BusError, 22, "a bus that cannot be used (changes --to)"),
    (errors.AsyncSportsError, 12, "other client error"),
)
PIPE_CLOSED = 141  # 128 + SIGPIPE, what a shell reports for a program its pipe closed on


UNTIL_STOPPED = ("sync without --once", "changes --follow", "events --watch", "emulator")
"""The commands that run until they are stopped (each passes ``until_stopped`` to
``run_async``): SIGTERM is their normal end, exit 0; Ctrl-C is 130 as everywhere (the
rule: asyncsports._signals). asyncsports-emulator exits as ``emulator`` does."""

WORKER_KILLED = 19
"""``backfill --workers``: a worker was killed by a signal, so has no exit code to pass on."""

EVERY = "every command"
SERVICE = "every command that asks the service"
DATABASES = "sync, backfill, changes, export, jobs, worker, load"
# Who meets each code, for the reference's table; a code not here: SERVICE.
_STOPPED = ", ".join(UNTIL_STOPPED)
USED_BY: dict[int, str] = {
    0: f"{EVERY}; stopped by SIGTERM: {_STOPPED}",
    1: EVERY,
    2: EVERY,
    3: SERVICE,
    10: f"{SERVICE}; sync --once and backfill when a task or unit still failed after its "
    "retries for this reason (for another reason, that reason's code)",
    13: DATABASES,
    17: "--save, --record",
    18: "load, export, sync --metrics-port, --rate-limit-url, ...",
    20: "actions, statistics --follow",
    21: "emulator --replay",
    22: "changes --to",
    WORKER_KILLED: "backfill --workers",
    INTERRUPTED: EVERY,
    PIPE_CLOSED: "every command that prints records",
    TERMINATED: f"every command but {_STOPPED}: those at a third signal only",
}


def exit_code_table() -> list[tuple[int, str, str]]:
    """Every exit code: (code, what it means, which commands use it), in code order."""
    texts: dict[int, list[str]] = {
        0: ["done, or stopped by SIGTERM if it runs until stopped"],
        1: ["internal error (a bug: --verbose shows the traceback)"],
        2: [
            "usage or bad argument (no command, which prints the help; a misspelt name, "
            "an unknown --db scheme, a port in use)"
        ],
        WORKER_KILLED: ["a backfill --workers worker killed by a signal"],
        INTERRUPTED: ["interrupted (Ctrl-C, SIGINT)"],
        PIPE_CLOSED: ["output pipe closed"],
        TERMINATED: ["terminated (SIGTERM), a command that ends by itself"],
    }
    for _, code, text in EXIT_CODES:
        if text not in texts.setdefault(code, []):
            texts[code].append(text)
    return [(c, ", ".join(texts[c]), USED_BY.get(c, SERVICE)) for c in sorted(texts)]


def code_for(error: type[BaseException]) -> int:
    """The exit code for an error class (see EXIT_CODES)."""
    for cls, code, _ in EXIT_CODES:
        if issubclass(error, cls):
            return code
    if issubclass(error, ValueError):
        return 2  # the library's argument checks: a bad sport name, id or date
    return 1


def exit_code(exc: BaseException) -> int:
    """The exit code for an error (see EXIT_CODES)."""
    return code_for(type(exc))
