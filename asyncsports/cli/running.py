"""Running a command: a client for the settings, exit codes, one-line errors, logging."""

from __future__ import annotations

import contextvars
import logging
import os
import re
import sys
import traceback
import urllib.parse
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer
import typer.core

from asyncsports import errors
from asyncsports._wire.secrets import hide_urls
from asyncsports._wire.shown import printable

from .extra import MISSING_EXTRA
from .interrupts import interrupts
from .names import PATH_MAX, check_length, sport_hint
from .options import SETTINGS, Globals, query_params

if TYPE_CHECKING:  # imported where used: --help and --version import none of them
    from aiohttp import web
    from rich.console import Console

    from asyncsports.auth import StreamingCredentials
    from asyncsports.client import Client

__all__ = [
    "EXIT_CODES",
    "INTERRUPTED",
    "PIPE_CLOSED",
    "TERMINATED",
    "WORKER_KILLED",
    "ClickError",
    "ConfigError",
    "FeedEndedError",
    "OutputFileError",
    "client_kwargs",
    "code_for",
    "describe",
    "emulator_scale",
    "emulator_speed",
    "exit_code",
    "exit_code_table",
    "fail",
    "fail_parts",
    "listen",
    "printable",
    "run",
    "say",
    "say_click_error",
    "setup_logging",
    "sport_hint",
    "stderr",
    "sync_logging",
    "with_causes",
    "write_file",
]


class ConfigError(Exception):
    """The command line or environment does not say how to reach the service."""


class OutputFileError(Exception):
    """A file the user named for output (``--save``) cannot be written."""


class FeedEndedError(Exception):
    """A live feed (``--follow``) ended without the fixture's finishing record."""


