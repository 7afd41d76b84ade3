"""``asyncsports emulator``: a typer command like the rest, with the options of
``asyncsports-emulator`` (one table, ``FLAGS``), read the same way."""

from __future__ import annotations

import argparse
import signal
import socket
import subprocess

import pytest
from support import CLI, TIMEOUT, clean_env, invoke

from asyncsports.cli.exits import INTERRUPTED
from asyncsports.emulator import __main__ as standalone
from asyncsports.emulator._options import DEFAULT_NOW, FLAGS

ARGV = [
    "--port",
    "0",
    "--seed",
    "3",
    "--now",
    "2026-01-02T03:04",
    "--live-dialect",
    "vendor",
    "--frozen",
    "--rate-limit",
    "7",
    "--latency",
    "0.5",
    "--replay",
    "match.jsonl",
]


def test_both_command_lines_read_the_same_options(monkeypatch: pytest.MonkeyPatch) -> None:
    served: list[argparse.Namespace] = []

    async def serving(args: argparse.Namespace, stop: object, prefix: str = "") -> int:
        served.append(args)
        return 0

    monkeypatch.setattr(standalone, "serving", serving)
    for argv in (ARGV, []):
        result = invoke("emulator", *argv)
        assert result.exit_code == 0, result.output
        assert served.pop() == standalone._parser().parse_args(argv)
    assert standalone._parser().parse_args([]).now == DEFAULT_NOW


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--now", "yesterday"], "--now"),
        (["--live-dialect", "klingon"], "--live-dialect"),
        (["--port", "x"], "--port"),
    ],
)
def test_a_bad_value_is_a_usage_error_naming_the_option(argv: list[str], said: str) -> None:
    result = invoke("emulator", *argv)
    assert result.exit_code == 2 and said in result.output


def test_every_option_has_help() -> None:
    assert all(flag.help for flag in FLAGS)
    text = " ".join(invoke("emulator", "--help").output.split())
    assert "usage: asyncsports-emulator" not in text and "Usage: asyncsports emulator" in text
    for flag in FLAGS:
        assert f"{flag.name} " in text and flag.help.split()[0] in text


def test_it_serves_until_ctrl_c_and_exits_130() -> None:
    proc = subprocess.Popen(
        [*CLI, "emulator", "--port", "0", "--seed", "3", "--frozen"],
        stdout=subprocess.PIPE,
        text=True,
        env=clean_env(),
    )
    try:
        assert proc.stdout is not None
        banner = []
        for line in proc.stdout:
            banner.append(line)
            if line.startswith("Try:"):
                break
        assert banner[0] == "asyncsports emulator, seed 3\n"
        assert any(line.split()[:1] == ["clock"] and "(frozen)" in line for line in banner)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            code = proc.wait(timeout=TIMEOUT)
        finally:
            if proc.poll() is None:  # it serves for ever: never left behind
                proc.kill()
                proc.wait()
    assert code == INTERRUPTED  # as every command (it exited 0 before)


@pytest.mark.parametrize("option", ["--port", "--live-port"])
def test_a_busy_port_is_a_usage_error_naming_its_option(option: str) -> None:
    """It exited 1, saying "asyncsports-emulator: [Errno 98] error while attempting to
    bind ...": the other command's name, and no option."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = str(held.getsockname()[1])
        argv = ["--port", port] if option == "--port" else ["--port", "0", "--live-port", port]
        result = invoke("emulator", *argv)
    assert result.exit_code == 2, result.output
    first, *rest = result.stderr.splitlines()
    assert first.startswith(f"asyncsports: error: Invalid value for '{option}': cannot listen")
    assert "address already in use" in first and "asyncsports-emulator" not in result.stderr
    assert rest == ["Try 'asyncsports emulator --help' for help."]
