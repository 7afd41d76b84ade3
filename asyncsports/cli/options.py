"""The global options every command takes, the settings they make, and shared arguments."""

# No `from __future__ import annotations` here: typer reads the annotations at runtime,
# including those of the signatures built by `with_globals`.

import copy
import dataclasses
import datetime as dt
import enum
import functools
import inspect
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import typer

# Light: Settings' module imports neither aiohttp nor the credentials (--help reads it).
from asyncsports._http.config import CONNECTION, STREAMING, CliOption, Settings
from asyncsports._wire.defaults import RATE_LIMIT_KEY, SNOOKER_FEED, VENDOR

from .names import PATH_MAX, check_length, check_sport, check_sports

OUTPUT = "Output"
EMULATOR = "Emulator"

FOLLOW_SPEED = 600.0
"""The embedded emulator's clock speed while a command follows (``--follow``,
``--watch``) unless ``--emulator-speed`` says: ten minutes a second, so that the live
fixture with the most left to play (under three hours) ends within about 20 seconds."""
SYNC_SPEED = 1.0
"""The same for ``sync``: real time, as its cadences are real seconds."""


@dataclass(frozen=True, slots=True)
class Globals:
    """The global options of one invocation, merged from both places they may appear.

    The options of :data:`SETTINGS` are fields here under their own names (typed, for the
    commands that read them), with the defaults of Settings (tests/cli/test_cli_settings.py
    holds them to it); the rest are the command line's own.
    """

    base_url: str | None = None
    token: str | None = None
    vendor: str = VENDOR
    snooker_feed: str = SNOOKER_FEED
    streaming_url: str | None = None
    live_url: str | None = None
    rate_limit: float | None = None
    rate_limit_url: str | None = None
    rate_limit_key: str = RATE_LIMIT_KEY
    rate_limit_sharers: int = 1
    operator_id: int | None = None
    stream_secret: str | None = None
    stream_ip: str | None = None
    stream_auth: str | None = None
    stream_timestamp: int | None = None
    emulator: bool = False
    seed: int = 0
    emulator_scale: str | None = None
    emulator_speed: float | None = None
    """``--emulator-speed``: the clock speed of a command that follows (None: its default)."""
    json: bool = False
    wide: bool = False
    columns: str | None = None
    """``--columns a,b``: the table's columns by name, as given (None: those that fit)."""
    verbose: bool = False
    record: str | None = None
    record_overwrite: bool = False
    query: list[str] | None = None
    """``--query KEY=VALUE`` items: parameters sent with every request the command makes."""
    asked: tuple[tuple[str, str], ...] = ()
    """What the command looks up, as (name, value): its arguments and its ``*_id``
    options that were given. A 404's hint names them."""

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


SETTINGS: dict[str, dataclasses.Field[Any]] = {
    f.name: f for f in dataclasses.fields(Settings) if "cli" in f.metadata
}
"""The settings the command line takes, by name: each is a global option made from its
field (:class:`~asyncsports._http.config.CliOption`) and handed to the Client as it is."""


def _settings(*names: str) -> dict[str, tuple[Any, Any, Any]]:
    # Each setting's option: --rate-limit-key, ASYNCSPORTS_RATE_LIMIT_KEY, for rate_limit_key;
    # optional even where the setting is required (base_url: --emulator serves its own).
    made = {}
    for name in names:
        f = SETTINGS[name]
        cli: CliOption = f.metadata["cli"]
        default = None if f.default is dataclasses.MISSING else f.default
        kind = cli.kind if default is not None else cli.kind | None
        bounds = {} if cli.min is None else {"min": cli.min}
        flag = "--" + name.replace("_", "-")
        option = _option(flag, env=name.upper(), help=cli.help, panel=cli.panel, **bounds)
        made[name] = (kind, default, option)
    return made


_FIRST = ("base_url", "token", "vendor", "snooker_feed", "rate_limit", "live_url")
"""Settings listed before --query in --help; the others follow it, in Settings' order."""