def write_file(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path``; OutputFileError naming the path if the system refuses."""
    try:
        path.write_bytes(data)
    except OSError as exc:
        raise OutputFileError(f"cannot write {path}: {exc.strerror or exc}") from exc


# Most specific class first: the first that matches gives the code. Codes are a
# contract with scripts, so an existing one never changes meaning; a class that
# shares a code shares its line in the --help epilog.
EXIT_CODES: tuple[tuple[type[BaseException], int, str], ...] = (
    (ConfigError, 3, "configuration (base URL, token, credentials)"),
    (errors.AuthenticationError, 4, "refused credentials (401, 403)"),
    (errors.NotFoundError, 5, "not found (404)"),
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
HINTS: dict[type[BaseException], str] = {
    errors.AuthenticationError: "check --token (ASYNCSPORTS_TOKEN) or the streaming credentials",
    errors.TimeoutError: "the service is slow or unreachable; try again later",
    errors.TransportError: "is the host up and the address right? check --base-url",
    errors.RateLimitError: "lower --rate-limit",
    errors.ServerError: "the service failed; try again later",
}
INTERRUPTED = 130  # 128 + SIGINT; a command stopped by SIGTERM exits 128 + 15
TERMINATED = 143
PIPE_CLOSED = 141  # 128 + SIGPIPE, what a shell reports for a program its pipe closed on


WORKER_KILLED = 19
"""``backfill --workers``: a worker was killed by a signal, so has no exit code to pass on."""

EVERY = "every command"
SERVICE = "every command that asks the service"
DATABASES = "sync, backfill, changes, export, jobs, worker, load"
# Who meets each code, for the reference's table; a code not here: SERVICE.
USED_BY: dict[int, str] = {
    0: EVERY,
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
    TERMINATED: EVERY,
}


def exit_code_table() -> list[tuple[int, str, str]]:
    """Every exit code: (code, what it means, which commands use it), in code order."""
    texts: dict[int, list[str]] = {
        0: ["done"],
        1: ["internal error (a bug: --verbose shows the traceback)"],
        2: ["usage or bad argument (a misspelt name, an unknown --db scheme, a port in use)"],
        WORKER_KILLED: ["a backfill --workers worker killed by a signal"],
        INTERRUPTED: ["interrupted (Ctrl-C)"],
        PIPE_CLOSED: ["output pipe closed"],
        TERMINATED: ["terminated (SIGTERM)"],
    }
    for _, code, text in EXIT_CODES:
        if text not in texts.setdefault(code, []):
            texts[code].append(text)
    return [(c, ", ".join(texts[c]), USED_BY.get(c, SERVICE)) for c in sorted(texts)]


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


async def listen(serving: Awaitable[web.AppRunner], port: int) -> web.AppRunner:
    """A metrics server started (``--metrics-port``), where it listens said on stderr; a
    port in use (or not ours to take) is a usage error (the user's to change)."""
    try:
        runner = await serving
    except OSError as exc:
        why = exc.strerror or exc
        raise typer.BadParameter(
            f"cannot listen on {port}: {why}", param_hint="'--metrics-port'"
        ) from None
    say(f"asyncsports: metrics on http://127.0.0.1:{runner.addresses[0][1]}/metrics")
    return runner


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


class _Printable(logging.Formatter):
    """A log line's message escaped (:func:`printable`); a traceback kept as it is."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return printable(super().formatMessage(record))


# typer 0.26 on brings its own copy of click: its errors are of that copy's classes.
_click: Any = vars(typer.core).get("_click") or vars(typer.core)["click"]
ClickError: type[Exception] = _click.ClickException
"""click's error class, of the click that typer uses."""


def say_click_error(exc: Exception) -> None:
    """Print a click error in the one style of every error: one line, ``asyncsports:
    error: ...``, and for a usage error a second one on where help is."""
    if type(exc).__name__ == "NoArgsIsHelpError":
        return  # the help it stands for is printed already (typer does the same)
    text = " ".join(exc.format_message().split())  # type: ignore[attr-defined]
    say(f"asyncsports: error: {text}")
    ctx = getattr(exc, "ctx", None)
    if isinstance(exc, _click.exceptions.UsageError) and ctx is not None:
        say(f"Try '{ctx.command_path} --help' for help.")


# ------------------------------------------------------------------ the client


def _url(name: str, value: str) -> str:
    parts = urllib.parse.urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{name}: expected an http(s) URL such as https://host, got {value!r}")
    return value


def _live_url(value: str) -> str:
    parts = urllib.parse.urlsplit(value)
    if parts.scheme not in ("ws", "wss", "http", "https") or not parts.hostname:
        raise ConfigError(f"--live-url: expected a ws(s) URL such as wss://host, got {value!r}")
    return value


def _credentials(cfg: Globals) -> StreamingCredentials | None:
    from asyncsports.auth import StreamingCredentials

    if cfg.operator_id is None:
        if cfg.stream_secret or cfg.stream_auth:
            raise ConfigError("streaming credentials need --operator-id (ASYNCSPORTS_OPERATOR_ID)")
        return None
    if cfg.stream_secret is not None:
        if not cfg.stream_ip:
            raise ConfigError("--stream-secret needs --stream-ip, your IPv4 address")
        return StreamingCredentials.from_secret(cfg.operator_id, cfg.stream_secret, cfg.stream_ip)
    if cfg.stream_auth is not None and cfg.stream_timestamp is not None:
        return StreamingCredentials(cfg.operator_id, cfg.stream_auth, cfg.stream_timestamp)
    raise ConfigError(
        "--operator-id needs --stream-secret with --stream-ip, "
        "or --stream-auth with --stream-timestamp"
    )


SHARED = ("rate_limit_url", "rate_limit_key", "rate_limit_sharers")
"""The settings of a budget shared through Redis: given only with a --rate-limit."""


def _rate(cfg: Globals) -> dict[str, Any]:
    """``--rate-limit`` (0: no limit) and, with ``--rate-limit-url``, how it is shared."""
    rate = cfg.rate_limit or None
    if rate is None or not cfg.rate_limit_url:
        return {"rate_limit": rate}
    return {"rate_limit": rate, **{name: getattr(cfg, name) for name in SHARED}}


def client_kwargs(cfg: Globals, *, streaming: bool = False) -> dict[str, Any]:
    """The Client arguments the settings give, or ConfigError saying what is missing.

    Every setting the command line takes (:data:`~.options.SETTINGS`) by its own name,
    its addresses checked, and the streaming credentials its options make.
    """
    creds = _credentials(cfg)
    streaming_url = _url("--streaming-url", cfg.streaming_url) if cfg.streaming_url else None
    if streaming:
        if streaming_url is None:
            raise ConfigError(
                "no live stream address: pass --streaming-url URL "
                "(or set ASYNCSPORTS_STREAMING_URL), or use --emulator"
            )
        if creds is None:
            raise ConfigError(
                "no streaming credentials: pass --operator-id with --stream-secret and "
                "--stream-ip (or ASYNCSPORTS_OPERATOR_ID, ...), or use --emulator"
            )
    base_url = cfg.base_url or (streaming_url if streaming else None)
    if not base_url:
        raise ConfigError(
            "no service address: pass --base-url URL (or set ASYNCSPORTS_BASE_URL), "
            "or add --emulator to try the embedded emulator"
        )
    _url("--base-url", base_url)
    if not streaming and not cfg.token:
        raise ConfigError("no token: pass --token TOKEN or set ASYNCSPORTS_TOKEN")
    given = {name: getattr(cfg, name) for name in SETTINGS if name not in SHARED}
    return {
        **given,
        **_rate(cfg),
        "base_url": base_url,
        "streaming_url": streaming_url,
        "streaming_credentials": creds,
        "live_url": _live_url(cfg.live_url) if cfg.live_url else None,
    }


SCALE_KEYS = ("competitions", "seasons", "teams", "fixtures_per_season", "actions_per_fixture")


def emulator_scale(text: str | None) -> dict[str, int]:
    """``--emulator-scale`` (``fixtures_per_season=4,teams=4``) as Emulator keywords."""
    values: dict[str, int] = {}
    for item in (text or "").split(","):
        if not item.strip():
            continue
        name, _, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if name not in SCALE_KEYS or not value.strip().isdigit():
            raise ConfigError(
                f"--emulator-scale: expected name=number,... with names from "
                f"{', '.join(SCALE_KEYS)}; got {item!r}"
            )
        values[name] = int(value)
    return values


Job = Callable[["Client"], Awaitable[int | None]]
EMULATOR: contextvars.ContextVar[Any] = contextvars.ContextVar("emulator", default=None)
"""The embedded emulator while a job runs with --emulator (``asyncsports sync`` reads its
clock)."""


def emulator_speed(cfg: Globals, follows: float | None) -> float:
    """The embedded emulator's clock speed for a command: ``--emulator-speed`` or the
    command's default ``follows`` where it follows, 0 (still) where it does not."""
    if follows is None:
        # The same command then shows the same data every time (backfill relies on it),
        # whatever a profile's ASYNCSPORTS_EMULATOR_SPEED says.
        return 0.0
    return cfg.emulator_speed if cfg.emulator_speed is not None else follows


def _check_record(path: str, overwrite: bool) -> None:
    """A wrong --record path is the user's, and so is an earlier recording there: said
    before anything is sent (the client's own rule, in the command's words)."""
    from asyncsports._http.transports.record import prepare_a_recording, refuse_a_recording

    check_length("'--record'", "a path", path, PATH_MAX)
    try:
        prepare_a_recording(path)  # never blocks: a FIFO is refused, not waited on
    except errors.RecordingWriteError as exc:
        why = exc.strerror or exc
        raise OutputFileError(f"--record: cannot write {path}: {why}") from None
    if not overwrite:
        try:
            refuse_a_recording(path)
        except FileExistsError:
            raise OutputFileError(
                f"--record: {path} holds a recording already; --record-overwrite replaces it"
            ) from None


async def _session(
    cfg: Globals, job: Job, streaming: bool, follows: float | None, options: dict[str, Any]
) -> int | None:
    from asyncsports.client import Client

    if cfg.query:
        options = {**options, "default_query": query_params(cfg.query)}
    if cfg.record:
        _check_record(cfg.record, cfg.record_overwrite)
        options = {**options, "record": cfg.record, "record_overwrite": cfg.record_overwrite}
    if cfg.emulator:
        from asyncsports.emulator import Emulator

        # The emulator serves its own addresses and credentials: of the settings, only
        # how fast to ask is the command line's.
        scale: dict[str, Any] = emulator_scale(cfg.emulator_scale)
        speed = emulator_speed(cfg, follows)
        emulator = Emulator(seed=cfg.seed, speed=speed, **scale)
        async with emulator, emulator.client(**_rate(cfg), **options) as client:
            token = EMULATOR.set(emulator)
            try:
                return await job(client)
            finally:
                EMULATOR.reset(token)
    kwargs = client_kwargs(cfg, streaming=streaming)
    async with Client(**kwargs, **options) as client:
        return await job(client)


# --------------------------------------------------------------------- running


def run(
    cfg: Globals,
    job: Job,
    *,
    streaming: bool = False,
    follows: float | None = None,
    interrupted: str = "asyncsports: interrupted",
    **options: Any,
) -> None:
    """Run ``job`` with a client for the settings; turn errors into a message and exit code.

    ``streaming``: the job uses the events listing; ``follows``: it follows changes as
    they happen, so an embedded emulator's clock runs, at ``--emulator-speed`` or else
    this speed (None: it reads once, and the clock stands still); ``interrupted``: the
    line to print when a signal ends the job; ``options``: more Client keywords. A job's
    non-zero result is the exit code.

    The event loop runs in an :class:`asyncio.Runner`, with SIGINT and SIGTERM handled
    by :data:`~.interrupts.interrupts` from before it starts until after it is closed:
    no signal can interrupt the loop's own shutdown (see that module).
    """
    import asyncio

    setup_logging(cfg.verbose)
    with interrupts.installed():
        interrupts.message = interrupted
        try:
            if interrupts.received:  # before the loop: do not start at all
                raise asyncio.CancelledError
            with asyncio.Runner() as runner:
                code = runner.run(_main(cfg, job, streaming, follows, options))
        except ClickError:
            raise  # a usage error found as the job starts (--metrics-port in use)
        except (asyncio.CancelledError, KeyboardInterrupt):
            # Cancelled at a signal (KeyboardInterrupt: only where the handler could
            # not be installed, outside the main thread).
            say(interrupted)
            raise typer.Exit(interrupts.code or INTERRUPTED) from None
        except (Exception, BaseExceptionGroup) as exc:
            if isinstance(_leaf(exc), BrokenPipeError):
                # The reader went away (`| head`): stop quietly, as `yes | head` does. Point
                # stdout at devnull so that flushing it at exit does not fail again.
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                raise typer.Exit(PIPE_CLOSED) from None
            fail(cfg, exc)
    if code:
        raise typer.Exit(code)


async def _main(
    cfg: Globals, job: Job, streaming: bool, follows: float | None, options: dict[str, Any]
) -> int | None:
    import asyncio

    task = asyncio.current_task()
    assert task is not None
    interrupts.attach(task)
    try:
        return await _session(cfg, job, streaming, follows, options)
    finally:
        interrupts.detach()


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


def _leaf(exc: BaseException) -> BaseException:
    # A group of one error is that error; so is a group of the same error several times
    # (tasks that met one failure at once: the mirror's workers each writing to a full disk).
    while isinstance(exc, BaseExceptionGroup):
        first, *others = exc.exceptions
        if any(type(e) is not type(first) or str(e) != str(first) for e in others):
            break
        exc = first
    return exc


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
    leaf = _leaf(exc)
    if cfg.verbose:
        traceback.print_exception(exc, file=sys.stderr)
    say(f"asyncsports: error: {describe(leaf, cfg.asked, verbose=cfg.verbose)}")
    raise typer.Exit(exit_code(leaf))
