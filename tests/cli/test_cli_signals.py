"""One exit-code rule for signals (issue 43, item 3), walked against every long-running
command in a real process: SIGINT and SIGTERM sent once it is ready (a line it prints),
the exit code the table gives, and no traceback.

Before: ``changes --follow`` exited 0 at SIGTERM and ``actions --follow`` 143 while the
table said 143 for every command; both emulator entry points exited 0 at Ctrl-C.
"""

from __future__ import annotations

import signal
import sys
from dataclasses import dataclass
from pathlib import Path

import msgspec
import pytest
from support import CLI, TIMEOUT, invoke, run
from support.procs import Command

from asyncsports.cli.exits import (
    INTERRUPTED,
    TERMINATED,
    UNTIL_STOPPED,
    exit_code_table,
)


@dataclass(frozen=True)
class LongRunning:
    """A command that runs until it ends or is stopped, and the line that says it is at
    work (``on``: "out" or "err", the stream it comes on)."""

    args: tuple[str, ...]
    ready: str
    on: str = "out"
    prog: tuple[str, ...] = tuple(CLI)


def _live_fixture() -> str:
    found = invoke(
        "--emulator", "fixtures", "basketball", "--status", "live", "--limit", "1", "--json"
    )
    return str(msgspec.json.decode(found.stdout.splitlines()[0])["id"])


# --emulator-speed 0: a followed fixture stays live (at 600x it ends within seconds).
STILL = ("--emulator", "--emulator-speed", "0")
COMMANDS: dict[str, LongRunning] = {
    "actions --follow": LongRunning((*STILL, "actions", "basketball", "LIVE", "-f"), '"change"'),
    "statistics --follow": LongRunning(
        (*STILL, "statistics", "basketball", "LIVE", "-f"), '"change"'
    ),
    "events --watch": LongRunning(("--emulator", "events", "--watch"), '"change"'),
    "changes --follow": LongRunning(("changes", "--db", "DB", "--follow"), '"seq"'),
    "sync": LongRunning(
        ("--emulator", "sync", "-s", "soccer", "--db", "DB", "--metrics-port", "0"),
        "metrics on ",
        on="err",
    ),
    "emulator": LongRunning(("emulator", "--port", "0", "--frozen"), "Try:"),
    "asyncsports-emulator": LongRunning(
        ("--port", "0", "--frozen"), "Try:", prog=(sys.executable, "-m", "asyncsports.emulator")
    ),
}


def _table_code(sig: signal.Signals, name: str) -> int:
    """The code the table gives ``name`` (a command) stopped by ``sig``."""
    rows = {code: (text, used) for code, text, used in exit_code_table()}
    # The emulator's two entry points serve alike (the table is asyncsports').
    name = name.removeprefix("asyncsports-")
    if sig == signal.SIGINT:
        assert "Ctrl-C" in rows[INTERRUPTED][0] and rows[INTERRUPTED][1] == "every command"
        return INTERRUPTED
    done, stopped = rows[0][0], rows[0][1]
    if name in UNTIL_STOPPED:
        assert "SIGTERM" in done and name in stopped, rows[0]
        return 0
    assert "SIGTERM" in rows[TERMINATED][0] and name not in rows[TERMINATED][1].split(": ")[0]
    return TERMINATED


def test_every_command_that_runs_until_stopped_is_walked() -> None:
    assert set(UNTIL_STOPPED) <= set(COMMANDS)


@pytest.fixture(scope="module")
def mirror(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A mirror database with changes in it (changes --follow prints them first)."""
    db = tmp_path_factory.mktemp("mirror") / "m.sqlite"
    done = run("--emulator", "sync", "--once", "-s", "soccer", "--db", str(db))
    assert done.returncode == 0, done.stderr
    return db


@pytest.mark.slow  # a process per command and signal
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda s: s.name)
@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_signal_ends_each_command_with_the_code_of_the_table(
    name: str, sig: signal.Signals, mirror: Path, tmp_path: Path
) -> None:
    spec = COMMANDS[name]
    fill = {"LIVE": _live_fixture, "DB": lambda: str(mirror)}
    if name == "sync":  # a database of its own: the mirror above stays as it is
        fill["DB"] = lambda: str(tmp_path / "s.sqlite")
    args = [fill[a]() if a in fill else a for a in spec.args]
    command = Command([*spec.prog, *args], out=True)
    try:
        if spec.on == "out":
            command.wait_for_out(spec.ready, TIMEOUT)
        else:
            command.wait_for(spec.ready, TIMEOUT)
        code = command.signal(sig, TIMEOUT)
    finally:
        command.stop()  # it never raises; a process already ended is left as it is
    said = "".join(command.drain())
    assert code == _table_code(sig, name), said
    assert "Traceback" not in said, said
