"""One exit-code rule for signals (issue 43, item 3), walked against every long-running
command in a real process: SIGINT and SIGTERM sent once it is ready (a line it prints,
or a server it reached), the exit code the table gives, within seconds, and no
traceback.

Before: ``changes --follow`` exited 0 at SIGTERM and ``actions --follow`` 143 while the
table said 143 for every command; both emulator entry points exited 0 at Ctrl-C.
``sync --once`` and ``changes`` (which end by themselves) were not walked: ``sync
--once`` took two minutes to end at a signal while its requests went unanswered (each
retried), and a second Ctrl-C while ``asyncsports-emulator`` shut down killed it by
SIGINT or printed a KeyboardInterrupt traceback.
"""

from __future__ import annotations

import contextlib
import signal
import socket
import sys
import threading
import time
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
    work (``on``: "out" or "err", the stream it comes on; "silent": no line, it is at
    work once it has reached a server that never answers)."""

    args: tuple[str, ...]
    ready: str
    on: str = "out"
    prog: tuple[str, ...] = tuple(CLI)


class Silent:
    """A port that takes connections and never says a word: a command that reaches it
    is still at work (waiting for its answer) whenever it is signalled, however fast
    the rest of its work would be."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.reached = threading.Event()
        self._held: list[socket.socket] = []
        threading.Thread(target=self._take, daemon=True).start()

    def _take(self) -> None:
        with contextlib.suppress(OSError):  # closed: the test is over
            while True:
                self._held.append(self.sock.accept()[0])
                self.reached.set()

    def close(self) -> None:
        self.sock.close()
        for conn in self._held:
            conn.close()


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
    "sync without --once": LongRunning(
        ("--emulator", "sync", "-s", "soccer", "--db", "DB", "--metrics-port", "0"),
        "metrics on ",
        on="err",
    ),
    # Two that end by themselves, signalled while they wait on a server that never
    # answers: a service's listing (each request retried for two minutes), a database.
    "sync --once": LongRunning(
        (
            "--base-url",
            "SILENT_HTTP",
            "--token",
            "x",
            "sync",
            "--once",
            "-s",
            "soccer",
            "--db",
            "DB",
        ),
        "",
        on="silent",
    ),
    "changes": LongRunning(
        ("changes", "--db", "SILENT_PG", "--connect-timeout", "600"), "", on="silent"
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
    # The names each row lists, whole: "changes" is not "changes --follow".
    listed = stopped.split("stopped by SIGTERM: ")[1].split(", ")
    but = rows[TERMINATED][1].split(": ")[0].removeprefix("every command but ").split(", ")
    if name in UNTIL_STOPPED:
        assert "SIGTERM" in done and name in listed, rows[0]
        return 0
    assert "SIGTERM" in rows[TERMINATED][0] and name not in but, rows[TERMINATED]
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
    silent = Silent()
    fill = {
        "LIVE": _live_fixture,
        "DB": lambda: str(mirror),
        "SILENT_HTTP": lambda: f"http://127.0.0.1:{silent.port}",
        "SILENT_PG": lambda: f"postgresql://u@127.0.0.1:{silent.port}/x",
    }
    if name.startswith("sync"):  # a database of its own: the mirror above stays as it is
        fill["DB"] = lambda: str(tmp_path / "s.sqlite")
    args = [fill[a]() if a in fill else a for a in spec.args]
    command = Command([*spec.prog, *args], out=True)
    try:
        if spec.on == "out":
            command.wait_for_out(spec.ready, TIMEOUT)
        elif spec.on == "err":
            command.wait_for(spec.ready, TIMEOUT)
        else:
            assert silent.reached.wait(TIMEOUT), "".join(command.drain())
        sent = time.monotonic()
        code = command.signal(sig, TIMEOUT)
        took = time.monotonic() - sent
    finally:
        command.stop()  # it never raises; a process already ended is left as it is
        silent.close()
    said = "".join(command.drain())
    assert code == _table_code(sig, name), said
    assert "Traceback" not in said, said
    # Within seconds, its work under way or not (sync --once took two minutes, waiting
    # for its requests' retries): a stop's grace (5 s), then what is left is cancelled.
    assert took < 15, (took, said)


@pytest.mark.slow  # a process per try
@pytest.mark.parametrize("name", ["emulator", "asyncsports-emulator"])
def test_a_second_ctrl_c_while_the_emulator_stops_changes_nothing(name: str) -> None:
    """asyncsports-emulator gave the signals back to Python once its loop ended: a second
    Ctrl-C while it shut down killed it by SIGINT (no exit code: -2) or raised
    KeyboardInterrupt in an atexit callback, a traceback. Nothing outside marks the
    steps of a shutdown, so the second signal comes at a spread of moments after the
    first (a fixed wait here is the thing tested, not a wait for a condition)."""
    spec = COMMANDS[name]
    for after in (0.0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05):
        command = Command([*spec.prog, *spec.args], out=True)
        try:
            command.wait_for_out(spec.ready, TIMEOUT)
            command.proc.send_signal(signal.SIGINT)
            time.sleep(after)
            code = command.signal(signal.SIGINT, TIMEOUT)
        finally:
            command.stop()
        said = "".join(command.drain())
        assert (after, code) == (after, INTERRUPTED), said
        assert "Traceback" not in said and "KeyboardInterrupt" not in said, said
