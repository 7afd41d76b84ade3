"""What a command says on stderr: one line per error (what, why, what to do), click's
errors in the same style, and the text a failure is shown in."""

from __future__ import annotations

import re
import sys
import traceback
import urllib.parse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import typer
import typer.core

from asyncsports import errors
from asyncsports._wire.secrets import hide_urls
from asyncsports._wire.shown import printable

from .exits import exit_code
from .names import sport_hint
from .options import Globals

if TYPE_CHECKING:  # imported where used: --help and --version import none of them
    from rich.console import Console

__all__ = [
    "ClickError",
    "NoCommandError",
    "describe",
    "fail",
    "fail_parts",
    "leaf",
    "say",
    "say_click_error",
    "stderr",
    "with_causes",
]

HINTS: dict[type[BaseException], str] = {
    errors.AuthenticationError: "check --token (ASYNCSPORTS_TOKEN) or the streaming credentials",
    errors.TimeoutError: "the service is slow or unreachable; try again later",
    errors.TransportError: "is the host up and the address right? check --base-url",
    errors.RateLimitError: "lower --rate-limit",
    errors.ServerError: "the service failed; try again later",
}


def stderr() -> Console:
    """A console on stderr, for messages that must not mix with the records on stdout."""
    from rich.console import Console

    # No emoji: ":soccer:" in "window:soccer: failed" is a sport, not a ball.
    return Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def say(text: str) -> None:
    """Print ``text`` on stderr as it is (no rich markup), its control characters
    escaped (:func:`printable`)."""
    from rich.markup import escape

    stderr().print(escape(printable(text)))


# typer 0.26 on brings its own copy of click: its errors are of that copy's classes.
_click: Any = vars(typer.core).get("_click") or vars(typer.core)["click"]
ClickError: type[Exception] = _click.ClickException
"""click's error class, of the click that typer uses."""


class NoCommandError(_click.exceptions.UsageError):  # type: ignore[misc]
    """A group given no command (bare ``asyncsports``): a usage error whose message is
    the group's help. A group raises it itself (``app.Group``): click 8.1 printed the
    help on stdout and exited 0, 8.2 on raise their own NoArgsIsHelpError, exit 2."""

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx.get_help(), ctx=ctx)


def say_click_error(exc: Exception) -> None:
    """Print a click error in the one style of every error: one line, ``asyncsports:
    error: ...``, and for a usage error a second one on where help is; for a group
    given no command, its help (exit 2, as for any usage error)."""
    if isinstance(exc, NoCommandError) or type(exc).__name__ == "NoArgsIsHelpError":
        # The help as --help prints it, on stderr: stdout is for what was asked for.
        sys.stderr.write(exc.format_message() + "\n")  # type: ignore[attr-defined]
        return
    text = " ".join(exc.format_message().split())  # type: ignore[attr-defined]
    say(f"asyncsports: error: {text}")
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, _click.exceptions.UsageError) and ctx is not None:
        say(f"Try '{ctx.command_path} --help' for help.")


def leaf(exc: BaseException) -> BaseException:
    """The error a group stands for: ``exc``, unless it is a group of one error, or of the
    same error several times (the mirror's workers each writing to a full disk)."""
    while isinstance(exc, BaseExceptionGroup):
        first, *others = exc.exceptions
        if any(type(e) is not type(first) or str(e) != str(first) for e in others):
            break
        exc = first
    return exc


def _unreachable(exc: errors.TransportError) -> str:
    parts = urllib.parse.urlsplit(exc.url)
    where = f"{parts.scheme}://{parts.netloc}" if parts.netloc else "the service"
    tries = f" after {exc.attempts} attempts" if exc.attempts > 1 else ""
    if isinstance(exc, errors.TimeoutError):
        return f"timed out waiting for {where}{tries}"
    # aiohttp's text ("connection failed: ClientConnectorError: Cannot connect to host
    # h:p ssl:default [Connect call failed ...]") names the cause last, in brackets.
    cause = str(exc.args[0])
    found = re.search(r"\[([^\]]+)\]\s*$", cause)
    return f"cannot reach {where}{tries}: {found.group(1) if found else cause}"


def _not_found(asked: Sequence[tuple[str, str]]) -> str:
    # What the command looked up, in the words of its --help: "sport", "fixture" for
    # FIXTURE_ID, "season" for --season-id.
    if not asked:
        return "the service has nothing at that address"
    named = [
        f"{name.removesuffix('_id').replace('_', ' ')} {value}"
        + (sport_hint(value) if name == "sport" else "")
        for name, value in asked
    ]
    return "check " + (" and ".join(named) if len(named) < 3 else ", ".join(named))


