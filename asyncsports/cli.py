"""The ``asyncsports`` command: every endpoint from the shell, the emulator, and backfill.

Needs the ``cli`` extra (typer, rich): ``pip install 'asyncsports[cli]'``.
"""

# No `from __future__ import annotations` here: typer reads the annotations at runtime,
# including those of the signatures built by `_with_globals`.

import dataclasses
import datetime as dt
import functools
import inspect
import logging
import os
import re
import signal
import sys
import traceback
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import anyio
import msgspec

try:
    import typer
    from rich import box
    from rich.console import Console
    from rich.markup import escape
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
    )
    from rich.progress import Progress as Bars
    from rich.progress import Task as BarTask
    from rich.table import Table
    from rich.text import Text
except ModuleNotFoundError as exc:  # the library is installed without its cli extra
    if exc.name not in ("typer", "rich"):
        raise
    message = f"the asyncsports command needs the cli extra: pip install 'asyncsports[cli]' ({exc})"
    if __name__ == "__main__" or os.path.basename(sys.argv[0]) == "asyncsports":
        raise SystemExit(f"asyncsports: {message}") from None
    raise ModuleNotFoundError(message, name=exc.name) from exc

from asyncsports._sink import SinkError
from asyncsports._version import __version__
from asyncsports._watch import Change
from asyncsports.auth import StreamingCredentials
from asyncsports.backfill import DEFAULT_SPORTS, PHASES, Backfill, Report, Scope
from asyncsports.client import Client
from asyncsports.errors import (
    APIError,
    AsyncSportsError,
    AuthenticationError,
    BadRequestError,
    DecodeError,
    NotFoundError,
    RateLimitError,
    ServerError,
    TransportError,
)
from asyncsports.models import (
    Action,
    Break,
    Event,
    Fixture,
    Match,
    Playback,
    PlayerAst,
    PlayerImage,
    PlayerProfile,
    PreviousWinner,
    Squad,
    Standings,
    Statistics,
    Tournament,
    TournamentPlayer,
    encode,
)
from asyncsports.paging import AsyncList

__all__ = ["EXIT_CODES", "ConfigError", "app", "main"]


class ConfigError(Exception):
    """The command line or environment does not say how to reach the service."""


# Distinct exit codes, most specific class first (documented in the --help epilog).
EXIT_CODES: tuple[tuple[type[BaseException], int, str], ...] = (
    (ConfigError, 3, "configuration (base URL, token, credentials)"),
    (AuthenticationError, 4, "refused credentials (401, 403)"),
    (NotFoundError, 5, "not found (404)"),
    (BadRequestError, 6, "bad request (400)"),
    (RateLimitError, 7, "rate limited (429)"),
    (ServerError, 8, "server error (5xx)"),
    (APIError, 9, "other HTTP status"),
    (TransportError, 10, "host unreachable or timed out"),
    (DecodeError, 11, "undecodable response"),
    (SinkError, 13, "unusable --db file"),
    (AsyncSportsError, 12, "other client error"),
)
HINTS: dict[type[BaseException], str] = {
    AuthenticationError: "check --token (ASYNCSPORTS_TOKEN) or the streaming credentials",
    TransportError: "is the host up and the address right? check --base-url",
    NotFoundError: "check the sport and the ids",
    RateLimitError: "lower --rate-limit",
    ServerError: "the service failed; try again later",
}
INTERRUPTED = 130
PIPE_CLOSED = 141  # 128 + SIGPIPE, what a shell reports for a program its pipe closed on

EPILOG = (
    "Global options (Connection, Live stream events, Emulator, Output) go before or after "
    "the command, and are also read from the ASYNCSPORTS_* environment variable shown "
    "beside each.\n\n"
    "Output: a table on a terminal; JSON Lines (one record per line, as the service writes "
    "it, wire field names) with --json or when stdout is not a terminal.\n\n"
    "Exit codes: 0 done · 1 internal error · 2 usage or bad argument · "
    + " · ".join(f"{code} {text}" for _, code, text in EXIT_CODES)
    + f" · {INTERRUPTED} interrupted (Ctrl-C) · {PIPE_CLOSED} output pipe closed."
)

CONNECTION = "Connection"
STREAMING = "Live stream events"
OUTPUT = "Output"
EMULATOR = "Emulator"


@dataclass(frozen=True, slots=True)
class Settings:
    """The global options of one invocation, merged from both places they may appear."""

    base_url: str | None = None
    token: str | None = None
    vendor: str = "imggaming"
    snooker_feed: str = "tvfeed"
    streaming_url: str | None = None
    operator_id: int | None = None
    stream_secret: str | None = None
    stream_ip: str | None = None
    stream_auth: str | None = None
    stream_timestamp: int | None = None
    rate_limit: float | None = None
    emulator: bool = False
    seed: int = 0
    emulator_scale: str | None = None
    json: bool = False
    verbose: bool = False

    @property
    def as_json(self) -> bool:
        """Whether records go out as JSON Lines rather than a table."""
        return self.json or not sys.stdout.isatty()


def _option(*decls: str, env: str, help: str, panel: str, **kw: Any) -> Any:
    return typer.Option(
        *decls,
        envvar=f"ASYNCSPORTS_{env}",
        help=help,
        rich_help_panel=panel,
        show_default=False,
        **kw,
    )


