"""The ``--help`` of every command reads right on every typer the project supports.

typer's rendering has changed under the project (typer 0.12: ``[default: None]``; newer:
``--json <bool>``, ``<str>``, ``{sport}`` in usage lines, extras' brackets eaten as rich
markup). These render each command's help as a user sees it, at a fixed width with
colour off, and assert on the text, so they hold on whichever typer is installed.
"""

from __future__ import annotations

import importlib.util
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import typer
from support import invoke

from asyncsports.cli import app

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


# `emulator --help` is asyncsports-emulator's own (argparse) help, passed through.
CLICK_PATHS = [p for p in PATHS if command(p).add_help_option]


@cache
def rendered(path: tuple[str, ...]) -> str:
    result = invoke(*path, "--help", **ENV)
    assert result.exit_code == 0, result.output
    return ANSI.sub("", result.output)


def options(path: list[str]) -> list[Any]:
    ctx = context(path)
    params = ctx.command.get_params(ctx)
    return [p for p in params if p.param_type_name == "option" and not p.hidden]


def row(text: str, param: Any) -> tuple[str, str]:
    """The option's row in the help: (what follows its names, its help's first word)."""
    # typer's columns: long names, short ones, then the negative (--no-x) long and short.
    names = [
        *sorted(param.opts, key=lambda o: not o.startswith("--")),
        *sorted(param.secondary_opts, key=lambda o: not o.startswith("--")),
    ]
    pattern = r"^│[ *]+" + r" +".join(re.escape(n) for n in names) + r" +(\S+)"
    found = re.search(pattern, text, re.MULTILINE)
    assert found, f"no row for {names} in:\n{text}"
    first = (param.help or "").split()[0] if param.help else ""
    return found.group(1), first


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


@pytest.mark.parametrize("path", CLICK_PATHS, ids=ids)
def test_flags_take_no_value(path: list[str]) -> None:
    text = rendered(tuple(path))
    flags = [p for p in options(path) if p.is_flag]
    assert any("--help" in p.opts for p in flags)
    for param in flags:
        after, first = row(text, param)
        assert after == first, f"{param.opts} shows {after!r} before its help {first!r}"


@pytest.mark.parametrize("path", CLICK_PATHS, ids=ids)
def test_values_show_a_plain_metavar(path: list[str]) -> None:
    text = rendered(tuple(path))
    for param in options(path):
        if not param.is_flag:
            after, _ = row(text, param)
            assert PLAIN.fullmatch(after), f"{param.opts} shows {after!r}"


@pytest.mark.parametrize("path", CLICK_PATHS, ids=ids)
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
    listed = re.findall(r"^│ ([a-z-]+) ", text.split("─ Commands ─")[1], re.MULTILINE)
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
