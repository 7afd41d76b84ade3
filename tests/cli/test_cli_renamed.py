"""Renamed options: the old spelling still works for a release, says so once, and is in
no --help; the table of renames names real options of real commands."""

from __future__ import annotations

import re
from typing import Any

import click
import pytest
import typer
from hypothesis import given
from hypothesis import strategies as st
from support.cli import invoke

from asyncsports.cli import app
from asyncsports.cli.renamed import REMOVED_IN, RENAMED, rewrite


def _commands() -> dict[str, click.Command]:
    """Every leaf command by name (snooker's too)."""
    found: dict[str, click.Command] = {}

    def walk(cmd: click.Command) -> None:
        if hasattr(cmd, "commands"):  # a group (typer's own click on newer typer)
            for sub in cmd.commands.values():
                walk(sub)
        elif cmd.name:
            found[cmd.name] = cmd

    walk(typer.main.get_command(app))
    return found


def _names(cmd: click.Command) -> set[str]:
    return {name for p in cmd.params for name in (*p.opts, *p.secondary_opts)}


@pytest.mark.parametrize(
    ("command", "old", "new"),
    [(command, old, new) for command, names in RENAMED.items() for old, new in names.items()],
)
def test_each_rename_is_from_a_gone_name_to_an_option_of_the_command(
    command: str, old: str, new: str
) -> None:
    cmd = _commands()[command]
    assert new in _names(cmd)
    assert old not in _names(cmd)
    shown = invoke(*_path(command), "--help", COLUMNS="200").stdout
    assert not re.search(rf"(?<![\w-]){re.escape(old)}(?![\w-])", shown)


def _path(command: str) -> list[str]:
    top: Any = typer.main.get_command(app)
    return [command] if command in top.commands else ["snooker", command]


def test_the_old_spelling_lists_what_the_new_one_does_and_says_so_once() -> None:
    new = invoke(
        "--emulator", "fixtures", "basketball", "--page-size", "2", "--limit", "3", "--json"
    )
    old = invoke(
        "--emulator", "fixtures", "basketball", "--size", "2", "--limit=3", "--json", "--size=2"
    )
    assert new.exit_code == old.exit_code == 0, old.stderr
    assert old.stdout == new.stdout and old.stdout.count("\n") == 3
    assert new.stderr == ""
    line = f"asyncsports: warning: fixtures --size is deprecated: use --page-size (the old name goes in {REMOVED_IN})"
    assert old.stderr.splitlines() == [line]


def test_a_bad_value_under_the_old_name_is_refused_by_the_new_name() -> None:
    result = invoke("--emulator", "fixtures", "basketball", "--size", "0")
    assert result.exit_code == 2
    assert "--page-size" in result.stderr


def test_the_replay_pace_under_its_old_name() -> None:
    result = invoke("--emulator", "actions", "basketball", "not-an-id", "--speed", "slow")
    assert result.exit_code == 2
    assert "--replay" in result.stderr and "is deprecated" in result.stderr


tokens = st.lists(st.sampled_from(["--size", "--size=3", "--", "3", "--page-size", "x", "-f"]))


@given(tokens)
def test_rewrite_renames_only_before_a_double_dash_and_warns_once_a_name(args: list[str]) -> None:
    said: list[str] = []
    out = rewrite("fixtures", args, said.append)
    cut = args.index("--") if "--" in args else len(args)
    assert out[cut:] == args[cut:]  # after "--" everything is an argument
    for was, now in zip(args[:cut], out[:cut], strict=True):
        assert (
            now == was.replace("--size", "--page-size") if was.startswith("--size") else now == was
        )
    assert len(said) == (1 if any(a.startswith("--size") for a in args[:cut]) else 0)
    assert rewrite("events", args, said.append) == args  # another command's names stay