# name -> (type, default, typer.Option); added to the root and to every command.
GLOBALS: dict[str, tuple[Any, Any, Any]] = {
    "base_url": (
        str | None,
        None,
        _option("--base-url", env="BASE_URL", help="Data service address.", panel=CONNECTION),
    ),
    "token": (
        str | None,
        None,
        _option("--token", env="TOKEN", help="Bearer token of the data service.", panel=CONNECTION),
    ),
    "vendor": (
        str,
        "imggaming",
        _option(
            "--vendor", env="VENDOR", help="Vendor of the Accept media type.", panel=CONNECTION
        ),
    ),
    "snooker_feed": (
        str,
        "tvfeed",
        _option(
            "--snooker-feed",
            env="SNOOKER_FEED",
            help="Snooker feed path segment.",
            panel=CONNECTION,
        ),
    ),
    "rate_limit": (
        float | None,
        None,
        _option(
            "--rate-limit",
            env="RATE_LIMIT",
            help="Requests per second at most (backfill: 5 unless --emulator; 0: no limit).",
            panel=CONNECTION,
            min=0,
        ),
    ),
    "streaming_url": (
        str | None,
        None,
        _option(
            "--streaming-url",
            env="STREAMING_URL",
            help="Live stream host address.",
            panel=STREAMING,
        ),
    ),
    "operator_id": (
        int | None,
        None,
        _option("--operator-id", env="OPERATOR_ID", help="Streaming operator id.", panel=STREAMING),
    ),
    "stream_secret": (
        str | None,
        None,
        _option(
            "--stream-secret",
            env="STREAM_SECRET",
            help="Operator secret: sign each request (with --stream-ip).",
            panel=STREAMING,
        ),
    ),
    "stream_ip": (
        str | None,
        None,
        _option(
            "--stream-ip",
            env="STREAM_IP",
            help="Your IPv4 address, for --stream-secret.",
            panel=STREAMING,
        ),
    ),
    "stream_auth": (
        str | None,
        None,
        _option(
            "--stream-auth",
            env="STREAM_AUTH",
            help="A ready-made token (with --stream-timestamp).",
            panel=STREAMING,
        ),
    ),
    "stream_timestamp": (
        int | None,
        None,
        _option(
            "--stream-timestamp",
            env="STREAM_TIMESTAMP",
            help="Millisecond timestamp of --stream-auth.",
            panel=STREAMING,
        ),
    ),
    "emulator": (
        bool,
        False,
        _option(
            "--emulator",
            env="EMULATOR",
            help="Run against an embedded emulator of all three services "
            "(its own address and credentials).",
            panel=EMULATOR,
        ),
    ),
    "seed": (
        int,
        0,
        _option("--seed", env="SEED", help="Emulator data seed.", panel=EMULATOR),
    ),
    "emulator_scale": (
        str | None,
        None,
        _option(
            "--emulator-scale",
            env="EMULATOR_SCALE",
            help="Emulator data size: key=value,... of its Scale (tests use it).",
            panel=EMULATOR,
            hidden=True,
        ),
    ),
    "json": (
        bool,
        False,
        _option("--json", env="JSON", help="JSON Lines output, even on a terminal.", panel=OUTPUT),
    ),
    "verbose": (
        bool,
        False,
        _option(
            "--verbose",
            "-v",
            env="VERBOSE",
            help="Show tracebacks and retries.",
            panel=OUTPUT,
        ),
    ),
}
_EXPLICIT = "asyncsports.explicit"