CAUSES_CAP = 400
"""Characters of an error line's causes at most: one or two lines of a terminal."""


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and what it came from, nearest first: its cause (or the error it met while
    handling another), a group's errors, and a dlt step's ``exception``, each once."""
    out: list[BaseException] = []
    todo = [exc]
    while todo:
        e = todo.pop(0)
        if any(e is seen for seen in out):
            continue
        out.append(e)
        if isinstance(e, BaseExceptionGroup):
            todo.extend(e.exceptions)
        nested = getattr(e, "exception", None)  # dlt's PipelineStepFailed
        if isinstance(nested, BaseException):
            todo.append(nested)
        origin = e.__cause__ or (None if e.__suppress_context__ else e.__context__)
        if origin is not None:
            todo.append(origin)
    return out


def _paragraph(exc: BaseException) -> str:
    # An error's first two lines: dlt's run on with the nested error's whole text after
    # a blank line, name classes on lines of their own ("<class '...'>"), and list every
    # place a setting was looked for after what is missing.
    lines: list[str] = []
    for line in str(exc).strip().splitlines():
        if not line.strip() or len(lines) == 2:
            break
        if not line.startswith("<class "):
            lines.append(" ".join(line.split()))
    return "; ".join(lines)


def with_causes(exc: BaseException) -> str:
    """``exc``'s text and, where it says only what failed, the first lines of each error
    it came from that say something new: "could not load: missing field(s): password".

    An error that says why already ("cannot reach the database at h:p: connection
    refused") stands alone: its cause would repeat it in the system's words.
    """
    text = " ".join(str(exc).split()) or type(exc).__name__
    if ": " in text and not text.endswith(":"):
        return text
    said = [p for p in map(_paragraph, _chain(exc)[1:]) if p]
    # A wrapper that quotes its cause at length ("... the actual reason given is: X")
    # gives way to the cause itself, X; then what is said twice is said once.
    said = [p for i, p in enumerate(said) if not any(q in p for q in said[i + 1 :])]
    for p in said:
        if p not in text:
            text = f"{text.removesuffix(':')}: {p}"
    return _capped(text)


def _capped(text: str) -> str:
    text = hide_urls(text)  # before the cut: a URL cut in its password would show it
    return text if len(text) <= CAUSES_CAP else text[: CAUSES_CAP - 1].rstrip() + "…"


def describe(
    exc: BaseException, asked: Sequence[tuple[str, str]] = (), *, verbose: bool = False
) -> str:
    """One line saying what went wrong, why (its causes: :func:`with_causes`) and,
    where there is one, what to do about it.

    ``asked``: what the command looked up, (name, value) pairs (``Globals.asked``),
    for a 404's hint. Notes on the error (``add_note``: which live feed, why a record is
    not there yet) are shown with it; a 404's notes say what was looked up better than
    ``asked`` can, so they stand in for its hint. ``verbose``: the traceback is printed,
    so an internal error says it is above.
    """
    if exit_code(exc) == 1:  # a bug: its own words, whatever it met on the way
        where = "the traceback is above" if verbose else "--verbose shows the traceback"
        text = " ".join(str(exc).split()) or type(exc).__name__
        return f"internal error: {type(exc).__name__}: {text} ({where})"
    text = _unreachable(exc) if isinstance(exc, errors.TransportError) else with_causes(exc)
    notes = "; ".join(getattr(exc, "__notes__", ()))
    hint: str | None
    if isinstance(exc, errors.NotFoundError):
        hint, notes = notes or _not_found(asked), ""
    else:
        hint = next((h for cls, h in HINTS.items() if isinstance(exc, cls)), None)
    if notes:
        text = f"{text} ({notes})"
    return f"{text}: {hint}" if hint else text


def fail_parts(failed: Sequence[tuple[str, BaseException]], what: str) -> int:
    """Say that ``failed`` parts of a run (``what``: "units", "tasks") failed after their
    retries, the first one's cause, and that the same command retries them; the first
    error's exit code, the one it would give alone (10 for an unreachable service).

    backfill and ``sync --once`` end so: a script reads the same code for the same cause.
    """
    part, first = failed[0]
    say(
        f"asyncsports: error: {len(failed)} {what} failed, first {part}: {describe(first)}; "
        "run the same command again to retry them"
    )
    return exit_code(first)


def fail(cfg: Globals, exc: BaseException) -> NoReturn:
    """Print ``exc`` as one line (with its traceback under --verbose) and exit."""
    error = leaf(exc)
    if cfg.verbose:
        traceback.print_exception(exc, file=sys.stderr)
    say(f"asyncsports: error: {describe(error, cfg.asked, verbose=cfg.verbose)}")
    raise typer.Exit(exit_code(error))
