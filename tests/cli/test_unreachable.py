"""A PostgreSQL --db that cannot be reached fails within --connect-timeout, through the
real command: a closed port at once, a server that accepts and never answers at the
timeout; the message names the host and port, never the password, and no progress bar
is drawn before the database is open."""

from __future__ import annotations

import contextlib
import os
import pty
import re
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import CLI, clean_env
from support.servers import free_port

from asyncsports.cli.exits import code_for
from asyncsports.errors import SinkError

pytestmark = pytest.mark.slow  # the command in subprocesses, waiting out connect timeouts

UNUSABLE = code_for(SinkError)
SLACK = 6.0  # start-up of the interpreter and the emulator, on a busy machine


@pytest.fixture
def silent() -> Iterator[int]:
    """A port whose listener accepts connections and never says a word."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        held: list[socket.socket] = []
        stop = threading.Event()

        def accept() -> None:
            server.settimeout(0.1)
            while not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    held.append(server.accept()[0])

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        try:
            yield server.getsockname()[1]
        finally:
            stop.set()
            thread.join()
            for conn in held:
                conn.close()


def commands(url: str, tmp: Path) -> dict[str, list[str]]:
    return {
        "backfill": ["--emulator", "backfill", "--db", url],
        "backfill --workers": ["--emulator", "backfill", "--db", url, "--workers", "2"],
        "worker": ["--emulator", "worker", "--db", url, "--job", "j"],
        "jobs": ["jobs", "--db", url],
        "export": ["export", "--db", url, "--parquet", str(tmp / "out")],
    }


def _run(args: list[str], timeout: float) -> tuple[subprocess.CompletedProcess[str], float]:
    t0 = time.monotonic()
    proc = subprocess.run(
        [*CLI, *args], capture_output=True, text=True, env=clean_env(), timeout=timeout + 30
    )
    return proc, time.monotonic() - t0


@pytest.mark.parametrize("command", list(commands("", Path())))
def test_a_closed_port_fails_at_once_naming_host_and_port(command: str, tmp_path: Path) -> None:
    port = free_port()
    url = f"postgresql://u:s3cret@127.0.0.1:{port}/sports"
    args = [*commands(url, tmp_path)[command], "--connect-timeout", "2"]
    proc, seconds = _run(args, 2)
    assert proc.returncode == UNUSABLE, proc.stderr
    assert seconds < 2 + SLACK
    assert proc.stderr == (
        f"asyncsports: error: cannot reach the database at 127.0.0.1:{port}: connection "
        f"refused (postgresql://u:***@127.0.0.1:{port}/sports)\n"
    )


@pytest.mark.parametrize("command", list(commands("", Path())))
def test_a_server_that_never_answers_fails_at_the_connect_timeout(
    command: str, silent: int, tmp_path: Path
) -> None:
    url = f"postgresql://u:s3cret@127.0.0.1:{silent}/sports"
    args = [*commands(url, tmp_path)[command], "--connect-timeout", "2"]
    proc, seconds = _run(args, 2)
    assert proc.returncode == UNUSABLE, proc.stderr
    assert 2 <= seconds < 2 + SLACK
    assert f"cannot reach the database at 127.0.0.1:{silent}: no answer within 2 s" in (proc.stderr)
    assert "s3cret" not in proc.stderr and proc.stderr.count("\n") == 1


def test_the_default_connect_timeout_is_ten_seconds() -> None:
    proc = subprocess.run(
        [*CLI, "backfill", "--help"],
        capture_output=True,
        text=True,
        env=clean_env() | {"COLUMNS": "200"},
        timeout=60,
    )
    # The option's row: its line and the wrapped lines of its help, up to the next option.
    row = re.search(r"^  --connect-timeout .*?(?=^  -)", proc.stdout, re.MULTILINE | re.DOTALL)
    assert row is not None and "[default: 10.0;" in " ".join(row.group().split())


def _on_a_terminal(args: list[str]) -> tuple[int, str]:
    """Run the command with stderr on a pseudo-terminal (progress bars are drawn only
    there); its exit code and what it drew."""
    main, other = pty.openpty()
    proc = subprocess.Popen(
        [*CLI, *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=other,
        env=clean_env() | {"COLUMNS": "120"},
    )
    os.close(other)
    drawn = b""
    # A command that hangs is killed: the terminal then ends and the test fails in 60 s.
    killer = threading.Timer(60, proc.kill)
    killer.start()
    try:
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # EIO: every writer of the terminal is gone
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        killer.cancel()
        os.close(main)
    assert proc.stdout is not None
    proc.stdout.read()
    proc.stdout.close()
    return proc.wait(60), drawn.decode(errors="replace")


def test_no_progress_bar_is_drawn_before_the_database_is_open(tmp_path: Path) -> None:
    url = f"postgresql://u:s3cret@127.0.0.1:{free_port()}/sports"
    code, drawn = _on_a_terminal(["--emulator", "backfill", "--db", url])
    assert code == UNUSABLE
    assert "cannot reach the database" in drawn
    assert "fixtures" not in drawn and "━" not in drawn
    # The same terminal shows them for a database that opens.
    args = [
        "--emulator",
        "--emulator-scale",
        "fixtures_per_season=2",
        "backfill",
        "--db",
        str(tmp_path / "ok.sqlite"),
        "--sports",
        "basketball",
    ]
    code, drawn = _on_a_terminal(args)
    assert code == 0 and "fixtures" in drawn and "statistics" in drawn