def _with_globals(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with the global options added to its signature; it receives them as ``cfg``.

    Global options may come before the command (the root's) or after it (the command's);
    a value typed after the command wins, then one typed before it, then the environment.
    """
    sig = inspect.signature(fn)
    context = inspect.Parameter(
        "ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context
    )
    own = [context, *(p for p in sig.parameters.values() if p.name != "cfg")]
    extra = [
        inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY, default=d, annotation=Annotated[t, o]
        )
        for name, (t, d, o) in GLOBALS.items()
    ]

    @functools.wraps(fn)
    def wrapper(**kwargs: Any) -> Any:
        ctx: typer.Context = kwargs.pop("ctx")
        given = {name: kwargs.pop(name) for name in GLOBALS}
        # ctx.meta is shared by the root's context and the command's.
        explicit: dict[str, Any] = ctx.meta.setdefault(_EXPLICIT, {})
        for name, value in given.items():
            source = ctx.get_parameter_source(name)
            if source is not None and source.name == "COMMANDLINE":
                explicit[name] = value
        cfg = Settings(**{**given, **explicit})
        if "cfg" in sig.parameters:
            kwargs["cfg"] = cfg
        return fn(**kwargs)

    wrapper.__signature__ = sig.replace(parameters=[*own, *extra])  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in [*own, *extra]}
    return wrapper


def _version(value: bool) -> None:
    if value:
        print(f"asyncsports {__version__}")
        raise typer.Exit()


app = typer.Typer(
    name="asyncsports",
    help="Query the sports data service, the snooker proxy and the live stream events "
    "listing; run the emulator; backfill a SQLite database.",
    epilog=EPILOG,
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
snooker_app = typer.Typer(
    help="The snooker proxy: one command per endpoint. Ids: a number is the numeric id, "
    "anything else an external id (UUID).",
    no_args_is_help=True,
)
app.add_typer(snooker_app, name="snooker")


def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Query the sports data service, the snooker proxy and the live stream events
    listing; run the emulator; backfill a SQLite database."""


app.callback(epilog=EPILOG)(_with_globals(_root))


def command(
    group: typer.Typer = app, name: str | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn`` as a command of ``group`` that also takes the global options."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        group.command(name, epilog=EPILOG)(_with_globals(fn))
        return fn

    return decorate


# ------------------------------------------------------------------------ running


def _stderr() -> Console:
    return Console(stderr=True, highlight=False, soft_wrap=True)


def _say(text: str) -> None:
    _stderr().print(escape(text))


def _url(name: str, value: str) -> str:
    parts = urllib.parse.urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{name}: expected an http(s) URL such as https://host, got {value!r}")
    return value


def _credentials(cfg: Settings) -> StreamingCredentials | None:
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


def client_kwargs(cfg: Settings, *, streaming: bool = False) -> dict[str, Any]:
    """The Client arguments the settings give, or ConfigError saying what is missing."""
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
    return {
        "base_url": base_url,
        "token": cfg.token,
        "vendor": cfg.vendor,
        "snooker_feed": cfg.snooker_feed,
        "streaming_url": streaming_url,
        "streaming_credentials": creds,
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


Job = Callable[[Client], Awaitable[int | None]]


async def _session(
    cfg: Settings, job: Job, streaming: bool, live: bool, options: dict[str, Any]
) -> int | None:
    rate = cfg.rate_limit if cfg.rate_limit else None
    if cfg.emulator:
        from asyncsports.emulator import Emulator

        # The emulator's clock stands still unless asked to run: the same command then
        # sees the same data every time (backfill relies on it), and --follow/--watch
        # get a clock that moves.
        scale: dict[str, Any] = emulator_scale(cfg.emulator_scale)
        emulator = Emulator(seed=cfg.seed, running_clock=live, **scale)
        async with emulator, emulator.client(rate_limit=rate, **options) as client:
            return await job(client)
    kwargs = client_kwargs(cfg, streaming=streaming)
    async with Client(**kwargs, rate_limit=rate, **options) as client:
        return await job(client)


def run(
    cfg: Settings, job: Job, *, streaming: bool = False, live: bool = False, **options: Any
) -> None:
    """Run ``job`` with a client for the settings; turn errors into a message and exit code.

    ``streaming``: the job uses the events listing; ``live``: it polls for changes;
    ``options``: more Client keywords.
    """
    _logging(cfg.verbose)
    try:
        code = anyio.run(_session, cfg, job, streaming, live, options)
    except KeyboardInterrupt:
        _say("asyncsports: interrupted")
        raise typer.Exit(INTERRUPTED) from None
    except (Exception, BaseExceptionGroup) as exc:
        if isinstance(_leaf(exc), BrokenPipeError):
            # The reader went away (`| head`): stop quietly, as `yes | head` does. Point
            # stdout at devnull so that flushing it at exit does not fail again.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(PIPE_CLOSED) from None
        fail(cfg, exc)
    if code:
        raise typer.Exit(code)


def _logging(verbose: bool) -> None:
    log = logging.getLogger("asyncsports")
    if verbose:
        handler: logging.Handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("asyncsports: %(message)s"))
        log.setLevel(logging.INFO)
    else:
        # Without a handler Python prints warnings (each retry) to stderr; errors are
        # reported once, at the end, by fail().
        handler = logging.NullHandler()
    log.addHandler(handler)


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def exit_code(exc: BaseException) -> int:
    """The exit code for an error (see EXIT_CODES)."""
    for cls, code, _ in EXIT_CODES:
        if isinstance(exc, cls):
            return code
    if isinstance(exc, ValueError):
        return 2  # the library's argument checks: a bad sport name, id or date
    return 1


def describe(exc: BaseException) -> str:
    """One line saying what went wrong and, where there is one, what to do about it."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, TransportError):
        # aiohttp's text ("connection failed: ClientConnectorError: Cannot connect to host
        # h:p ssl:default [Connect call failed ...]") names the cause last, in brackets.
        cause = str(exc.args[0])
        found = re.search(r"\[([^\]]+)\]\s*$", cause)
        parts = urllib.parse.urlsplit(exc.url)
        where = f"{parts.scheme}://{parts.netloc}" if parts.netloc else "the service"
        tries = f" after {exc.attempts} attempts" if exc.attempts > 1 else ""
        text = f"cannot reach {where}{tries}: {found.group(1) if found else cause}"
    hint = next((h for cls, h in HINTS.items() if isinstance(exc, cls)), None)
    if exit_code(exc) == 1:
        return f"internal error: {type(exc).__name__}: {text} (--verbose shows the traceback)"
    return f"{text}: {hint}" if hint else text


def fail(cfg: Settings, exc: BaseException) -> NoReturn:
    """Print ``exc`` as one line (with its traceback under --verbose) and exit."""
    leaf = _leaf(exc)
    if cfg.verbose:
        traceback.print_exception(exc, file=sys.stderr)
    _say(f"asyncsports: error: {describe(leaf)}")
    raise typer.Exit(exit_code(leaf))


# ------------------------------------------------------------------------ output


def _when(value: dt.datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M") if value else ""


def _name(*parts: str | None) -> str:
    return " ".join(p for p in parts if p)


def _fixture_rows(f: Fixture) -> Iterable[Sequence[object]]:
    comp = f.stage.season.competition if f.stage and f.stage.season else None
    status = f"{f.status} (deleted)" if f.fixture_deleted else f.status
    yield (_when(f.start_date_utc), status, f.name, comp.name if comp else "", f.id)


def _squad_rows(s: Squad) -> Iterable[Sequence[object]]:
    for p in s.players:
        country = p.location.country.name if p.location and p.location.country else None
        yield (s.team.name if s.team else "", p.shirt_number, p.full_name, country, p.id)


def _action_rows(a: Action) -> Iterable[Sequence[object]]:
    fa, s = a.fixture_action, a.fixture_summary
    score = f"{s.home_team_score}-{s.away_team_score}" if s else ""
    who = fa.player.name if fa.player else (fa.team.name if fa.team else "")
    yield (fa.fixture_seq_num, fa.period, fa.clock_time, fa.fixture_action_type, who, score,
           fa.send_type)  # fmt: skip


def _standings_rows(p: Standings) -> Iterable[Sequence[object]]:
    for t in p.teams_statistics:
        yield (t.rank, t.name, t.games_played, t.total_wins, t.total_draws, t.total_losses,
               t.points, p.group.name if p.group else "")  # fmt: skip


def _statistics_rows(p: Statistics) -> Iterable[Sequence[object]]:
    for team in p.team_action_aggregates:
        for agg in team.game_action_aggregates:
            yield (team.team.name if team.team else "", agg.action, agg.action_aggregate)


@dataclass(frozen=True, slots=True)
class View:
    """How a record type shows in a table: headers and the rows of one record."""

    headers: tuple[str, ...]
    rows: Callable[[Any], Iterable[Sequence[object]]]
    whole: tuple[str, ...] = ()
    """Columns never wrapped or cut: UUIDs, which a reader copies into the next command."""


def _tournament_rows(t: Tournament) -> Iterable[Sequence[object]]:
    yield (t.tournament_id, t.tournament_name, t.season_name, _when(t.start_date),
           _when(t.end_date))  # fmt: skip


def _match_rows(m: Match) -> Iterable[Sequence[object]]:
    one = _name(m.player1_first_name, m.player1_last_name)
    two = _name(m.player2_first_name, m.player2_last_name)
    frames = f"{m.player1_frames}-{m.player2_frames}"
    yield (m.match_id, m.round_name or m.round_number, one, frames, two, m.best_out_of_frames)


def _ast_rows(p: PlayerAst) -> Iterable[Sequence[object]]:
    yield (p.player_id, _name(p.player_first_name, p.player_last_name), p.player_ast)


def _player_rows(p: TournamentPlayer) -> Iterable[Sequence[object]]:
    born = p.date_of_birth.date() if p.date_of_birth else ""
    yield (p.player_id, _name(p.player_first_name, p.player_second_name), p.country, born)


def _break_rows(b: Break) -> Iterable[Sequence[object]]:
    player = _name(b.player_first_name, b.player_last_name)
    opponent = _name(b.opponent_first_name, b.opponent_last_name)
    yield (b.break_, player, opponent, b.round_name, b.frame, _when(b.date))


def _profile_rows(p: PlayerProfile) -> Iterable[Sequence[object]]:
    yield (p.player_id, _name(p.player_first_name, p.player_last_name), p.nationality,
           p.season_ranking, p.matches_played, p.matches_won, p.highest_break)  # fmt: skip


def _winner_rows(w: PreviousWinner) -> Iterable[Sequence[object]]:
    yield (w.year, w.player_id, _name(w.player_first_name, w.player_last_name))


def _image_rows(i: PlayerImage) -> Iterable[Sequence[object]]:
    yield (i.file_name, i.file_type, len(i.file_content))


def _event_rows(e: Event) -> Iterable[Sequence[object]]:
    t = e.tournament
    sport = t.property.sport if t and t.property else None
    yield (e.id, e.title, _when(e.start_date), _when(e.end_date), t.name if t else "",
           sport.name if sport else "")  # fmt: skip


def _playback_rows(p: Playback) -> Iterable[Sequence[object]]:
    yield (p.event_id, p.hls_url)


VIEWS: dict[type, View] = {
    Fixture: View(
        ("start (UTC)", "status", "fixture", "competition", "id"), _fixture_rows, ("id",)
    ),
    Squad: View(("team", "shirt", "player", "country", "id"), _squad_rows, ("id",)),
    Action: View(("seq", "period", "clock", "action", "by", "score", "send"), _action_rows),
    Standings: View(("rank", "team", "P", "W", "D", "L", "points", "group"), _standings_rows),
    Statistics: View(("team", "action", "total"), _statistics_rows),
    Tournament: View(("id", "tournament", "season", "start", "end"), _tournament_rows),
    Match: View(("id", "round", "player 1", "frames", "player 2", "best of"), _match_rows),
    PlayerAst: View(("id", "player", "AST (s)"), _ast_rows),
    TournamentPlayer: View(("id", "player", "country", "born"), _player_rows),
    Break: View(("break", "player", "opponent", "round", "frame", "date"), _break_rows),
    PlayerProfile: View(
        ("id", "player", "nationality", "ranking", "played", "won", "highest break"),
        _profile_rows,
    ),
    PreviousWinner: View(("year", "id", "player"), _winner_rows),
    PlayerImage: View(("file", "type", "bytes"), _image_rows),
    Event: View(("id", "event", "start (UTC)", "end (UTC)", "tournament", "sport"), _event_rows),
    Playback: View(("event", "HLS address"), _playback_rows),
}


def _cell(value: object) -> str:
    return "" if value is None else str(value)


def _text(value: object) -> Text:
    # Text, not str: a name such as "[A] Team" is data, not rich markup.
    return Text(_cell(value))


def _line(record: object) -> None:
    sys.stdout.buffer.write(encode(record) + b"\n")
    sys.stdout.flush()


def show(cfg: Settings, records: Sequence[Any], what: str | None = None) -> None:
    """Print records: JSON Lines, or a table on a terminal (captioned ``N what``)."""
    if cfg.as_json:
        for record in records:
            _line(record)
        return
    if not records:
        _stderr().print(f"no {what or 'records'}", style="dim")
        return
    view = VIEWS[type(records[0])]
    table = Table(box=box.SIMPLE_HEAD, caption=f"{len(records)} {what}" if what else None)
    for header in view.headers:
        whole = header in view.whole
        table.add_column(header, no_wrap=whole, min_width=36 if whole else None)
    for record in records:
        for row in view.rows(record):
            table.add_row(*map(_text, row))
    Console().print(table)


async def show_list(cfg: Settings, listing: AsyncList[Any], what: str, limit: int | None) -> None:
    """Print a listing as it arrives (JSON Lines) or as one table at its end."""
    async with listing:
        if cfg.as_json:
            n = 0
            async for record in listing:
                if limit is not None and n >= limit:
                    break
                _line(record)
                n += 1
            return
        records: list[Any] = []
        async for record in listing:
            if limit is not None and len(records) >= limit:
                break
            records.append(record)
    show(cfg, records, what)


async def show_changes(cfg: Settings, changes: AsyncIterator[Change[Any]]) -> None:
    """Print each change of a watcher as it comes: a JSON line, or a line of cells."""
    console = Console(highlight=False)
    headed = False
    async for change in changes:
        if cfg.as_json:
            head = b'{"change":"%s","record":' % change.kind.encode()
            sys.stdout.buffer.write(head + encode(change.record) + b"}\n")
            sys.stdout.flush()
            continue
        view = VIEWS[type(change.record)]
        if not headed:
            console.print(f"{'change':<7}" + " | ".join(view.headers), style="bold")
            headed = True
        for row in view.rows(change.record):
            console.print(f"{change.kind:<7}" + " | ".join(map(_cell, row)), markup=False)


# ----------------------------------------------------------------- data commands

Sport = Annotated[str, typer.Argument(help="basketball, ice-hockey, volleyball, soccer, ...")]
FixtureId = Annotated[str, typer.Argument(help="Fixture id (UUID).", show_default=False)]
Limit = Annotated[int | None, typer.Option("--limit", min=1, help="Stop after this many records.")]


def _date(value: dt.datetime | None) -> dt.date | None:
    return value.date() if value is not None else None


@command()
def fixtures(
    sport: Sport,
    season: Annotated[str | None, typer.Option(help="Only this season (id).")] = None,
    live: Annotated[bool, typer.Option("--live", help="Only fixtures live now.")] = False,
    status: Annotated[
        str | None, typer.Option(help="scheduled, live, completed or postponed.")
    ] = None,
    date_from: Annotated[
        dt.datetime | None,
        typer.Option(
            "--from",
            formats=["%Y-%m-%d"],
            metavar="YYYY-MM-DD",
            help="Starting on or after (YYYY-MM-DD).",
        ),
    ] = None,
    date_to: Annotated[
        dt.datetime | None,
        typer.Option(
            "--to",
            formats=["%Y-%m-%d"],
            metavar="YYYY-MM-DD",
            help="Starting on or before (YYYY-MM-DD).",
        ),
    ] = None,
    type: Annotated[str | None, typer.Option(help="official, simulation or training.")] = None,
    coverage: Annotated[
        str | None, typer.Option(help="noCoverage, inVenue, lowLatencyStream, ...")
    ] = None,
    sort: Annotated[
        list[str] | None,
        typer.Option(
            metavar="FIELD[,DIR]", help="name or startTime, then asc or desc; repeatable."
        ),
    ] = None,
    include_deleted: Annotated[
        bool | None,
        typer.Option("--include-deleted/--exclude-deleted", help="Deleted fixtures too."),
    ] = None,
    page_size: Annotated[int | None, typer.Option(min=1, max=1000, help="Page size.")] = None,
    limit: Limit = None,
    *,
    cfg: Settings,
) -> None:
    """List fixtures of a sport (or of one of its seasons)."""

    async def job(client: Client) -> None:
        listing = client.fixtures.list(
            sport,
            season_id=season,
            live=live or None,
            status=status,
            date_from=_date(date_from),
            date_to=_date(date_to),
            type=type,
            coverage_level=coverage,
            sort=sort or None,
            size=page_size,
            include_deleted=include_deleted,
        )
        await show_list(cfg, listing, "fixtures", limit)

    run(cfg, job)


@command()
def fixture(sport: Sport, fixture_id: FixtureId, *, cfg: Settings) -> None:
    """Show one fixture."""

    async def job(client: Client) -> None:
        show(cfg, [await client.fixtures.get(sport, fixture_id)])

    run(cfg, job)


@command()
def squads(
    sport: Sport,
    season: Annotated[str | None, typer.Option(help="Squads of this season (id).")] = None,
    team: Annotated[str | None, typer.Option(help="Squads of this team (id).")] = None,
    limit: Limit = None,
    *,
    cfg: Settings,
) -> None:
    """List the squads of a season or of a team (give one of --season, --team)."""
    if (season is None) == (team is None):
        raise typer.BadParameter("give exactly one of --season and --team")

    async def job(client: Client) -> None:
        await show_list(
            cfg, client.squads.list(sport, season_id=season, team_id=team), "squads", limit
        )

    run(cfg, job)


@command()
def actions(
    sport: Sport,
    fixture_id: FixtureId,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep polling; print new and updated actions.")
    ] = False,
    interval: Annotated[float, typer.Option(min=1, help="Seconds between polls.")] = 5.0,
    limit: Limit = None,
    *,
    cfg: Settings,
) -> None:
    """List the actions of a fixture; with --follow, until it finishes."""

    async def job(client: Client) -> None:
        if not follow:
            await show_list(cfg, client.actions.list(sport, fixture_id), "actions", limit)
        elif not hasattr(client.actions, "follow"):
            raise ConfigError("--follow needs a newer asyncsports (actions.follow)")
        else:
            await show_changes(cfg, client.actions.follow(sport, fixture_id, interval=interval))

    run(cfg, job, live=follow)


@command()
def standings(
    sport: Sport,
    season: Annotated[str | None, typer.Option(help="Standings of this season (id).")] = None,
    stage: Annotated[str | None, typer.Option(help="Standings of this stage (id).")] = None,
    *,
    cfg: Settings,
) -> None:
    """Show the standings of a season or of a stage (give one of --season, --stage)."""
    if (season is None) == (stage is None):
        raise typer.BadParameter("give exactly one of --season and --stage")

    async def job(client: Client) -> None:
        packets = await client.standings.get(sport, season_id=season, stage_id=stage)
        show(cfg, packets)

    run(cfg, job)


@command()
def statistics(sport: Sport, fixture_id: FixtureId, *, cfg: Settings) -> None:
    """Show the statistics packet of a fixture (there is one once it has ended)."""

    async def job(client: Client) -> None:
        show(cfg, [await client.statistics.get(sport, fixture_id)])

    run(cfg, job)


# ----------------------------------------------------------------------- snooker


def _id(value: str) -> int | str:
    """A snooker id: a number means the numeric path, anything else the external one."""
    return int(value) if value.isdigit() else value


Tid = Annotated[str, typer.Argument(help="Tournament id: a number, or an external UUID.")]
SortOptions = Annotated[
    list[str] | None,
    typer.Option(
        "--sort", metavar="FIELD[,DIR]", help="A wire field, then asc or desc; repeatable."
    ),
]
ForSeason = Annotated[bool, typer.Option("--for-season", help="The tournament's whole season.")]


@command(snooker_app)
def tournaments(
    season: Annotated[int | None, typer.Option(help="Season id.")] = None,
    start: Annotated[str | None, typer.Option(help="From this date.")] = None,
    end: Annotated[str | None, typer.Option(help="To this date.")] = None,
    sort: SortOptions = None,
    limit: Limit = None,
    *,
    cfg: Settings,
) -> None:
    """Tournaments, of a season or between two dates."""

    async def job(client: Client) -> None:
        listing = client.snooker.tournaments(season_id=season, start=start, end=end,
                                             sort_options=sort)  # fmt: skip
        await show_list(cfg, listing, "tournaments", limit)

    run(cfg, job)


@command(snooker_app)
def matches(
    tournament: Tid,
    round: Annotated[int | None, typer.Option(help="Only this round.")] = None,
    sort: SortOptions = None,
    limit: Limit = None,
    *,
    cfg: Settings,
) -> None:
    """Matches of a tournament."""

    async def job(client: Client) -> None:
        listing = client.snooker.matches(_id(tournament), round_number=round, sort_options=sort)
        await show_list(cfg, listing, "matches", limit)

    run(cfg, job)


@command(snooker_app)
def ast(
    tournament: Tid,
    for_season: ForSeason = False,
    sort: SortOptions = None,
    limit: Limit = None,
    *,
    cfg: Settings,
) -> None:
    """Players' average shot times in a tournament."""

    async def job(client: Client) -> None:
        listing = client.snooker.ast(_id(tournament), for_season=for_season or None,
                                     sort_options=sort)  # fmt: skip
        await show_list(cfg, listing, "players", limit)

    run(cfg, job)


@command(snooker_app, "tournament-players")
def tournament_players(
    tournament: Tid, sort: SortOptions = None, limit: Limit = None, *, cfg: Settings
) -> None:
    """Players entered in a tournament."""

    async def job(client: Client) -> None:
        listing = client.snooker.tournament_players(_id(tournament), sort_options=sort)
        await show_list(cfg, listing, "players", limit)

    run(cfg, job)


@command(snooker_app, "tour-players")
def tour_players(sort: SortOptions = None, limit: Limit = None, *, cfg: Settings) -> None:
    """Players of the tour."""

    async def job(client: Client) -> None:
        await show_list(cfg, client.snooker.tour_players(sort_options=sort), "players", limit)

    run(cfg, job)


@command(snooker_app)
def centuries(
    tournament: Tid,
    for_season: ForSeason = False,
    sort: SortOptions = None,
    limit: Limit = None,
    *,
    cfg: Settings,
) -> None:
    """Century breaks of a tournament."""

    async def job(client: Client) -> None:
        listing = client.snooker.centuries(_id(tournament), for_season=for_season or None,
                                           sort_options=sort)  # fmt: skip
        await show_list(cfg, listing, "centuries", limit)

    run(cfg, job)


@command(snooker_app, "current-tournament-winner")
def current_tournament_winner(tournament: Tid, *, cfg: Settings) -> None:
    """The current winner of a tournament."""

    async def job(client: Client) -> None:
        show(cfg, [await client.snooker.current_tournament_winner(_id(tournament))])

    run(cfg, job)


@command(snooker_app, "previous-tournament-winner")
def previous_tournament_winner(
    tournament: Tid, sort: SortOptions = None, limit: Limit = None, *, cfg: Settings
) -> None:
    """Earlier winners of a tournament."""

    async def job(client: Client) -> None:
        listing = client.snooker.previous_tournament_winners(_id(tournament), sort_options=sort)
        await show_list(cfg, listing, "winners", limit)

    run(cfg, job)


@command(snooker_app, "player-info")
def player_info(
    player: Annotated[str, typer.Argument(help="Player id: a number, or an external UUID.")],
    tournament: Tid,
    save: Annotated[
        Path | None, typer.Option(help="Write the image to this file.", dir_okay=False)
    ] = None,
    *,
    cfg: Settings,
) -> None:
    """A player's image (its name, type and size; --save writes it out)."""

    async def job(client: Client) -> None:
        image = await client.snooker.player_info(_id(player), _id(tournament))
        if save is not None:
            save.write_bytes(image.file_content)
        show(cfg, [image])

    run(cfg, job)


# ------------------------------------------------------------------------ events


class Restriction(StrEnum):
    """Restriction list kinds of the events listing."""

    whitelist = "whitelist"
    blacklist = "blacklist"


@command()
def events(
    live: Annotated[bool, typer.Option("--live", help="Only events live now.")] = False,
    vendor_data_id: Annotated[
        bool, typer.Option("--vendor-data-id", help="Add each event's data service id.")
    ] = False,
    restrictions: Annotated[
        Restriction | None, typer.Option(help="Add country lists per event.")
    ] = None,
    sub_restrictions: Annotated[
        Restriction | None, typer.Option(help="Add country and US state lists per event.")
    ] = None,
    page_size: Annotated[int | None, typer.Option(min=1, max=500, help="Page size.")] = None,
    watch: Annotated[
        bool,
        typer.Option("--watch", "-w", help="Keep polling; print events going live and ending."),
    ] = False,
    interval: Annotated[float, typer.Option(min=1, help="Seconds between polls.")] = 30.0,
    limit: Limit = None,
    *,
    cfg: Settings,
) -> None:
    """List live stream events (booked and live ones); with --watch, follow the live ones."""

    async def job(client: Client) -> None:
        if watch:
            if not hasattr(client.events, "watch"):
                raise ConfigError("--watch needs a newer asyncsports (events.watch)")
            await show_changes(cfg, client.events.watch(interval=interval))
            return
        listing = client.events.list(
            live=live or None,
            vendor_data_id=vendor_data_id or None,
            restrictions=restrictions.value if restrictions else None,
            sub_restrictions=sub_restrictions.value if sub_restrictions else None,
            page_size=page_size,
        )
        await show_list(cfg, listing, "events", limit)

    run(cfg, job, streaming=True, live=watch)


@command()
def playback(event_id: Annotated[int, typer.Argument(help="Event id.")], *, cfg: Settings) -> None:
    """The playback (HLS) address of a live event."""

    async def job(client: Client) -> None:
        show(cfg, [await client.events.playback(event_id)])

    run(cfg, job, streaming=True)


# ---------------------------------------------------------------------- emulator


@app.command(
    "emulator",
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

    raise typer.Exit(emulator_main.main(ctx.args))


# ---------------------------------------------------------------------- backfill


class _Rate(ProgressColumn):
    """Units per second of a task."""

    def render(self, task: BarTask) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.0f}/s" if speed else "", style="progress.data.speed")


class _BarsProgress:
    """The backfill's progress as rich bars, one per phase."""

    def __init__(self, bars: Bars) -> None:
        self._bars = bars
        self._tasks = {phase: bars.add_task(phase, total=None) for phase in PHASES}

    def add(self, phase: str, total: int) -> None:
        task = self._tasks[phase]
        self._bars.update(task, total=(self._bars.tasks[task].total or 0) + total)

    def advance(self, phase: str, n: int = 1) -> None:
        self._bars.advance(self._tasks[phase], n)

    def settle(self, phase: str) -> None:
        task = self._tasks[phase]
        self._bars.update(task, total=self._bars.tasks[task].completed)


def _summary(cfg: Settings, report: Report) -> None:
    if cfg.as_json:
        sys.stdout.write(msgspec.json.encode(report.as_dict()).decode() + "\n")
        return
    console = Console(highlight=False)
    state = "finished" if report.finished else "stopped"
    resumed = f", resumed ({report.skipped:,} units were done before)" if report.resumed else ""
    console.print(f"Backfill {state} in {report.seconds:.1f} s{resumed}.")
    table = Table("table", "rows", "written now", box=box.SIMPLE_HEAD)
    for name, rows in report.rows.items():
        table.add_row(name, f"{rows:,}", f"{report.written.get(name, 0):,}")
    console.print(table)
    console.print(
        f"{report.requests:,} requests, {report.retries:,} retries; "
        f"{report.without_statistics:,} started fixtures have no statistics yet. "
        f"Database: {report.db}"
    )
    if report.not_found:
        shown = ", ".join(report.not_found[:5]) + (" ..." if len(report.not_found) > 5 else "")
        console.print(f"Not found (404, skipped): {shown}", style="yellow")


@command()
def backfill(
    sport: Annotated[
        list[str] | None,
        typer.Option(
            "--sport", "-s", metavar="SPORT", help="A sport to backfill; repeatable. Default: all."
        ),
    ] = None,
    season: Annotated[
        list[str] | None,
        typer.Option(metavar="SEASON_ID", help="Only this season (id); repeatable."),
    ] = None,
    date_from: Annotated[
        dt.datetime | None,
        typer.Option(
            "--from",
            formats=["%Y-%m-%d"],
            metavar="YYYY-MM-DD",
            help="Fixtures starting on or after.",
        ),
    ] = None,
    date_to: Annotated[
        dt.datetime | None,
        typer.Option(
            "--to",
            formats=["%Y-%m-%d"],
            metavar="YYYY-MM-DD",
            help="Fixtures starting on or before.",
        ),
    ] = None,
    db: Annotated[Path, typer.Option(dir_okay=False, help="SQLite database to fill.")] = Path(
        "asyncsports.sqlite"
    ),
    concurrency: Annotated[
        int, typer.Option(min=1, max=64, help="Requests in flight at once.")
    ] = 8,
    page_size: Annotated[int, typer.Option(min=1, max=1000, help="Fixtures per page.")] = 100,
    restart: Annotated[
        bool, typer.Option("--restart", help="Start over even if the last run was interrupted.")
    ] = False,
    *,
    cfg: Settings,
) -> None:
    """Copy fixtures, then each started fixture's actions and statistics, into SQLite.

    Tables fixtures, actions and statistics hold key columns and the record's JSON
    (column json); re-running upserts. A run stopped by Ctrl-C (or killed) resumes when
    the same command is run again.
    """
    scope = Scope(
        sports=tuple(sport or DEFAULT_SPORTS),
        seasons=tuple(season or ()),
        date_from=_date(date_from),
        date_to=_date(date_to),
        page_size=page_size,
    )
    if cfg.rate_limit is None and not cfg.emulator:
        cfg = dataclasses.replace(cfg, rate_limit=5.0)
    err = _stderr()
    columns = (TextColumn("{task.description:<10}"), BarColumn(), MofNCompleteColumn(),
               _Rate(), TimeElapsedColumn())  # fmt: skip
    outcome: list[Report] = []

    async def job(client: Client) -> int | None:
        with Bars(*columns, console=err, disable=not err.is_terminal) as bars:
            work = Backfill(client, db, scope, concurrency=concurrency, restart=restart,
                            progress=_BarsProgress(bars))  # fmt: skip
            async with anyio.create_task_group() as tg:
                tg.start_soon(_stop_on_sigint, work, err)
                outcome.append(await work.run())
                tg.cancel_scope.cancel()
        return None

    run(cfg, job, max_connections=concurrency)
    report = outcome[0]
    _summary(cfg, report)
    if report.interrupted:
        _say(f"asyncsports: interrupted; run the same command again to resume ({report.db})")
        raise typer.Exit(INTERRUPTED)
    if report.failed:
        unit, first = report.failed[0]
        _say(
            f"asyncsports: error: {len(report.failed)} units failed, first {unit}: "
            f"{describe(first)}; run the same command again to retry them"
        )
        raise typer.Exit(exit_code(first))


async def _stop_on_sigint(work: Backfill, err: Console) -> None:
    """First Ctrl-C: stop cleanly (what is fetched is committed). Second: quit at once."""
    with anyio.open_signal_receiver(signal.SIGINT) as signals:
        first = True
        async for _ in signals:
            if not first:
                # Safe for the database: an uncommitted transaction is simply not there.
                os._exit(INTERRUPTED)
            first = False
            err.print("stopping: saving what is fetched (Ctrl-C again to quit at once)")
            work.stop()


def main() -> None:
    """The console script."""
    app()


if __name__ == "__main__":
    main()
