"""The ``--help`` of every command reads right on every typer the project supports.

typer's rendering has changed under the project (typer 0.12: ``[default: None]``; newer:
``--json <bool>``, ``<str>``, ``{sport}`` in usage lines, extras' brackets eaten as rich
markup). These render each command's help as a user sees it, at a fixed width with
colour off, and assert on the text, so they hold on whichever typer is installed.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import typer
from support import invoke
from typer.testing import CliRunner

from asyncsports.cli import app
from asyncsports.cli.app import POINTER, Command
from asyncsports.cli.options import GLOBALS

ROOT = Path(__file__).resolve().parents[2]
WIDTH = 200  # wide enough that no row of an option wraps before its help text
ENV = {"COLUMNS": str(WIDTH), "TERM": "dumb", "NO_COLOR": "1", "_TYPER_FORCE_DISABLE_TERMINAL": "1"}
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# A value's metavar as click writes it: TEXT, SEASON_ID, FILE|URL, KIND=SECONDS,
# YYYY-MM-DD, FIELD[,DIR], or the choices [poll|ws].
PLAIN = re.compile(
    r"[A-Z][A-Z0-9_]*(?:[=|-][A-Z0-9_]+|\[,[A-Z]+\])*|\[[a-z0-9-]+(?:\|[a-z0-9-]+)+\]"
)
# typer 0.29's type column: <bool>, <str>, <int range>, <poll|ws>, <%Y-%m-%d>...
ANGLED = re.compile(r"<[a-z%][^<>\s]*(?: [a-z]+)?>")


def _hook() -> Any:
    # The site's CLI page walks the commands this way; the tests cover the same ones.
    spec = importlib.util.spec_from_file_location("cli", ROOT / "docs" / "_hooks" / "cli.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ROOT_COMMAND = typer.main.get_command(app)
PATHS = _hook()._commands(ROOT_COMMAND, [])


def context(path: list[str]) -> Any:
    """The context of the click command at ``path`` (``[]``: the root group), as when run."""
    cmd: Any = ROOT_COMMAND
    ctx = cmd.context_class(cmd, info_name="asyncsports", **cmd.context_settings)
    for name in path:
        cmd = cmd.get_command(ctx, name)
        ctx = cmd.context_class(cmd, info_name=name, parent=ctx, **cmd.context_settings)
    return ctx


def command(path: list[str]) -> Any:
    return context(path).command


# The global options as the root command declares them: name -> its click option.
GLOBAL_OPTIONS = {p.name: p for p in ROOT_COMMAND.params if p.name in GLOBALS}
GLOBAL_NAMES = {opt for p in GLOBAL_OPTIONS.values() for opt in [*p.opts, *p.secondary_opts]}
WIDTHS = (60, 80, 120)


@cache
def rendered(path: tuple[str, ...], width: int = WIDTH) -> str:
    """The help of ``path`` as a terminal ``width`` columns wide shows it."""
    # click's runner fixes the width of help at 80 columns whatever COLUMNS says; the
    # context's terminal_width is what a terminal's width becomes (less a margin of 2).
    env = {k: None for k in os.environ if k.startswith("ASYNCSPORTS_")} | ENV
    result = CliRunner().invoke(
        app, [*path, "--help"], env=env, prog_name="asyncsports", terminal_width=width
    )
    assert result.exit_code == 0, result.output
    return ANSI.sub("", result.output)


def options(path: list[str]) -> list[Any]:
    ctx = context(path)
    params = ctx.command.get_params(ctx)
    return [p for p in params if p.param_type_name == "option" and not p.hidden]


def sections(text: str) -> dict[str, list[str]]:
    """The help's sections (``Options:``, ``Connection:``...): heading -> its lines."""
    found: dict[str, list[str]] = {}
    for block in text.split("\n\n"):
        heading, _, rest = block.partition("\n")
        if re.fullmatch(r"\w[\w ]*:", heading):
            found[heading[:-1]] = rest.splitlines()
    return found


def terms(text: str) -> list[str]:
    """The lines that name an option (``  -s, --sports SPORT  A sport...``)."""
    return [line for lines in sections(text).values() for line in lines if line.startswith("  -")]


