"""One vocabulary: a command's options are named as its client method's keywords, so a
filter is declared by the method and exposed under the same name (``_`` written ``-``);
a new filter on one side and not the other fails here."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest
import typer
from support.cli import invoke

from asyncsports.cli import app
from asyncsports.cli.options import ADDRESSES
from asyncsports.resources.events import EventsResource
from asyncsports.resources.fixtures import FixturesResource
from asyncsports.resources.snooker import SnookerResource
from asyncsports.resources.squads import SquadsResource
from asyncsports.resources.standings import StandingsResource

PYTHON_ONLY = {
    "self",
    "resume",
    "concurrency",
    "lookahead",
    "extra",
    "size",
    "media",
    "idle_timeout",
    "start_position",
    "sort_options",
}
"""Keywords of the methods that are no filter: paging, tuning, deprecated names."""
CLI_ONLY = {"limit", "follow", "via", "interval", "replay", "watch", "cfg"}
"""Options of the commands that are no filter: how much to show, how to follow."""


def _command(*path: str) -> Any:
    cmd: Any = typer.main.get_command(app)
    for name in path:
        cmd = cmd.commands[name]
    return cmd


def _options(*path: str) -> set[str]:
    shared = set(ADDRESSES)
    own = {p.name for p in _command(*path).params if not getattr(p, "hidden", False)}
    return own - CLI_ONLY - shared - _globals()


def _globals() -> set[str]:
    return {p.name for p in _command().params}


def _keywords(method: Callable[..., Any]) -> set[str]:
    return set(inspect.signature(method).parameters) - PYTHON_ONLY


@pytest.mark.parametrize(
    ("path", "method"),
    [
        (("fixtures",), FixturesResource.list),
        (("squads",), SquadsResource.list),
        (("standings",), StandingsResource.get),
        (("events",), EventsResource.list),
        (("snooker", "tournaments"), SnookerResource.tournaments),
        (("snooker", "matches"), SnookerResource.matches),
        (("snooker", "centuries"), SnookerResource.centuries),
    ],
)
def test_a_commands_filters_are_its_methods_keywords(
    path: tuple[str, ...], method: Callable[..., Any]
) -> None:
    assert _options(*path) == _keywords(method)


def test_the_same_idea_has_one_option_name_across_commands() -> None:
    names: dict[str, set[str]] = {}
    for path in [("fixtures",), ("events",), ("backfill",), ("load",), ("snooker", "matches")]:
        for p in _command(*path).params:
            for opt in p.opts:
                names.setdefault(p.name, set()).add(opt)
    assert names["page_size"] == {"--page-size"}
    assert "size" not in names
    assert names["sort"] == {"--sort"}
    assert _command("backfill").params and "--season-id" in {
        o for p in _command("backfill").params for o in p.opts
    }


def test_a_command_run_without_sports_takes_them_all_on_every_typer() -> None:
    # typer 0.18 takes len() of what a list option's callback returns: --sports left out
    # must come back as it went in (a TypeError, exit 1, on the lowest typer before).
    result = invoke("--emulator", "sync", "--once", "--every", "bogus=5")
    assert result.exit_code == 2, result.output
    assert "--every" in result.stderr
