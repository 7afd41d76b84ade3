"""The ``asyncsports`` command run as a user would: in a subprocess (``run``) or in this
process through Typer's runner (``invoke``), with none of the ``ASYNCSPORTS_*`` variables
of the shell that runs the tests."""

from __future__ import annotations

import contextlib
import logging
import os
import pty
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import anyio
import msgspec
from typer.testing import CliRunner, Result

CLI = [sys.executable, "-m", "asyncsports.cli"]
TIMEOUT = 60
PREFIX = "ASYNCSPORTS_"


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without ``ASYNCSPORTS_*`` variables, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(PREFIX)}
    env.update(extra)
    return env


def project_env(**extra: str) -> dict[str, str]:
    """This process's environment as a pytest run in a project of its own gets it: without
    ``PYTEST_ADDOPTS`` (CI's workers, coverage and durations are this suite's options, and
    under xdist a probe's printed line would stay in a worker), plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    env.update(extra)
    return env


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``asyncsports ARGS`` in a subprocess (``env``, or :func:`clean_env`), output captured."""
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, env=env or clean_env(), timeout=TIMEOUT
    )


def run_tty(*args: str, env: dict[str, str]) -> tuple[int, str]:
    """Run with stdout on a pseudo-terminal (as in a shell); the exit code and the output
    (its escape sequences taken out, lines ending in "\\n")."""
    master, slave = pty.openpty()
    chunks: list[bytes] = []

    def read() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO once the child has gone and the slave is closed
                return
            if not data:
                return
            chunks.append(data)

    # A daemon, the descriptors closed whatever happens: a reader left blocked (the
    # command timed out) must not hold pytest's exit.
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        proc = subprocess.run(
            [*CLI, *args], stdout=slave, stderr=subprocess.PIPE, env=env, timeout=TIMEOUT
        )
    finally:
        os.close(slave)
        reader.join(5)
        os.close(master)
    text = b"".join(chunks).decode().replace("\r\n", "\n")
    return proc.returncode, re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", text)


def lines(proc: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    """The JSON lines of a run that succeeded."""
    assert proc.returncode == 0, proc.stderr
    return [msgspec.json.decode(line) for line in proc.stdout.splitlines()]


def invoke(*args: str, **env: str) -> Result:
    """``asyncsports ARGS`` in this process (stderr kept apart), with no ``ASYNCSPORTS_*``
    variable but those in ``env``."""
    from asyncsports.cli import app

    scrub: dict[str, str | None] = {k: None for k in os.environ if k.startswith(PREFIX)}
    with _loggers_kept():
        return CliRunner().invoke(app, list(args), env={**scrub, **env}, prog_name="asyncsports")


@contextlib.contextmanager
def _loggers_kept() -> Iterator[None]:
    """The ``asyncsports.*`` loggers below the package's as they were, after a command that
    set one up for its own output (``sync`` stops its logger's propagation: a later test's
    ``caplog`` would see nothing of it). The package's own logger is set up once a process
    by design (``test_logging_is_set_up_once_per_process``), so it is left as it is."""

    def ours(name: str) -> bool:
        return name.startswith("asyncsports.")

    manager = logging.Logger.manager
    kept = {
        n: (lg.handlers[:], lg.level, lg.propagate)
        for n in list(manager.loggerDict)
        if ours(n)
        for lg in [logging.getLogger(n)]
    }
    try:
        yield
    finally:
        for name, obj in list(manager.loggerDict.items()):
            if ours(name) and isinstance(obj, logging.Logger):
                handlers, level, obj.propagate = kept.get(name, ([], logging.NOTSET, True))
                obj.handlers[:] = handlers
                obj.setLevel(level)  # and the loggers' cache of levels cleared


async def ainvoke(*args: str, **env: str) -> Result:
    """:func:`invoke` in a worker thread: the command runs its own event loop."""
    return await anyio.to_thread.run_sync(lambda: invoke(*args, **env))


@contextlib.contextmanager
def serving_metrics(*args: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``asyncsports ARGS`` (a ``sync --metrics-port 0``) in a subprocess, with the base
    URL of its metrics server, read from the line it says first on stderr; killed on the
    way out if it still runs (a failing test ends within its own bound)."""
    proc = subprocess.Popen(
        [*CLI, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=clean_env()
    )
    assert proc.stderr is not None
    try:
        # A command that never says it (hung before its server) is killed at 60 s, which
        # ends the read: the test fails in its bound rather than waiting for ever.
        killer = threading.Timer(60, proc.kill)
        killer.start()
        try:
            line = proc.stderr.readline()
        finally:
            killer.cancel()
        assert "metrics on http://127.0.0.1:" in line, f"not serving metrics after 60 s: {line!r}"
        yield proc, line.split("metrics on ")[1].strip().removesuffix("/metrics")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