def row(text: str, param: Any) -> str:
    """What follows the option's names on its row: its metavar, or nothing for a flag."""
    names = [
        *sorted(param.opts, key=lambda o: o.startswith("--")),
        *sorted(param.secondary_opts, key=lambda o: o.startswith("--")),
    ]
    pattern = r"^  " + r"(?:, | / )".join(re.escape(n) for n in names) + r"(?: (\S+))?(?=  |$)"
    found = re.search(pattern, text, re.MULTILINE)
    assert found, f"no row for {names} in:\n{text}"
    return found.group(1) or ""


def ids(path: list[str]) -> str:
    return " ".join(path) or "asyncsports"


def test_every_command_is_covered() -> None:
    # The walk finds the nested groups' commands, not just the top level.
    assert len(PATHS) > 20
    assert ["snooker", "player-info"] in PATHS and ["backfill"] in PATHS


@pytest.mark.parametrize("path", PATHS, ids=ids)
def test_no_angled_metavar(path: list[str]) -> None:
    text = rendered(tuple(path))
    assert not ANGLED.findall(text), text


@pytest.mark.parametrize("path", PATHS, ids=ids)
def test_flags_take_no_value(path: list[str]) -> None:
    text = rendered(tuple(path))
    flags = [p for p in options(path) if p.is_flag]
    assert any("--help" in p.opts for p in flags)
    for param in flags:
        after = row(text, param)
        assert after == "", f"{param.opts} shows {after!r} after its names"


@pytest.mark.parametrize("path", PATHS, ids=ids)
def test_values_show_a_plain_metavar(path: list[str]) -> None:
    text = rendered(tuple(path))
    for param in options(path):
        if not param.is_flag:
            after = row(text, param)
            assert PLAIN.fullmatch(after), f"{param.opts} shows {after!r}"


@pytest.mark.parametrize("path", PATHS, ids=ids)
def test_usage_names_arguments_in_capitals(path: list[str]) -> None:
    text = rendered(tuple(path))
    cmd = command(path)
    arguments = [p for p in cmd.params if p.param_type_name == "argument"]
    words = [p.name.upper() if p.required else f"[{p.name.upper()}]" for p in arguments]
    if hasattr(cmd, "list_commands"):
        words.append("COMMAND [ARGS]...")
    usage = " ".join(["Usage: asyncsports", *path, "[OPTIONS]", *words])
    line = next(line for line in text.splitlines() if "Usage:" in line)
    assert line.strip() == usage


@pytest.mark.parametrize("path", PATHS, ids=ids)
def test_no_default_none(path: list[str]) -> None:
    text = rendered(tuple(path))
    assert "default: None" not in text


@pytest.mark.parametrize(
    ("path", "extra"),
    [([], "parquet"), (["export"], "parquet"), (["backfill"], "postgres")],
    ids=["asyncsports", "export", "backfill"],
)
def test_extras_are_printed(path: list[str], extra: str) -> None:
    # rich reads "[postgres]" as a tag; the text must come through as written.
    text = rendered(tuple(path))
    assert f"asyncsports[{extra}]" in text, text


@pytest.mark.parametrize("path", PATHS, ids=ids)
def test_every_extra_named_is_printed(path: list[str]) -> None:
    cmd = command(path)
    texts = [cmd.help, cmd.epilog, *(getattr(p, "help", None) for p in cmd.params)]
    named = {m for t in texts if t for m in re.findall(r"asyncsports\\?\[(\w+)\]", t)}
    text = rendered(tuple(path))
    assert all(f"asyncsports[{extra}]" in text for extra in named), (named, text)


def test_commands_are_listed_in_the_order_they_were_added() -> None:
    names = [c.name or c.callback.__name__ for c in app.registered_commands if c.callback]
    text = rendered(())
    listed = re.findall(r"^  ([a-z-]+)", text.split("\nCommands:\n")[1], re.MULTILINE)
    assert [n for n in listed if n in names] == names


@pytest.mark.slow
def test_the_site_page_reads_the_same() -> None:
    # docs/_hooks/cli.py renders the page at its own width, through the same typer.
    page = _hook().render()
    assert "Usage: asyncsports actions [OPTIONS] SPORT FIXTURE_ID" in page
    assert not ANGLED.findall(page)
    assert "{sport}" not in page and "default: None" not in page
    assert "asyncsports[postgres]" in page and "asyncsports[parquet]" in page
    # rich crops a word longer than its column with an ellipsis: the page would lose it.
    assert "…" not in page


