"""``asyncsports --help`` answers at once: printing help imports neither the client
(aiohttp) nor the engines (store, backfill, mirror), only typer and the declarations;
a command imports what it needs when it runs."""

from __future__ import annotations

import subprocess
import sys

import pytest
from support import clean_env

HEAVY = (
    *("aiohttp", "asyncio", "anyio", "msgspec", "rich.console", "pydantic", "dlt"),
    "asyncsports.client",
    "asyncsports.models",
    *("asyncsports.store", "asyncsports.backfill", "asyncsports.sync"),
    "asyncsports.emulator._emulator",  # the server; its options (_options) are light
)
# Runs ARGV as the console script does, then names the heavy modules it imported.
PROBE = """
import sys
from asyncsports.__main__ import main
sys.argv[1:] = {argv!r}
try:
    main()
except SystemExit:
    pass
print("imported:", *sorted(m for m in {heavy!r} if m in sys.modules), file=sys.stderr)
"""


def _imported(*argv: str) -> tuple[str, list[str]]:
    code = PROBE.format(argv=list(argv), heavy=HEAVY)
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=clean_env(COLUMNS="80"),
        timeout=60,
    )
    last = proc.stderr.splitlines()[-1]
    assert last.startswith("imported:"), proc.stderr
    return proc.stdout, last.split()[1:]


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["backfill", "--help"]])
def test_help_and_version_import_nothing_heavy(argv: list[str]) -> None:
    out, imported = _imported(*argv)
    assert "asyncsports" in out  # it did answer
    # Newer typer parses the values of a command's parents through pydantic.
    allowed = {"pydantic"} if len(argv) > 1 else set()
    assert set(imported) <= allowed, imported


def test_a_command_that_runs_imports_the_client() -> None:
    # The probe can see an import: a command run does import the client.
    _, imported = _imported("--emulator", "--json", "fixtures", "basketball", "--limit", "1")
    assert "aiohttp" in imported and "asyncsports.client" in imported