# name -> (type, default, typer.Option); added to the root and to every command.
GLOBALS: dict[str, tuple[Any, Any, Any]] = {
    **_settings(*_FIRST),
    "query": (
        list[str] | None,
        None,
        _option(
            "--query",
            env="QUERY",
            help="A query parameter sent with every request, for what the spec omits "
            "(subscribed=true); repeatable. The command's own options come first.",
            panel=CONNECTION,
            metavar="KEY=VALUE",
            callback=lambda items: [_query_item(item) for item in items or ()],
        ),
    ),
    **_settings(*(name for name in SETTINGS if name not in _FIRST)),
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
    "emulator_speed": (
        float | None,
        None,
        _option(
            "--emulator-speed",
            env="EMULATOR_SPEED",
            help="Its clock's speed (X times real time; 0 still) while a command follows: "
            f"--follow and --watch (default {FOLLOW_SPEED:g}: a live fixture ends within "
            f"seconds) and sync (default {SYNC_SPEED:g}). Other commands keep it still, so "
            "they show the same data every time.",
            panel=EMULATOR,
            min=0,
            metavar="X",
        ),
    ),
    "json": (
        bool,
        False,
        _option("--json", env="JSON", help="JSON Lines output, even on a terminal.", panel=OUTPUT),
    ),
    "wide": (
        bool,
        False,
        _option(
            "--wide",
            env="WIDE",
            help="A table with every column, whole (names wrap); without it, the columns "
            "that fit the terminal.",
            panel=OUTPUT,
        ),
    ),
    "columns": (
        str | None,
        None,
        _option(
            "--columns",
            env="COLUMNS",
            help="The table's columns, by name, in this order (an unknown name lists "
            "them). JSON Lines are unchanged: every field.",
            panel=OUTPUT,
            metavar="NAME[,NAME]",
        ),
    ),
    "record": (
        str | None,
        None,
        _option(
            "--record",
            env="RECORD",
            help="Record every request, answer and live message to this file (JSON Lines, "
            "gzip if it ends .gz; no secret in it): asyncsports-emulator --replay serves it. "
            "A file that holds anything is refused (exit 17) unless --record-overwrite.",
            panel=OUTPUT,
            metavar="FILE",
        ),
    ),
    "record_overwrite": (
        bool,
        False,
        _option(
            "--record-overwrite",
            env="RECORD_OVERWRITE",
            help="Let --record replace a file that holds an earlier recording.",
            panel=OUTPUT,
        ),
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


def _query_item(item: str) -> str:
    name, equals, _ = item.partition("=")
    if not equals or not name.strip():
        raise typer.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="'--query'")
    return item


def query_params(items: list[str] | None) -> dict[str, list[str]] | None:
    """``--query`` items as a Client's ``default_query`` (a name given twice repeats)."""
    if not items:
        return None
    out: dict[str, list[str]] = {}
    for item in items:
        name, _, value = item.partition("=")
        out.setdefault(name.strip(), []).append(value)
    return out


def _globals(ctx: typer.Context, given: dict[str, Any]) -> Globals:
    # ctx.meta is shared by the root's context and the command's, so a value typed
    # before the command is still known when the command's own values come in.
    explicit: dict[str, Any] = ctx.meta.setdefault(_EXPLICIT, {})
    for name, value in given.items():
        source = ctx.get_parameter_source(name)
        if source is not None and source.name == "COMMANDLINE":
            explicit[name] = value
    cfg = Globals(**{**given, **explicit})
    _emulator_or_address(cfg, explicit)
    return cfg


ADDRESSES = ("base_url", "live_url", "streaming_url")
"""The services' addresses, which --emulator replaces with its own."""


def _emulator_or_address(cfg: Globals, explicit: dict[str, Any]) -> None:
    # An address typed on the command line with --emulator is a contradiction: say so
    # rather than pick one. One from the environment (a profile's ASYNCSPORTS_BASE_URL)
    # is a default that --emulator outranks, as any option typed outranks its variable.
    typed = [name for name in ADDRESSES if explicit.get(name)]
    if cfg.emulator and typed:
        option = "--" + typed[0].replace("_", "-")
        source = "" if "emulator" in explicit else " (set by ASYNCSPORTS_EMULATOR)"
        raise typer.BadParameter(
            f"not with --emulator{source}, which serves its own address; drop one of them",
            param_hint=f"'{option}'",
        )


def _asked(ctx: typer.Context, own: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    # Flags aside: --vendor-data-id asks for more fields, it looks nothing up.
    return tuple(
        (p.name, str(own[p.name]))
        for p in ctx.command.params
        if p.name in own
        and own[p.name] is not None
        and not isinstance(own[p.name], bool)
        and (p.param_type_name == "argument" or p.name.endswith("_id"))
    )


def _shown(option: Any, hidden: bool) -> Any:
    if not hidden or option.hidden:
        return option
    option = copy.copy(option)  # GLOBALS' own is the root's, listed
    option.hidden = True
    return option


def with_globals(
    fn: Callable[..., Any],
    finish: Callable[[Globals, Any], None] | None = None,
    *,
    hidden: bool = False,
) -> Callable[..., Any]:
    """``fn`` with the global options added to its signature.

    ``fn`` receives them as ``cfg`` if it has such a parameter; ``finish(cfg, result)``
    then gets what ``fn`` returned. Global options may come before the command (the
    root's) or after it (the command's); a value typed after the command wins, then one
    typed before it, then the environment. ``hidden``: taken but not listed in --help
    (a command's: ``asyncsports --help`` lists them once).
    """
    sig = inspect.signature(fn)
    context = inspect.Parameter(
        "ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context
    )
    own = [context, *(p for p in sig.parameters.values() if p.name != "cfg")]
    extra = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=d,
            annotation=Annotated[t, _shown(o, hidden)],
        )
        for name, (t, d, o) in GLOBALS.items()
    ]

    @functools.wraps(fn)
    def wrapper(**kwargs: Any) -> None:
        ctx: typer.Context = kwargs.pop("ctx")
        cfg = _globals(ctx, {name: kwargs.pop(name) for name in GLOBALS})
        cfg = dataclasses.replace(cfg, asked=_asked(ctx, kwargs))
        if "cfg" in sig.parameters:
            kwargs["cfg"] = cfg
        result = fn(**kwargs)
        if finish is not None:
            finish(cfg, result)

    wrapper.__signature__ = sig.replace(  # type: ignore[attr-defined]
        parameters=[*own, *extra], return_annotation=None
    )
    wrapper.__annotations__ = {p.name: p.annotation for p in [*own, *extra]}
    return wrapper


