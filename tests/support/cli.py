"""The ``asyncsports`` command run as a user would: in a subprocess (``run``) or in this
process through Typer's runner (``invoke``), with none of the ``ASYNCSPORTS_*`` variables
of the shell that runs the tests."""

from __future__ import annotations

import os
import subprocess
import sys
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


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``asyncsports ARGS`` in a subprocess (``env``, or :func:`clean_env`), output captured."""
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, env=env or clean_env(), timeout=TIMEOUT
    )


def lines(proc: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    """The JSON lines of a run that succeeded."""
    assert proc.returncode == 0, proc.stderr
    return [msgspec.json.decode(line) for line in proc.stdout.splitlines()]


def invoke(*args: str, **env: str) -> Result:
    """``asyncsports ARGS`` in this process (stderr kept apart), with no ``ASYNCSPORTS_*``
    variable but those in ``env``."""
    from asyncsports.cli import app

    scrub: dict[str, str | None] = {k: None for k in os.environ if k.startswith(PREFIX)}
    return CliRunner().invoke(app, list(args), env={**scrub, **env}, prog_name="asyncsports")


async def ainvoke(*args: str, **env: str) -> Result:
    """:func:`invoke` in a worker thread: the command runs its own event loop."""
    return await anyio.to_thread.run_sync(lambda: invoke(*args, **env))
