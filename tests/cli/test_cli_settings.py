"""The command line's settings come from ``Settings`` (issue 42, point 5): a setting with
a ``CliOption`` is a global option (``--rate-limit-key``, ``ASYNCSPORTS_RATE_LIMIT_KEY``)
and reaches the Client under its own name; every other global option is the command
line's own, listed here with why."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from asyncsports._http.config import CliOption, Settings
from asyncsports.cli.clients import client_kwargs
from asyncsports.cli.options import GLOBALS, SETTINGS, Globals, with_globals

CLI_ONLY = {
    "operator_id": "with the next four, makes Settings.streaming_credentials",
    "stream_secret": "signs the streaming credentials",
    "stream_ip": "signs the streaming credentials",
    "stream_auth": "a ready-made streaming token",
    "stream_timestamp": "goes with stream_auth",
    "query": "KEY=VALUE items, made into Settings.default_query",
    "record": "a Client keyword (the transport), not a setting of the requests",
    "record_overwrite": "goes with record",
    "emulator": "runs an embedded emulator instead of naming a service",
    "seed": "the emulator's",
    "emulator_scale": "the emulator's",
    "emulator_speed": "the emulator's",
    "json": "output",
    "wide": "output",
    "columns": "output",
    "verbose": "output",
}
"""Global options that are not Settings fields, each with why."""
GIVEN: dict[str, tuple[str, Any]] = {
    "base_url": ("http://base", "http://base"),
    "token": ("tok", "tok"),
    "vendor": ("someone", "someone"),
    "snooker_feed": ("otherfeed", "otherfeed"),
    "streaming_url": ("http://streaming", "http://streaming"),
    "live_url": ("ws://live", "ws://live"),
    "rate_limit": ("2.5", 2.5),
    "rate_limit_url": ("redis://127.0.0.1:1", "redis://127.0.0.1:1"),
    "rate_limit_key": ("key", "key"),
    "rate_limit_sharers": ("3", 3),
}
"""A value for each setting the command line takes, as typed and as read, none a default."""


def test_each_global_option_is_one_setting_or_the_command_lines_own() -> None:
    settings = [f.name for f in dataclasses.fields(Settings) if "cli" in f.metadata]
    assert list(SETTINGS) == settings
    assert set(GLOBALS) == set(settings) | set(CLI_ONLY)
    assert not set(settings) & set(CLI_ONLY)
    assert set(GIVEN) == set(settings)


@pytest.mark.parametrize("name", list(SETTINGS))
def test_a_settings_option_is_made_from_its_field(name: str) -> None:
    f = SETTINGS[name]
    cli: CliOption = f.metadata["cli"]
    kind, default, option = GLOBALS[name]
    expected = None if f.default is dataclasses.MISSING else f.default
    assert default == expected
    assert (kind is cli.kind) == (default is not None)  # optional where the default is None
    # In Annotated, typer takes a first str as the option's name, kept as its "default".
    assert (option.default, option.param_decls) == ("--" + name.replace("_", "-"), ())
    assert option.envvar == "ASYNCSPORTS_" + name.upper()
    assert (option.help, option.rich_help_panel, option.min) == (cli.help, cli.panel, cli.min)
    globals_default = {g.name: g.default for g in dataclasses.fields(Globals)}[name]
    assert globals_default == default


def _read(args: list[str], env: dict[str, str]) -> Globals:
    seen: list[Globals] = []

    def command(cfg: Globals) -> None:
        seen.append(cfg)

    app = typer.Typer()
    app.command()(with_globals(command))
    unset: dict[str, str | None] = {"ASYNCSPORTS_" + name.upper(): None for name in SETTINGS}
    result = CliRunner().invoke(app, args, env={**unset, **env})
    assert result.exit_code == 0, result.output
    return seen[0]


@pytest.mark.parametrize("name", list(SETTINGS))
def test_a_setting_is_read_from_its_option_and_its_variable(name: str) -> None:
    typed, value = GIVEN[name]
    flag, variable = "--" + name.replace("_", "-"), "ASYNCSPORTS_" + name.upper()
    assert getattr(_read([flag, typed], {}), name) == value
    assert getattr(_read([], {variable: typed}), name) == value
    assert getattr(_read([], {}), name) == GLOBALS[name][1]


def test_client_kwargs_hand_each_setting_on_by_its_name() -> None:
    cfg = Globals(**{name: value for name, (_, value) in GIVEN.items()})
    made = Settings(**client_kwargs(cfg))
    assert {name: getattr(made, name) for name in SETTINGS} == {
        name: value for name, (_, value) in GIVEN.items()
    }


def test_a_backfill_worker_process_is_given_every_setting() -> None:
    # backfill --workers N starts N processes of `asyncsports worker`: each reads the
    # settings the command was given (a --snooker-feed, a --rate-limit-sharers) from its
    # argv or its environment, argv first, as any command does.
    from asyncsports.cli.workers import _child_argv, _child_env

    cfg = Globals(**{name: value for name, (_, value) in GIVEN.items()})
    argv, env = _child_argv(cfg, "db", "j", 4, 8), _child_env(cfg, None)
    seen = {}
    for name in SETTINGS:
        flag = "--" + name.replace("_", "-")
        given = (
            argv[argv.index(flag) + 1] if flag in argv else env.get(f"ASYNCSPORTS_{name.upper()}")
        )
        seen[name] = given
    # The budget is one, shared in Redis: while Redis is away, each of the 4 keeps to
    # its share of the 3 sharers' budget.
    expected = {name: str(value) for name, (_, value) in GIVEN.items()}
    assert seen == {**expected, "rate_limit_sharers": "12"}


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ({"base_url": "https://"}, "--base-url: expected an http(s) URL such as https://host"),
        ({"base_url": "h.example"}, "--base-url: expected an http(s) URL such as https://host"),
        ({"streaming_url": "ftp://h"}, "--streaming-url: expected an http(s) URL"),
        ({"live_url": "wss://"}, "--live-url: expected a ws(s) URL such as wss://host"),
    ],
)
def test_an_address_is_checked_by_the_client_s_rule_under_its_option(
    given: dict[str, str], said: str
) -> None:
    """One rule for an address (the client's), said in the command line's words and
    exit code (3, configuration): the option's name, not the keyword's."""
    from asyncsports.cli.exits import ConfigError, exit_code

    cfg = Globals(**{"base_url": "https://h.example", "token": "t", **given})
    with pytest.raises(ConfigError) as caught:
        client_kwargs(cfg)
    assert str(caught.value).startswith(said) and exit_code(caught.value) == 3
    with pytest.raises(ValueError, match=re.escape(said.split(":", 1)[1])):
        Settings(**{"base_url": "https://h.example", **given})