# ------------------------------------------------------------ shared arguments

Sport = Annotated[
    str,
    typer.Argument(
        help="basketball, ice-hockey, volleyball, soccer, ...",
        callback=lambda value: check_sport(value),
    ),
]
Limit = Annotated[int | None, typer.Option("--limit", min=1, help="Stop after this many records.")]
Interval = Annotated[float, typer.Option(min=1, help="Seconds between polls.")]
ConnectTimeout = Annotated[
    float,
    typer.Option(
        min=0.1,
        metavar="SECONDS",
        help="Seconds to reach a PostgreSQL --db (connect and log in) before failing.",
    ),
]
"""The ``--connect-timeout`` option of the commands that take a PostgreSQL ``--db``."""
MetricsPort = Annotated[
    int | None,
    typer.Option(metavar="PORT", help="Serve Prometheus /metrics and /healthz (0: any)."),
]
"""The ``--metrics-port`` option of ``sync`` and ``changes --to``."""


class Speed(enum.StrEnum):
    """How fast ``--via ws`` replays a fixture that is over (``--replay``)."""

    fast = "fast"
    normal = "normal"


Replay = Annotated[
    Speed,
    typer.Option(
        "--replay",
        case_sensitive=False,
        help="--via ws, a fixture that is over: fast sends it all at once, normal replays "
        "it with its own pace (the service ignores it for a fixture being played).",
    ),
]


class Way(enum.Enum):
    """How ``--follow`` follows (``--via``)."""

    poll = "poll"
    ws = "ws"


Via = Annotated[
    Way | None,
    typer.Option(
        "--via",
        case_sensitive=False,
        help="How --follow follows: ws, the live websocket; poll, the REST API every "
        "--interval. Default: ws when a live URL is set (or --emulator), else poll.",
        show_default=False,
    ),
]


def db_location(value: str) -> str:
    """A ``--db`` value (callback): a SQLite file or a ``postgresql://`` URL; any other
    URL (``mysql://u@h/x``) is a usage error rather than a file of that name, and so is
    one longer than any system opens (:data:`~.names.PATH_MAX`)."""
    check_length("'--db'", "a path", value, PATH_MAX)
    scheme, sep, _ = value.partition("://")
    if (
        sep
        and scheme.isascii()
        and scheme.replace("+", "").isalnum()
        and not value.startswith(("postgresql://", "postgres://"))
    ):
        raise typer.BadParameter(
            f"unknown URL scheme {scheme + '://'!r}: a SQLite file or a postgresql:// URL",
            param_hint="'--db'",
        )
    return value


def _sports(values: list[str] | None) -> list[str]:
    # Never None: typer 0.18 takes len() of what a list option's callback returns.
    return (check_sports(values) or []) if values else []


Sports = Annotated[
    list[str] | None,
    typer.Option(
        "--sports",
        "-s",
        metavar="SPORT",
        callback=_sports,
        help="A sport; repeatable. Default: all.",
    ),
]
"""``--sports``/``-s`` of the commands that work on several sports (a slip of a known
name is a usage error)."""
Db = Annotated[
    str,
    typer.Option(
        callback=db_location,
        metavar="FILE|URL",
        help="A SQLite file, or a PostgreSQL URL: postgresql://user:pass@host/db "
        "(needs asyncsports[postgres]).",
    ),
]
"""``--db`` of the commands that write a database (the default is each command's)."""
PageSize = Annotated[
    int,
    typer.Option(
        min=1, max=1000, help="Fixtures per page (the service allows 1,000: the fewest requests)."
    ),
]
"""``--page-size`` of the bulk copies (backfill, load)."""


def date_option(help: str) -> Any:
    """A ``YYYY-MM-DD`` option, named after its parameter (``date_from``: ``--date-from``)."""
    return typer.Option(
        formats=["%Y-%m-%d"], metavar="DATE", help=f"{help.removesuffix('.')} (YYYY-MM-DD)."
    )


def day(value: dt.datetime | None) -> dt.date | None:
    """The date of a ``date_option`` value (typer parses dates as datetimes)."""
    return value.date() if value is not None else None