def test_a_usage_error_names_the_argument_as_the_usage_line_does() -> None:
    result = invoke("actions", "soccer", **ENV)
    out = ANSI.sub("", result.output)
    assert result.exit_code == 2
    # One plain line, as every error (test_cli_exits.py), and where help is.
    assert result.stderr.splitlines() == [
        "asyncsports: error: Missing argument 'FIXTURE_ID'.",
        "Try 'asyncsports actions --help' for help.",
    ], out


# --------------------------------------------- at any width, each option's own screen


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", PATHS, ids=ids)
def test_no_option_name_is_cut(path: list[str], width: int) -> None:
    text = rendered(tuple(path), width)
    named = " ".join(terms(text))
    for param in options(path):
        for name in [*param.opts, *param.secondary_opts]:
            assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", named), (name, text)
    assert "…" not in text


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", PATHS, ids=ids)
def test_no_line_is_wider_than_the_terminal(path: list[str], width: int) -> None:
    text = rendered(tuple(path), width)
    wide = [line for line in text.splitlines() if len(line) > width]
    assert not wide, "\n".join(wide)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", PATHS[1:], ids=ids)
def test_a_command_s_help_lists_no_global_option(path: list[str], width: int) -> None:
    text = rendered(tuple(path), width)
    named = set(re.findall(r"(?<![\w-])--?[\w-]+", " ".join(terms(text))))
    last = " ".join(text.split("\n\n")[-1].split())
    if path == ["emulator"]:
        # It takes none of the global options (its --token, --seed and --rate-limit are
        # the server's own), and has exit codes of its own.
        assert not any(p.name in GLOBALS and p.hidden for p in command(path).params)
        assert "Exit codes:" in text and POINTER not in text
        return
    assert not named & GLOBAL_NAMES, text
    assert "Exit codes:" not in text  # the list is the top-level help's
    assert last == POINTER


def test_the_top_level_help_lists_every_global_option_once_in_its_panel() -> None:
    text = rendered(())
    panels = sections(text)
    assert len(GLOBAL_OPTIONS) == len(GLOBALS)
    for param in GLOBAL_OPTIONS.values():
        if param.hidden:
            continue
        term = rf"^  (?:-\w, )?{re.escape(param.opts[-1])}(?![\w-])"
        assert len(re.findall(term, "\n".join(terms(text)), re.M)) == 1, param.opts
        assert re.search(term, "\n".join(panels[param.rich_help_panel]), re.M), param.opts
    assert text.count("Exit codes:") == 1 and "backfill a SQLite database" not in text


@pytest.mark.parametrize("path", PATHS[1:], ids=ids)
def test_every_command_shows_an_example_that_parses(path: list[str]) -> None:
    text = " ".join(rendered(tuple(path), 200).split())
    found = re.search(r"Example: asyncsports (.*?)(?: Global options and exit codes|$)", text)
    assert found, text
    # Parsed as the command line would be, values unchecked (FIXTURE_ID stands for one).
    args = shlex.split(found.group(1))
    assert parse(args)[: len(path)] == path  # a group's: one of its commands
    with pytest.raises(Exception, match="No such option"):  # the parse does check names
        parse([*args, "--no-such"])


def parse(args: list[str]) -> list[str]:
    """The command path ``args`` name, each level's options and arguments parsed."""
    path: list[str] = []
    while True:
        ctx = context(path)
        _, rest, _ = ctx.command.make_parser(ctx).parse_args(list(args))
        if not hasattr(ctx.command, "list_commands"):
            assert not rest, rest  # nothing left over
            return path
        name, *args = rest
        path.append(name)


def test_a_pair_of_flags_shows_its_default_by_name() -> None:
    # No command has one on today; typer says which of the two, and so does the help.
    pair = typer.Typer()

    @pair.command(cls=Command)
    def keep(on: bool = typer.Option(True, "--keep/--drop", help="Keep it.")) -> None:
        """Keep or drop."""

    text = CliRunner().invoke(pair, ["--help"], terminal_width=80).output
    assert re.search(r"^  --keep / --drop +Keep it\. \[default: keep\]$", text, re.M), text
